import { EventEmitter } from 'node:events';
import type { IncomingAnswer, OutgoingRequest, RequestSocket, Transport, Wire } from '../../lib/aws/https';
import type { Runtime } from '../../lib/runtime';

/**
 * A container's sockets to DynamoDB, in simulated time: what node:http's client and its pool of
 * kept-alive sockets are to lib/aws/https.ts, so that the transport's own code sends every copy
 * in a run (its signature, its connect and answer timeouts, and what it reports of a copy with
 * no answer: never sent until its socket connected, unknown after). Past the socket, `carry` takes
 * the copy: the simulated network, whose faults decide whether it reaches DynamoDB and whether
 * an answer comes back. A copy it gives no answer to is silence on the socket, as on a real one:
 * the transport's answer timeout ends it, not the network's.
 *
 * A socket is new (it connects, in `connectMs`) when every one the container has is busy, and
 * kept alive after an answer read whole; one whose request was destroyed (a timeout, an abort)
 * is closed, as node's agent closes it.
 *
 * A connection may also be reset once a copy was sent (`carry` rejects with ConnectionReset), as
 * real ones are (a peer or a load balancer gone, ECONNRESET, EPIPE): before any answer, node's
 * request emits an ECONNRESET error; mid-answer, its answer emits one after part of the body,
 * and the request closes with the answer incomplete. The socket is closed.
 */

/** What `carry` rejects with for a connection reset after the copy was sent: `midAnswer`, once this answer's head came. */
export class ConnectionReset extends Error {
  override readonly name = 'ConnectionReset';

  constructor(readonly midAnswer?: { readonly status: number; readonly text: string }) {
    super(midAnswer ? 'the connection was reset mid-answer' : 'the connection was reset');
  }
}

/** The error node:http gives for a connection the peer reset: `read ECONNRESET`, code ECONNRESET. */
function econnreset(message: string): Error {
  return Object.assign(new Error(message), { code: 'ECONNRESET', errno: -104, syscall: 'read' });
}

export interface SimulatedSockets {
  /** The container's clock: the transport's timeouts and signature run on it. */
  readonly runtime: Runtime;
  /** What carries a copy once sent: the network (its faults), then DynamoDB. It rejects a copy it will not answer. */
  readonly carry: Transport;
  /** A new socket's connection: the TCP and TLS handshakes. */
  readonly connectMs: number;
  /**
   * Time on the way, each way, on top of what `carry` takes: half of a latency drawn from the AWS
   * profile, say. 0 by default.
   */
  readonly legMs?: (operation: string, body: string) => number;
  /** Whether a new socket's connection is made: false leaves it connecting until the transport's connect timeout. */
  readonly connects?: () => boolean;
  /** The answer's Date header: AWS's time, the world's, not the container's. */
  readonly awsNow: () => number;
}

/** A socket of the pool: connecting until it has connected once, then kept alive between requests. */
class SimulatedSocket extends EventEmitter implements RequestSocket {
  connecting = true;
}

/** An answer as the transport reads it: its JSON text in one chunk. */
class SimulatedAnswer extends EventEmitter implements IncomingAnswer {
  complete = false;

  constructor(
    readonly statusCode: number,
    readonly headers: { readonly date: string },
  ) {
    super();
  }

  deliver(text: string): void {
    this.emit('data', Buffer.from(text));
    this.complete = true;
    this.emit('end');
  }

  /** Part of the body, then the connection reset: node's IncomingMessage emits 'aborted', then an ECONNRESET error. */
  cutOff(text: string): void {
    this.emit('data', Buffer.from(text.slice(0, Math.floor(text.length / 2))));
    this.emit('aborted');
    this.emit('error', econnreset('aborted'));
  }
}

/** The wire a container's transport sends on (lib/aws/https.ts, `httpsTransport`'s second argument). */
export function simulatedWire(sockets: SimulatedSockets): Wire {
  const idle: SimulatedSocket[] = [];
  return {
    runtime: sockets.runtime,
    open: (headers) => new SimulatedRequest(sockets, headers, idle),
  };
}

/** One request: given a socket when it is ended, as node:http gives one, then sent once the socket is connected. */
class SimulatedRequest extends EventEmitter implements OutgoingRequest {
  #destroyed = false;
  readonly #stopCarrying = new AbortController();

  constructor(
    private readonly sockets: SimulatedSockets,
    private readonly headers: Record<string, string>,
    private readonly idle: SimulatedSocket[],
  ) {
    super();
  }

  end(body: string): this {
    const socket = this.idle.pop() ?? new SimulatedSocket();
    this.emit('socket', socket);
    if (!socket.connecting) {
      this.#send(socket, body);
      return this;
    }
    if (this.sockets.connects?.() === false) return this;
    this.sockets.runtime.after(this.sockets.connectMs, () => {
      if (this.#destroyed) return;
      socket.connecting = false;
      socket.emit('connect');
      this.#send(socket, body);
    });
    return this;
  }

  destroy(error: Error): this {
    if (this.#destroyed) return this;
    this.#destroyed = true;
    this.#stopCarrying.abort(error);
    this.emit('error', error);
    this.emit('close');
    return this;
  }

  #send(socket: SimulatedSocket, body: string): void {
    const target = this.headers['x-amz-target'] ?? '';
    const operation = target.slice(target.indexOf('.') + 1);
    const legMs = this.sockets.legMs?.(operation, body) ?? 0;
    this.#after(legMs, () => {
      this.sockets.carry(operation, body, this.#stopCarrying.signal).then(
        (answer) => {
          this.#after(legMs, () => {
            this.#answer(socket, answer.status, JSON.stringify(answer.body));
          });
        },
        // A reset is heard on the socket; otherwise no answer is coming (or the request was destroyed): silence.
        (error: unknown) => {
          if (!(error instanceof ConnectionReset)) return;
          this.#after(legMs, () => {
            this.#reset(error);
          });
        },
      );
    });
  }

  #answer(socket: SimulatedSocket, status: number, text: string): void {
    const answer = new SimulatedAnswer(status, { date: new Date(this.sockets.awsNow()).toUTCString() });
    this.emit('response', answer);
    answer.deliver(text);
    this.emit('close');
    this.idle.push(socket);
  }

  /** The connection reset: the request fails, before its answer or mid-answer; the socket is not kept. */
  #reset({ midAnswer }: ConnectionReset): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    if (midAnswer === undefined) {
      this.emit('error', econnreset('read ECONNRESET'));
      this.emit('close');
      return;
    }
    const answer = new SimulatedAnswer(midAnswer.status, { date: new Date(this.sockets.awsNow()).toUTCString() });
    this.emit('response', answer);
    answer.cutOff(midAnswer.text);
    this.emit('close');
  }

  /** Runs `then` after `ms`, at once for 0, unless the request is destroyed meanwhile. */
  #after(ms: number, then: () => void): void {
    if (ms === 0) {
      then();
      return;
    }
    this.sockets.runtime.after(ms, () => {
      if (!this.#destroyed) then();
    });
  }
}
