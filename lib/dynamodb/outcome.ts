/**
 * What became of a write (docs/design.md, "What became of a write") over every copy sent, each the same body: `applied`,
 * a copy was answered with success; `not applied`, every copy was refused (DynamoDB applies nothing it refuses) or never
 * sent: none can land later; `unknown`, some copy may have been applied, or may still land. Kept for the request as a
 * whole, never one attempt: a later copy's refusal does not undo an earlier unanswered one (read from one round, a held
 * copy and three throttles once wrote a POST twice).
 */
export type Fate = 'applied' | 'not applied' | 'unknown';

/**
 * What became of one copy: `applied`, `not applied` as above; `maybe applied`, a 500 (DynamoDB may have applied it,
 * and is done with it); `unanswered`, no answer (timeout, lost connection, abort) or another copy in progress.
 */
export type CopyFate = 'applied' | 'not applied' | 'maybe applied' | 'unanswered';

/** What one copy's answer says of that copy: an HTTP status and DynamoDB's code for a refusal. */
export function copyFate(status: number, code: string | undefined): CopyFate {
  if (status >= 200 && status < 300) return 'applied';
  // Another copy with this token is running: as good as one not answered yet.
  if (code === 'TransactionInProgressException') return 'unanswered';
  if (status >= 500) return 'maybe applied';
  return 'not applied';
}

/** Every copy sent of one request: its fate so far (see Fate). */
export class Copies {
  #applied = false;
  #maybeApplied = false;
  #unanswered = false;
  #sent = 0;

  /** Adds one copy's fate: an applied copy makes the request applied, an unknown one unknown. */
  add(fate: CopyFate): void {
    this.#sent++;
    if (fate === 'applied') this.#applied = true;
    if (fate === 'maybe applied') this.#maybeApplied = true;
    if (fate === 'unanswered') this.#unanswered = true;
  }

  /**
   * Cancelled for a failed condition: DynamoDB read the conditions, so the token first, and applied no copy (a token it
   * applied is answered with success). Every copy answered before, a 500 too, was not applied; one unanswered may still
   * land. (A conflict or throttle may precede reading the token: it proves nothing; the simulator answers so.)
   */
  conditionsRead(): void {
    this.#maybeApplied = false;
  }

  get fate(): Fate {
    if (this.#applied) return 'applied';
    return this.#maybeApplied || this.#unanswered ? 'unknown' : 'not applied';
  }

  /** How many copies went out: for the debug line, never for a decision. */
  get sent(): number {
    return this.#sent;
  }
}

/**
 * What a cancellation says of a transaction's copies (each meaning's, decisions.ts):
 * - `met others`: a TransactionConflict or a ThrottlingError. Not applied; it may go again as it is, with its token.
 * - `final`: a condition that will never hold again, or a request never taken: no copy can ever land; build anew.
 * - `refused`: a condition that may hold again; a copy on its way might still apply: rebuild once `not applied`.
 */
export type Verdict = 'met others' | 'refused' | 'final';

const RANK: Record<Verdict, number> = { 'met others': 0, refused: 1, final: 2 };

/** A cancellation's verdict: its most telling reason's (final over refused over met others); none at all is met others. */
export function strongest(verdicts: readonly Verdict[]): Verdict {
  return verdicts.reduce<Verdict>((most, verdict) => (RANK[verdict] > RANK[most] ? verdict : most), 'met others');
}
