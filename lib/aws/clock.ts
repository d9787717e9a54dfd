/**
 * The time a request is signed at. AWS refuses a signature more than 5 minutes from its own time
 * ("Signature expired", "Signature not yet current"): a laptop whose clock drifted gets every
 * request refused, as if its credentials were wrong. As the SDKs do, the refusal's Date header
 * (AWS's time) corrects the clock, and the request is signed again, once.
 */

/** How AWS refuses a request for the time it was signed at: the SDK's clock skew errors. */
const CLOCK_ERRORS = [
  'AuthFailure',
  'InvalidSignatureException',
  'RequestExpired',
  'RequestInTheFuture',
  'RequestTimeTooSkewed',
  'SignatureDoesNotMatch',
];
/** How far a signature's time may be from AWS's. */
const SKEW_MS = 5 * 60_000;

/** Whether a refusal (DynamoDB's `__type`: its code after the `#`) is one for the time signed at. */
function isClockError(type: unknown): boolean {
  return CLOCK_ERRORS.includes(String(type).slice(String(type).lastIndexOf('#') + 1));
}

/** An X-Amz-Date (20240102T030405Z) as milliseconds since 1970. */
function timeOf(amzDate: string): number {
  return Date.parse(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)/, '$1-$2-$3T$4:$5:'));
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** This machine's time, corrected by what AWS last said the time was. */
export class SigningClock {
  #offsetMs = 0;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The time to sign at, as SigV4's X-Amz-Date has it: 20240102T030405Z. */
  amzDate(): string {
    return new Date(this.#now() + this.#offsetMs).toISOString().replace(/[:-]|\.\d{3}/g, '');
  }

  /**
   * After a refusal (`type`, DynamoDB's `__type`) answered at `date` (the answer's Date header, AWS's
   * time) of a request signed at `signedAt` (its X-Amz-Date): whether that time was the cause, the
   * clock now corrected, so that the request is worth signing again. A refusal of another kind, or
   * of a request signed near AWS's time (a wrong secret key), is not.
   */
  corrected(type: unknown, date: string | undefined, signedAt: string): boolean {
    const awsTime = Date.parse(date ?? '');
    if (!isClockError(type) || Number.isNaN(awsTime) || Math.abs(awsTime - timeOf(signedAt)) < SKEW_MS) return false;
    this.#offsetMs = awsTime - this.#now();
    return true;
  }

  /** The answer to a request signed again at AWS's time: a refusal for its time says how far off the clock is. */
  explained<A extends Answer>(answer: A): A {
    if (!isClockError(answer.body.__type)) return answer;
    const said = answer.body.message ?? answer.body.Message;
    const message = `the clock is off by ${Math.round(this.#offsetMs / 1000)} s: ${typeof said === 'string' ? said : ''}`;
    return { ...answer, body: { ...answer.body, message } };
  }
}
