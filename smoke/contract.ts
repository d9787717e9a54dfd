import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { parse } from 'yaml';

/**
 * Holds an answer to openapi.yaml: the status must be documented for the operation, the media
 * type must be the documented one, the body must match its schema, and each documented header
 * must be there when the document requires it and match its schema when it is there (JSON Schema
 * 2020-12, checked by ajv). Headers the document does not name (the gateway's, CORS) are not its
 * business, as a validating proxy such as Prism sees it too.
 *
 * `npm run smoke` checks a stage with it, and the tests check every answer they get with it.
 */

interface MediaType {
  schema?: unknown;
}
interface Header {
  schema?: unknown;
  required?: boolean;
  $ref?: string;
}
interface Response {
  content?: Record<string, MediaType>;
  headers?: Record<string, Header>;
  $ref?: string;
}
interface Operation {
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Partial<Record<string, Operation>>>;
  components: {
    schemas: Record<string, unknown>;
    responses: Record<string, Response>;
    headers?: Record<string, Header>;
  };
}

export const OPENAPI_PATH = resolve(__dirname, '../openapi.yaml');

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

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

/** The last part of a local ref: `#/components/responses/TodoNotFound` is `TodoNotFound`. */
function refName(ref: string): string {
  return ref.split('/').pop() ?? '';
}

/**
 * A header's value as its schema reads it: OpenAPI's `simple` style gives a number-typed header
 * (Retry-After) as its digits, which must be that number, not a string.
 */
function headerValue(raw: string, schema: unknown): unknown {
  const type = typeof schema === 'object' && schema !== null && 'type' in schema ? schema.type : undefined;
  const numeric = type === 'integer' || type === 'number';
  return numeric && /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
}

export interface ReceivedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** One documented answer: `GET /todos/{id}` may answer 404. */
export interface DocumentedStatus {
  readonly method: string;
  readonly template: string;
  readonly status: number;
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

  /** Every status of every operation, as the document lists them. */
  statuses(): DocumentedStatus[] {
    return Object.entries(this.document.paths).flatMap(([template, item]) =>
      METHODS.flatMap((method) =>
        Object.keys(item[method]?.responses ?? {}).map((status) => ({
          method: method.toUpperCase(),
          template,
          status: Number(status),
        })),
      ),
    );
  }

  /**
   * Throws, saying what is wrong, when the response is not one openapi.yaml documents; returns
   * the documented answer it is, or undefined for the gateway's own (a preflight, an unknown route).
   */
  check(method: string, path: string, response: ReceivedResponse): DocumentedStatus | undefined {
    const where = `${method} ${path} → ${response.status}`;
    const template = this.template(path);
    const operation = template === undefined ? undefined : this.document.paths[template]?.[method.toLowerCase()];
    if (template === undefined || operation === undefined) {
      // Not an operation of the service: the gateway answers, with a CORS preflight or a 404.
      if (method === 'OPTIONS' || response.status === 404) return undefined;
      throw new Error(`${where}: no such operation in openapi.yaml`);
    }
    let documented = operation.responses[String(response.status)];
    if (documented?.$ref !== undefined) documented = this.document.components.responses[refName(documented.$ref)];
    if (documented === undefined) throw new Error(`${where}: status not documented in openapi.yaml`);
    if (documented.content === undefined) {
      // An answer documented without a body (a 304): it has none, whatever its Content-Type says.
      if (response.text !== '') throw new Error(`${where}: a body where openapi.yaml documents none`);
      this.#checkHeaders(where, documented.headers ?? {}, response.headers);
      return { method, template, status: response.status };
    }
    const contentType = response.headers.get('content-type');
    const mediaType = (contentType ?? '').split(';')[0]?.trim() ?? '';
    const media = documented.content[mediaType];
    if (media === undefined) {
      const expected = Object.keys(documented.content).join(', ');
      throw new Error(`${where}: media type "${mediaType}" not documented (expected ${expected})`);
    }
    let body: unknown = response.text;
    if (mediaType === 'application/json') {
      try {
        body = JSON.parse(response.text);
      } catch {
        throw new Error(`${where}: body is not JSON: ${response.text.slice(0, 200)}`);
      }
    }
    const validate = this.#validator(media.schema);
    if (!validate(body)) {
      throw new Error(
        `${where}: body breaks the schema: ${this.#ajv.errorsText(validate.errors)}\n${response.text.slice(0, 500)}`,
      );
    }
    this.#checkHeaders(where, documented.headers ?? {}, response.headers);
    return { method, template, status: response.status };
  }

  #checkHeaders(where: string, documented: Record<string, Header>, received: Headers): void {
    for (const [name, declared] of Object.entries(documented)) {
      const header =
        declared.$ref === undefined ? declared : (this.document.components.headers?.[refName(declared.$ref)] ?? {});
      // Headers.get joins repeated fields with ", ", as a recipient may (RFC 9110 §5.3).
      const raw = received.get(name);
      if (raw === null) {
        if (header.required === true) throw new Error(`${where}: header ${name} is missing (openapi.yaml requires it)`);
        continue;
      }
      const validate = this.#validator(header.schema ?? {});
      if (!validate(headerValue(raw, header.schema))) {
        throw new Error(
          `${where}: header ${name}: "${raw}" breaks its schema: ${this.#ajv.errorsText(validate.errors)}`,
        );
      }
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
