import { beforeAll, describe, expect, it } from '@jest/globals';
import { servicePackage, type Template } from '../../harness/package';
import { covers, guardExceptions, guardFindings, type Finding } from '../support/cfn-guard';
import { specProblems } from '../support/cfn-spec';

/**
 * The packaged stacks of both stores, checked as AWS would check them: every resource against
 * AWS's own CloudFormation resource specification, and the whole against AWS Control Tower's
 * proactive controls with cfn-guard, every finding fixed or kept for a reason in
 * cfn-guard-exceptions.yaml. Each check also has to catch a fault planted in a template.
 */

/** One `serverless package` takes about 5 s idle; cfn-guard runs 200-odd rules files in about 1 s. */
const PACKAGE_WITHIN_MS = 60_000;

const STACKS = {
  memory: ['store=memory'],
  // A bare `serverless package`, as a bare `serverless deploy` builds it.
  dynamodb: [],
} as const;
type Stack = keyof typeof STACKS;

const templates: Partial<Record<Stack, Template>> = {};
const findings: Partial<Record<Stack, Finding[]>> = {};

beforeAll(async () => {
  for (const stack of Object.keys(STACKS) as Stack[]) {
    const template = (await servicePackage([...STACKS[stack]])).template;
    templates[stack] = template;
    findings[stack] = await guardFindings(template);
  }
}, 3 * PACKAGE_WITHIN_MS);

function template(stack: Stack): Template {
  const found = templates[stack];
  if (found === undefined) throw new Error(`no template for the ${stack} store`);
  return found;
}

/** A copy of the stack's template with one change made to it. */
function planted(stack: Stack, change: (copy: Template) => void): Template {
  const copy = structuredClone(template(stack));
  change(copy);
  return copy;
}

const uncovered = (found: Finding[]) =>
  found.filter((finding) => !guardExceptions().some((exception) => covers(exception, finding)));

/**
 * The functions with no cap on their concurrency (no ReservedConcurrentExecutions): what cfn-nag's
 * W92 and Checkov's CKV_AWS_115 flag, and what Control Tower's rules here do not check. Uncapped, a
 * flood holds as many containers as the account has, and the queue of POSTs carries fewer past 64
 * (docs/scale.md).
 */
const uncapped = (checked: Template) =>
  Object.entries(checked.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
    .filter(([, resource]) => resource.Properties.ReservedConcurrentExecutions === undefined)
    .map(([id]) => id);

describe.each(Object.keys(STACKS) as Stack[])('the %s store’s stack', (stack) => {
  it('matches AWS’s CloudFormation resource specification, resource by resource', () => {
    expect(specProblems(template(stack))).toEqual([]);
  });

  it('breaks no Control Tower control that cfn-guard-exceptions.yaml does not list, with its reason', () => {
    expect(uncovered(findings[stack] ?? [])).toEqual([]);
  });

  it('caps every function’s concurrency, createTodo’s at what the scale model found carries the most POSTs', () => {
    expect(uncapped(template(stack))).toEqual([]);
    expect(template(stack).Resources.CreateTodoLambdaFunction?.Properties.ReservedConcurrentExecutions).toBe(64);
    // GET /todos: each new container reads the whole list once (docs/scale.md), so fewer of them than the reads by id.
    expect(template(stack).Resources.ListTodosLambdaFunction?.Properties.ReservedConcurrentExecutions).toBe(64);
    expect(template(stack).Resources.ListTodosLambdaFunction?.Properties.Environment).toMatchObject({
      Variables: { TODO_LIST_VERSION: 'read' },
    });
  });
});

describe('cfn-guard-exceptions.yaml', () => {
  it('gives every entry a control and a reason, and lists no finding that no longer happens', () => {
    const all = [...(findings.memory ?? []), ...(findings.dynamodb ?? [])];
    for (const exception of guardExceptions()) {
      expect(exception).toEqual({
        control: expect.stringMatching(/^CT\.[A-Z0-9]+\.PR\.\d+$/),
        rule: expect.any(String),
        resources: expect.arrayContaining([expect.any(String)]),
        // A sentence or more: why the finding stays.
        reason: expect.stringMatching(/^\S.{40,}/),
      });
      expect({ exception: exception.rule, covers: all.some((finding) => covers(exception, finding)) }).toEqual({
        exception: exception.rule,
        covers: true,
      });
      expect(all.filter((finding) => covers(exception, finding)).map((finding) => finding.control)).toEqual(
        expect.arrayContaining([exception.control]),
      );
    }
  });
});

describe('planted faults', () => {
  it.each([
    [
      'a misspelled property',
      (copy: Template) => {
        const fn = copy.Resources.GetTodoLambdaFunction;
        if (fn) fn.Properties.TracingConfg = { Mode: 'Active' };
      },
      'GetTodoLambdaFunction.Properties.TracingConfg: no such property',
    ],
    [
      'a value of the wrong type',
      (copy: Template) => {
        const fn = copy.Resources.GetTodoLambdaFunction;
        if (fn) fn.Properties.MemorySize = 'plenty';
      },
      'GetTodoLambdaFunction.Properties.MemorySize: expected integer, found "plenty"',
    ],
    [
      'a required property left out',
      (copy: Template) => {
        const fn = copy.Resources.GetTodoLambdaFunction;
        if (fn) delete fn.Properties.Role;
      },
      'GetTodoLambdaFunction.Properties.Role: required, and missing',
    ],
    [
      'an attribute the resource does not have',
      (copy: Template) => {
        const stage = copy.Resources.HttpApiStage;
        if (stage) stage.Properties.ApiId = { 'Fn::GetAtt': ['HttpApi', 'Endpoint'] };
      },
      'AWS::ApiGatewayV2::Api has no attribute "Endpoint"',
    ],
    [
      'a resource type that does not exist',
      (copy: Template) => {
        const table = copy.Resources.TodosTable;
        if (table) table.Type = 'AWS::DynamoDB::Tables';
      },
      'TodosTable: AWS::DynamoDB::Tables is not a CloudFormation resource type',
    ],
  ])('the specification check catches %s', (_fault, change, problem) => {
    expect(specProblems(planted('dynamodb', change))).toContainEqual(expect.stringContaining(problem));
  });

  it('the concurrency check catches a function without a cap', () => {
    const copy = planted('dynamodb', (changed) => {
      delete changed.Resources.GetTodoLambdaFunction?.Properties.ReservedConcurrentExecutions;
    });
    expect(uncapped(copy)).toEqual(['GetTodoLambdaFunction']);
  });

  it.each([
    [
      'a stage without access logs',
      (copy: Template) => {
        const stage = copy.Resources.HttpApiStage;
        if (stage) delete stage.Properties.AccessLogSettings;
      },
      { control: 'CT.APIGATEWAY.PR.4', resource: 'HttpApiStage' },
    ],
    [
      'a table without encryption under a KMS key',
      (copy: Template) => {
        const table = copy.Resources.TodosTable;
        if (table) delete table.Properties.SSESpecification;
      },
      { control: 'CT.DYNAMODB.PR.2', resource: 'TodosTable' },
    ],
    [
      'a deployment bucket open to public access settings',
      (copy: Template) => {
        const bucket = copy.Resources.ServerlessDeploymentBucket;
        if (bucket) delete bucket.Properties.PublicAccessBlockConfiguration;
      },
      { control: 'CT.S3.PR.1', resource: 'ServerlessDeploymentBucket' },
    ],
  ])(
    'the policy check catches %s',
    async (_fault, change, finding) => {
      expect(uncovered(await guardFindings(planted('dynamodb', change)))).toEqual([expect.objectContaining(finding)]);
    },
    PACKAGE_WITHIN_MS,
  );
});
