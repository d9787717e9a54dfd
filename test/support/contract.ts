import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * Holds every response the tests receive to openapi.yaml: the status must be documented for
 * the operation, the media type must be the documented one, and the body must match its schema
 * (JSON Schema 2020-12, checked by ajv).
 */

interface MediaType {
  schema?: unknown;
}
interface Response {
  content?: Record<string, MediaType>;
  $ref?: string;
}
interface Operation {
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Partial<Record<string, Operation>>>;
  components: { schemas: Record<string, unknown>; responses: Record<string, Response> };
}

export const OPENAPI_PATH = join(PROJECT_ROOT, 'openapi.yaml');

/** The document's own refs, pointed at the copy of its schemas registered with ajv. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string'
        ? inner.replace('#/components/schemas/', 'openapi#/$defs/')
        : rewriteRefs(inner),
    ]),
  );
}

export interface ReceivedResponse {
  readonly status: number;
  readonly contentType: string | null;
  readonly text: string;
}

export class Contract {
  readonly document: Document;
  readonly #ajv = new Ajv2020({ strict: true, allErrors: true });
  readonly #validators = new Map<unknown, ValidateFunction>();

  constructor(path = OPENAPI_PATH) {
    this.document = parse(readFileSync(path, 'utf8')) as Document;
    // OpenAPI's own `example` keyword is not JSON Schema; the schemas here use `examples`.
    this.#ajv.addSchema({ $id: 'openapi', $defs: rewriteRefs(this.document.components.schemas) });
  }

  /** The documented path template a request path falls under, if any. */
  template(path: string): string | undefined {
    const [pathname = ''] = path.split('?');
    return Object.keys(this.document.paths).find((template) => {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      return pattern.test(pathname);
    });
  }

  /** Throws, saying what is wrong, when the response is not one openapi.yaml documents. */
  check(method: string, path: string, response: ReceivedResponse): void {
    const where = `${method} ${path} → ${response.status}`;
    const template = this.template(path);
    const operation = template === undefined ? undefined : this.document.paths[template]?.[method.toLowerCase()];
    if (operation === undefined) {
      // Not an operation of the service: the gateway answers, with a CORS preflight or a 404.
      if (method === 'OPTIONS' || response.status === 404) return;
      throw new Error(`${where}: no such operation in openapi.yaml`);
    }
    let documented = operation.responses[String(response.status)];
    if (documented?.$ref !== undefined) {
      documented = this.document.components.responses[documented.$ref.split('/').pop() ?? ''];
    }
    if (documented === undefined) throw new Error(`${where}: status not documented in openapi.yaml`);
    const mediaType = (response.contentType ?? '').split(';')[0]?.trim() ?? '';
    const media = documented.content?.[mediaType];
    if (media === undefined) {
      const expected = Object.keys(documented.content ?? {}).join(', ');
      throw new Error(`${where}: media type "${mediaType}" not documented (expected ${expected})`);
    }
    const body: unknown = mediaType === 'application/json' ? JSON.parse(response.text) : response.text;
    const validate = this.#validator(media.schema);
    if (!validate(body)) {
      throw new Error(
        `${where}: body breaks the schema: ${this.#ajv.errorsText(validate.errors)}\n${response.text.slice(0, 500)}`,
      );
    }
  }

  #validator(schema: unknown): ValidateFunction {
    let validate = this.#validators.get(schema);
    if (validate === undefined) {
      validate = this.#ajv.compile(rewriteRefs(schema) as object);
      this.#validators.set(schema, validate);
    }
    return validate;
  }
}
