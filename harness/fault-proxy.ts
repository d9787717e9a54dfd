import { once } from 'node:events';
import {
  Agent,
  createServer,
  request as forward,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/**
 * A small HTTP proxy in front of a DynamoDB endpoint that misbehaves on request, the way a
 * network does: it holds a request back before passing it on, answers too late for the SDK's
 * timeout, loses an answer after the write was applied, or stops answering at all. Tests start
 * one for what they need and point a store's client at `endpoint`. Behind it is DynamoDB Local,
 * or DynamoDB as AWS runs it (harness/aws-dynamodb/dynamodb.ts), which several proxies may share.
 */

/** A request as the proxy saw it: the DynamoDB operation (from X-Amz-Target), the JSON body, the headers. */
export interface SeenRequest {
  readonly operation: string;
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
}

export type Match = (request: SeenRequest) => boolean;

/** A request on its way to DynamoDB, as the proxy passes it on. */
export interface UpstreamRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly seen: SeenRequest;
}

export interface UpstreamAnswer {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer;
}

/** What the proxy passes requests on to: a DynamoDB. */
export interface Upstream {
  send(request: UpstreamRequest): Promise<UpstreamAnswer>;
  close(): void;
}

/** A DynamoDB at `url`, reached over HTTP with kept-alive connections. */
export function httpUpstream(url: string): Upstream {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true });
  return {
    async send({ method, path, headers, body }) {
      const answer = await new Promise<IncomingMessage>((resolve, reject) => {
        const outgoing = forward({ host: target.hostname, port: target.port, method, path, headers, agent }, resolve);
        outgoing.on('error', reject);
        outgoing.end(body);
      });
      const chunks: Buffer[] = [];
      for await (const chunk of answer) chunks.push(chunk as Buffer);
      return { status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(chunks) };
    },
    close() {
      agent.destroy();
    },
  };
}

/** Requests for this DynamoDB operation, e.g. `TransactWriteItems`. */
export function operation(name: string): Match {
  return (request) => request.operation === name;
}

/** Requests whose body contains `text` anywhere (a title, say). */
export function mentions(text: string): Match {
  return (request) => request.body.includes(text);
}

/** Both conditions. */
export function both(a: Match, b: Match): Match {
  return (request) => a(request) && b(request);
}

export type Fault =
  /** Pass the request on only once `until` settles: a request delayed on its way. */
  | { readonly holdRequest: Promise<unknown> }
  /** Pass the request on `ms` after it arrived: each request it applies to delayed on its way. */
  | { readonly holdRequestMs: number }
  /** Pass it on, then keep the answer back for `ms`: past the SDK's request timeout, say. */
  | { readonly delayAnswerMs: number }
  /** Pass it on, and once it is applied close the connection instead of answering. */
  | { readonly dropAnswer: true }
  /** Do not pass it on: answer this instead, as DynamoDB would (a TransactionConflict, say). */
  | { readonly answerWith: (request: SeenRequest) => { readonly status: number; readonly body: unknown } };

interface Rule {
  readonly match: Match;
  readonly fault: Fault;
  /** How many more requests it applies to. */
  times: number;
}

export interface FaultProxy {
  readonly endpoint: string;
  /** Applies `fault` to the next `times` requests that `match` (each request meets one rule at most). */
  inject(match: Match, fault: Fault, times?: number): void;
  /** Resolves with the first request from now on that `match`es, once the proxy has it. */
  next(match: Match): Promise<SeenRequest>;
  /**
   * Resolves with the first request from now on that `match`es once DynamoDB has answered it
   * (whether or not its client still listens): a held write has landed.
   */
  landed(match: Match): Promise<SeenRequest>;
  /** Drops every fault injected so far: the network is healthy again. */
  heal(): void;
  /** Holds every request from now on without answering it: a store that is frozen. */
  freeze(): void;
  /** Every request so far, in order of arrival. */
  readonly seen: readonly SeenRequest[];
  /**
   * Resolves once the proxy holds no request (none held back, none on its way to DynamoDB, none
   * being answered): no write it has seen can still land. Rejects if that takes `withinMs`.
   */
  idle(withinMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a proxy to `upstream`: a DynamoDB's URL, or an Upstream (DynamoDB as AWS runs it), which
 * stays open when the proxy closes (other proxies may share it).
 */
export async function startFaultProxy(upstream: string | Upstream): Promise<FaultProxy> {
  const dynamodb = typeof upstream === 'string' ? httpUpstream(upstream) : upstream;
  const rules: Rule[] = [];
  const watchers: { match: Match; resolve: (request: SeenRequest) => void }[] = [];
  const landings: { match: Match; resolve: (request: SeenRequest) => void }[] = [];
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  let frozen = false;
  let inHand = 0;
  const idlers: (() => void)[] = [];

  async function handle(incoming: IncomingMessage, answer: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const seenRequest: SeenRequest = {
      operation:
        String(incoming.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '',
      body: body.toString('utf8'),
      headers: incoming.headers,
    };
    seen.push(seenRequest);
    for (const watcher of watchers.filter(({ match }) => match(seenRequest))) {
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve(seenRequest);
    }
    // Frozen: the request stays unanswered until its client gives up or the proxy closes.
    if (frozen) return;
    const rule = rules.find(({ match, times }) => times > 0 && match(seenRequest));
    if (rule) rule.times--;
    const fault = rule?.fault;
    if (fault && 'holdRequest' in fault) await fault.holdRequest.catch(() => undefined);
    if (fault && 'holdRequestMs' in fault) await new Promise((resolve) => setTimeout(resolve, fault.holdRequestMs));
    if (fault && 'answerWith' in fault) {
      const { status, body: answerBody } = fault.answerWith(seenRequest);
      answer.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(answerBody));
      return;
    }

    const upstreamAnswer = await dynamodb.send({
      method: incoming.method ?? 'POST',
      path: incoming.url ?? '/',
      headers: incoming.headers,
      body,
      seen: seenRequest,
    });
    for (const landing of landings.filter(({ match }) => match(seenRequest))) {
      landings.splice(landings.indexOf(landing), 1);
      landing.resolve(seenRequest);
    }

    if (fault && 'dropAnswer' in fault) {
      incoming.socket.destroy();
      return;
    }
    if (fault && 'delayAnswerMs' in fault) await delay(fault.delayAnswerMs);
    if (incoming.socket.destroyed) return;
    answer.writeHead(upstreamAnswer.status, upstreamAnswer.headers).end(upstreamAnswer.body);
  }

  const server = createServer((incoming, answer) => {
    inHand++;
    handle(incoming, answer)
      .catch(() => {
        incoming.socket.destroy();
      })
      .finally(() => {
        if (--inHand === 0) for (const idler of idlers.splice(0)) idler();
      });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    seen,
    inject(match, fault, times = 1) {
      rules.push({ match, fault, times });
    },
    next(match) {
      return new Promise((resolve) => watchers.push({ match, resolve }));
    },
    landed(match) {
      return new Promise((resolve) => landings.push({ match, resolve }));
    },
    heal() {
      rules.length = 0;
    },
    freeze() {
      frozen = true;
    },
    idle(withinMs) {
      if (inHand === 0) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          idlers.splice(idlers.indexOf(done), 1);
          reject(new Error(`the fault proxy still held ${inHand} requests after ${withinMs} ms`));
        }, withinMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        idlers.push(done);
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      if (typeof upstream === 'string') dynamodb.close();
      await once(server, 'close');
    },
  };
}

/**
 * What DynamoDB answers a transaction that another transaction holds up: cancelled, with
 * TransactionConflict for the actions `conflicting` picks (by index) and None for the others.
 * DynamoDB Local runs transactions one at a time and never answers this; the real service does.
 */
export function transactionConflict(conflicting: (index: number, count: number) => boolean) {
  return (request: SeenRequest) => {
    const { TransactItems = [] } = JSON.parse(request.body) as { TransactItems?: unknown[] };
    const codes = TransactItems.map((_item, i) =>
      conflicting(i, TransactItems.length) ? 'TransactionConflict' : 'None',
    );
    return {
      status: 400,
      body: {
        __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
        Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
        CancellationReasons: codes.map((Code) =>
          Code === 'None' ? { Code } : { Code, Message: 'Transaction is ongoing for the item' },
        ),
      },
    };
  };
}

/**
 * The network faults of a bad day, between every container and DynamoDB, on a random few of all
 * requests: answers that come after the SDK has given up (it sends the request again), answers
 * lost after the write was applied, and requests held up on their way that land late.
 */
export function badDay(network: FaultProxy): void {
  network.inject(() => Math.random() < 0.03, { delayAnswerMs: 2_200 }, Infinity);
  network.inject(() => Math.random() < 0.02, { dropAnswer: true }, Infinity);
  network.inject(() => Math.random() < 0.02, { holdRequestMs: 2_600 }, Infinity);
}
