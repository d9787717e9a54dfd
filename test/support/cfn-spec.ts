import { loadAwsServiceSpecSync } from '@aws-cdk/aws-service-spec';
import type { PropertyType, Resource as SpecResource, SpecDatabase } from '@aws-cdk/service-spec-types';
import type { Template } from '../../harness/package';

/**
 * Checks a CloudFormation template against AWS's own description of every resource type (the
 * CloudFormation registry schemas, as @aws-cdk/aws-service-spec ships them): each resource's type
 * exists, each property it sets exists and has a value of its type, its required properties are
 * set, and every Ref and Fn::GetAtt names a resource (and an attribute) the template has.
 * Values computed by an intrinsic function are taken as CloudFormation would resolve them.
 */

let database: SpecDatabase | undefined;
const spec = (): SpecDatabase => (database ??= loadAwsServiceSpecSync());

/** The keys a resource may have beside Type and Properties. */
const RESOURCE_KEYS = new Set([
  'Type',
  'Properties',
  'DependsOn',
  'DeletionPolicy',
  'UpdateReplacePolicy',
  'Condition',
  'Metadata',
  'CreationPolicy',
  'UpdatePolicy',
]);

const INTRINSICS = new Set([
  'Ref',
  'Fn::GetAtt',
  'Fn::Join',
  'Fn::Sub',
  'Fn::If',
  'Fn::Select',
  'Fn::Split',
  'Fn::ImportValue',
  'Fn::GetAZs',
  'Fn::Base64',
  'Fn::FindInMap',
  'Fn::Cidr',
  'Fn::ToJsonString',
  'Fn::Length',
]);

type Json = unknown;

function isIntrinsic(value: Json): value is Record<string, Json> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && INTRINSICS.has(keys[0] ?? '');
}

function specOf(type: string): SpecResource | undefined {
  const found = spec().lookup('resource', 'cloudFormationType', 'equals', type);
  return found.length === 1 ? found.only() : undefined;
}

/** Every problem found in the template, each as `<LogicalId>.<path>: <what is wrong>`. */
export function specProblems(template: Template): string[] {
  const problems: string[] = [];
  const logicalIds = new Set(Object.keys(template.Resources));
  for (const [id, resource] of Object.entries(template.Resources)) {
    for (const key of Object.keys(resource)) {
      if (!RESOURCE_KEYS.has(key)) problems.push(`${id}: "${key}" is not a key of a resource`);
    }
    const resourceSpec = specOf(resource.Type);
    if (resourceSpec === undefined) {
      problems.push(`${id}: ${resource.Type} is not a CloudFormation resource type`);
      continue;
    }
    checkObject(resourceSpec.properties, resource.Properties, `${id}.Properties`, problems);
  }
  checkReferences(template, logicalIds, problems);
  return problems;
}

function checkObject(
  properties: Record<string, { type: PropertyType; required?: boolean }>,
  value: Json,
  path: string,
  problems: string[],
): void {
  if (isIntrinsic(value)) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${path}: expected an object, found ${JSON.stringify(value)}`);
    return;
  }
  const given = value as Record<string, Json>;
  for (const [name, inner] of Object.entries(given)) {
    const property = properties[name];
    if (property === undefined) problems.push(`${path}.${name}: no such property`);
    else checkValue(property.type, inner, `${path}.${name}`, problems);
  }
  for (const [name, property] of Object.entries(properties)) {
    if (property.required === true && !(name in given)) problems.push(`${path}.${name}: required, and missing`);
  }
}

/** True when the value has the type; problems inside objects are recorded, not returned. */
function checkValue(type: PropertyType, value: Json, path: string, problems: string[]): void {
  if (isIntrinsic(value)) return;
  const mismatch = () => problems.push(`${path}: expected ${describe(type)}, found ${JSON.stringify(value)}`);
  switch (type.type) {
    case 'string':
    case 'date-time':
      if (typeof value !== 'string' && typeof value !== 'number') mismatch();
      return;
    case 'integer':
      if (!Number.isInteger(typeof value === 'string' ? Number(value) : value)) mismatch();
      return;
    case 'number':
      if (!Number.isFinite(typeof value === 'string' ? Number(value) : value)) mismatch();
      return;
    case 'boolean':
      if (typeof value !== 'boolean' && value !== 'true' && value !== 'false') mismatch();
      return;
    case 'json':
      if (typeof value !== 'object' && typeof value !== 'string') mismatch();
      return;
    case 'null':
      if (value !== null) mismatch();
      return;
    case 'tag':
      checkObject(
        { Key: { type: { type: 'string' }, required: true }, Value: { type: { type: 'string' }, required: true } },
        value,
        path,
        problems,
      );
      return;
    case 'ref': {
      const definition = spec().get('typeDefinition', type.reference.$ref);
      checkObject(definition.properties, value, path, problems);
      return;
    }
    case 'array':
      if (!Array.isArray(value)) mismatch();
      else
        value.forEach((element, i) => {
          checkValue(type.element, element, `${path}[${i}]`, problems);
        });
      return;
    case 'map':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) mismatch();
      else
        for (const [key, element] of Object.entries(value))
          checkValue(type.element, element, `${path}.${key}`, problems);
      return;
    case 'union': {
      // The value must fit one of the types; what is recorded is the nearest miss.
      const attempts = type.types.map((option) => {
        const found: string[] = [];
        checkValue(option, value, path, found);
        return found;
      });
      if (!attempts.some((found) => found.length === 0)) {
        problems.push(...(attempts.sort((a, b) => a.length - b.length)[0] ?? []));
      }
      return;
    }
  }
}

function describe(type: PropertyType): string {
  switch (type.type) {
    case 'array':
    case 'map':
      return `${type.type} of ${describe(type.element)}`;
    case 'union':
      return type.types.map(describe).join(' or ');
    case 'ref':
      return `an object (${spec().get('typeDefinition', type.reference.$ref).name})`;
    default:
      return type.type;
  }
}

/** Every Ref and Fn::GetAtt must name what the template (or CloudFormation) has. */
function checkReferences(template: Template, logicalIds: Set<string>, problems: string[]): void {
  const parameters = new Set(Object.keys((template.Parameters as Record<string, unknown> | undefined) ?? {}));
  const visit = (value: Json, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((element, i) => {
        visit(element, `${path}[${i}]`);
      });
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const object = value as Record<string, Json>;
    if (typeof object.Ref === 'string') {
      const target = object.Ref;
      if (!target.startsWith('AWS::') && !logicalIds.has(target) && !parameters.has(target)) {
        problems.push(`${path}: Ref to "${target}", which the template does not have`);
      }
    }
    const getAtt = object['Fn::GetAtt'];
    if (Array.isArray(getAtt)) {
      const [target, attribute] = getAtt as [string, string];
      const resource = template.Resources[target];
      if (resource === undefined) problems.push(`${path}: Fn::GetAtt of "${target}", which the template does not have`);
      else if (!(attribute in (specOf(resource.Type)?.attributes ?? {}))) {
        problems.push(`${path}: ${resource.Type} has no attribute "${attribute}"`);
      }
    }
    for (const [key, inner] of Object.entries(object)) visit(inner, `${path}.${key}`);
  };
  visit(template.Resources, 'Resources');
  visit(template.Outputs ?? {}, 'Outputs');
}
