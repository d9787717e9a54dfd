/** A small HTTP client for the running API, used by the e2e tests and the load script. */

/**
 * What checks every answer against openapi.yaml and throws at a breach: smoke/contract.ts's
 * Contract. Named by its shape, so that this client needs nothing of smoke/.
 */
export interface AnswerCheck {
  check(method: string, path: string, response: { status: number; headers: Headers; text: string }): unknown;
}

export interface ApiResponse {
  readonly status: number;
  readonly contentType: string | null;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON; throws when it is not JSON. */
  json(): unknown;
}

export interface RequestOptions {
  /** A value sent as JSON with `Content-Type: application/json`. */
  body?: unknown;
  /** A body sent as it is, for input that is not valid JSON. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS' | 'PATCH';

export class ApiClient {
  /** With a contract, every response is checked against openapi.yaml, and a breach throws. */
  constructor(
    readonly baseUrl: string,
    private readonly contract?: AnswerCheck,
  ) {}

  async request(
    method: Method,
    path: string,
    { body, rawBody, headers = {} }: RequestOptions = {},
  ): Promise<ApiResponse> {
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    const response = await fetch(this.baseUrl + path, {
      method,
      headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(payload === undefined ? {} : { body: payload }),
    });
    const text = await response.text();
    this.contract?.check(method, path, { status: response.status, headers: response.headers, text });
    return {
      status: response.status,
      contentType: response.headers.get('content-type'),
      headers: response.headers,
      text,
      json: () => JSON.parse(text) as unknown,
    };
  }

  get(path: string): Promise<ApiResponse> {
    return this.request('GET', path);
  }

  post(path: string, body: unknown): Promise<ApiResponse> {
    return this.request('POST', path, { body });
  }

  put(path: string, body: unknown): Promise<ApiResponse> {
    return this.request('PUT', path, { body });
  }

  delete(path: string): Promise<ApiResponse> {
    return this.request('DELETE', path);
  }
}
