import type { Check } from './checks';
import type { Contract, DocumentedStatus } from './contract';
import { Interrupted, Unreachable, type Stage, type Todo } from './stage';

/**
 * Runs the checks one after the other against a stage, printing a line as each ends, then
 * deletes every record the run created, whatever happened: a failed check, a stage that stopped
 * answering, or an interruption. Returns the report that `--json` writes.
 */

export type Outcome = 'passed' | 'failed' | 'interrupted' | 'unreachable';

export interface CheckResult {
  readonly name: string;
  readonly result: 'passed' | 'failed';
  /** Why it failed. */
  readonly error?: string;
  readonly ms: number;
}

export interface Report {
  readonly url: string;
  readonly result: Outcome;
  readonly checks: readonly CheckResult[];
  /** Checks that did not run, or did not finish: the run was interrupted or lost the stage. */
  readonly notRun: readonly string[];
  /** Why the stage gave no answer, when it did not. */
  readonly unreachable?: string;
  /** Documented answers no check provoked: `POST /todos 409`. */
  readonly notProvoked: readonly string[];
  readonly records: {
    /** Records this run created (as far as it knows). */
    readonly created: number;
    /** Of those, deleted by this run, in its checks or its cleanup. */
    readonly deleted: number;
    /** Ids of records of this run that are still on the stage: the cleanup could not delete them. */
    readonly left: readonly number[];
    /** POSTs that got no answer and whose record, if they made one, the cleanup did not find. */
    readonly unanswered: number;
    /** What the title of every record of this run starts with: `smoke 1a2b3c4d `. */
    readonly titled: string;
  };
  readonly ms: number;
}

/**
 * The base URL names one of the API's own paths, where the API is at the URL without it: the one
 * line that says what to run instead.
 */
export class MisdirectedUrl extends Error {
  override readonly name = 'MisdirectedUrl';
}

/** `http://localhost:3000/todos` without the API's path at its end, when it has one there. */
export function withoutApiPath(url: string): string | undefined {
  const match = /^(.*)\/todos(\/[^/]*)?$/.exec(url);
  return match?.[1] === undefined || !URL.canParse(match[1]) ? undefined : match[1];
}

/**
 * Before any check: whether the stage answers at all (GET /todos, which changes nothing, so that a
 * stage that does not answer costs one request's wait and leaves nothing to clean up), and
 * whether the URL is the stage's base URL. One that ends in /todos would have every check fail,
 * as requests to /todos/todos, and the run blame the stage.
 */
async function probe(stage: Stage): Promise<void> {
  const list = await stage.request('GET', '/todos', {}, false);
  if (list.status === 200) return;
  const base = withoutApiPath(stage.baseUrl);
  if (base !== undefined && (await stage.servesList(`${base}/todos`))) {
    throw new MisdirectedUrl(
      `${stage.baseUrl} ends in the API's own path, ${stage.baseUrl.slice(base.length)}: the API is at ${base}, so drop it: npm run smoke -- ${base}`,
    );
  }
}

/** How a run prints: `line` for its progress and results, `problem` for why it could not go on. */
export interface Printer {
  line(text: string): void;
  problem(text: string): void;
}

/** `429, 500, 503 on every operation; 409 on POST /todos, PUT /todos/{id}` */
export function describeNotProvoked(missing: readonly DocumentedStatus[], all: readonly DocumentedStatus[]): string {
  function operation({ method, template }: DocumentedStatus) {
    return `${method} ${template}`;
  }
  const operations = [...new Set(all.map(operation))];
  const byStatus = new Map<number, string[]>();
  for (const status of missing)
    byStatus.set(status.status, [...(byStatus.get(status.status) ?? []), operation(status)]);
  // Statuses missing on the same operations are said together.
  const groups = new Map<string, number[]>();
  for (const [status, on] of [...byStatus].sort(([a], [b]) => a - b)) {
    const where = on.length === operations.length ? 'every operation' : on.join(', ');
    groups.set(where, [...(groups.get(where) ?? []), status]);
  }
  return [...groups].map(([where, statuses]) => `${statuses.join(', ')} on ${where}`).join('; ');
}

/** Indents the lines after the first of a multi-line message, under a result line. */
function indented(text: string) {
  return text.replace(/\n/g, '\n      ');
}

export async function runSmoke(
  stage: Stage,
  contract: Contract,
  checks: readonly Check[],
  print: Printer,
): Promise<Report> {
  const started = Date.now();
  const results: CheckResult[] = [];
  let unreachable: string | undefined;
  try {
    await probe(stage);
  } catch (error) {
    if (error instanceof Unreachable) unreachable = error.message;
    else if (!(error instanceof Interrupted)) throw error;
  }
  for (const check of unreachable === undefined ? checks : []) {
    if (stage.interrupted) break;
    const checkStarted = Date.now();
    try {
      await check.run(stage);
      results.push({ name: check.name, result: 'passed', ms: Date.now() - checkStarted });
      print.line(`pass  ${check.name} (${Date.now() - checkStarted} ms)`);
    } catch (error) {
      if (error instanceof Interrupted) break;
      if (error instanceof Unreachable) {
        unreachable = error.message;
        break;
      }
      const message = error instanceof Error ? error.message : String(error);
      results.push({ name: check.name, result: 'failed', error: message, ms: Date.now() - checkStarted });
      print.line(`FAIL  ${check.name} (${Date.now() - checkStarted} ms)\n      ${indented(message)}`);
    }
  }
  const notRun = checks.slice(results.length).map((check) => check.name);
  const failed = results.filter((result) => result.result === 'failed').length;
  const outcome: Outcome =
    unreachable !== undefined ? 'unreachable' : stage.interrupted ? 'interrupted' : failed > 0 ? 'failed' : 'passed';

  const all = contract.statuses();
  const missing = all.filter(({ method, template, status }) => !stage.seen.has(`${method} ${template} ${status}`));
  if (outcome === 'interrupted') print.line(`Interrupted: ${results.length} of ${checks.length} checks ran`);
  if (missing.length > 0 && notRun.length === 0) {
    print.line(
      `Not provoked, as no client can cause them without harming the stage: ${describeNotProvoked(missing, all)}`,
    );
  }
  const cleanup = await cleanUp(stage);
  const { left } = cleanup;
  const leftover = describeLeftover(stage, cleanup);
  // Whatever went wrong is said in one line, with what it left on the stage.
  if (unreachable !== undefined) {
    print.problem(`No answer from ${stage.baseUrl}: ${unreachable}${leftover === undefined ? '' : `; ${leftover}`}`);
  } else if (cleanup.stopped) {
    print.problem(`Stopped without the cleanup: ${leftover ?? 'no record of this run is left on the stage'}`);
  } else if (cleanup.failure !== undefined) {
    print.problem(`Cleanup: no answer from ${stage.baseUrl}: ${cleanup.failure}; ${leftover ?? 'nothing is left'}`);
  } else if (leftover !== undefined) {
    print.problem(`Cleanup: ${leftover}`);
  }
  if (cleanup.failure === undefined && !cleanup.stopped && left.length === 0 && stage.created.size > 0) {
    print.line(
      `Cleanup: deleted the ${stage.deleted.size} records this run created${cleanup.gone > 0 ? ` (${cleanup.gone} more were deleted by someone else)` : ''}`,
    );
  }
  if (results.length > 0) {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    print.line(
      `${results.length - failed} passed, ${failed} failed, of ${checks.length} checks against ${stage.baseUrl} in ${seconds} s`,
    );
  }
  return {
    url: stage.baseUrl,
    result: (left.length > 0 || cleanup.unanswered > 0) && outcome === 'passed' ? 'failed' : outcome,
    checks: results,
    notRun,
    ...(unreachable === undefined ? {} : { unreachable }),
    notProvoked: missing.map(({ method, template, status }) => `${method} ${template} ${status}`),
    records: {
      created: stage.created.size,
      deleted: stage.deleted.size,
      left,
      unanswered: cleanup.unanswered,
      titled: stage.title(''),
    },
    ms: Date.now() - started,
  };
}

/** Whether a list entry is a Todo, as far as the cleanup needs: an id and a title. */
function isTodo(todo: unknown): todo is Todo {
  return (
    typeof todo === 'object' &&
    todo !== null &&
    'id' in todo &&
    typeof todo.id === 'number' &&
    'title' in todo &&
    typeof todo.title === 'string'
  );
}

/** The Todos of a list's JSON, or none when it is not one. */
function todosIn(text: string): Todo[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  return Array.isArray(value) ? value.filter(isTodo) : [];
}

/** What the cleanup did, for the line that ends the run. */
interface Cleanup {
  /** Ids of records of this run still on the stage. */
  readonly left: number[];
  /** Records of this run that someone else deleted: not left, and not deleted by it. */
  readonly gone: number;
  /** POSTs that got no answer and whose record, if they made one, was not found. */
  readonly unanswered: number;
  /** Why the stage gave the cleanup no answer, when it did not. */
  readonly failure?: string;
  /** The user stopped it (a second Ctrl-C). */
  readonly stopped: boolean;
}

/** `2 records this run created are left on the stage: ids 5, 6`, or undefined when none is. */
function describeLeftover(stage: Stage, { left, unanswered }: Cleanup): string | undefined {
  const parts = [];
  if (left.length > 0)
    parts.push(`${left.length} records this run created are left on the stage: ids ${left.join(', ')}`);
  if (unanswered > 0) {
    parts.push(
      `${unanswered} POST${unanswered === 1 ? '' : 's'} got no answer and may still make a record, titled "${stage.title('')}…"`,
    );
  }
  return parts.length === 0 ? undefined : parts.join('; ');
}

/**
 * Deletes the records this run created and has not deleted, and says what it could not. A create
 * whose answer was lost may still have made a record: those are looked for by their titles, after
 * the known ones are deleted, which gives a create cut short by Ctrl-C that time to land. It sends
 * whatever the run's state, and its answers are not held to the contract: a stage that breaks it
 * must still be left clean.
 */
async function cleanUp(stage: Stage): Promise<Cleanup> {
  stage.beginCleanup();
  const gone = new Set<number>();
  const lost = stage.lostCreates;
  let found = 0;
  let failure: string | undefined;
  async function deleteUndeleted() {
    for (const id of stage.undeleted().filter((id) => !gone.has(id))) {
      const answer = await stage.request('DELETE', `/todos/${id}`, {}, false);
      if (answer.status === 404) gone.add(id);
    }
  }
  try {
    await deleteUndeleted();
    if (lost > 0) {
      const list = await stage.request('GET', '/todos', {}, false);
      const marker = stage.title('');
      for (const todo of list.status === 200 ? todosIn(list.text) : []) {
        if (todo.title.startsWith(marker) && !stage.created.has(todo.id)) {
          stage.created.add(todo.id);
          found += 1;
        }
      }
      await deleteUndeleted();
    }
  } catch (error) {
    if (error instanceof Unreachable) failure = error.message;
    else if (!(error instanceof Interrupted)) throw error;
  }
  return {
    left: stage.undeleted().filter((id) => !gone.has(id)),
    gone: gone.size,
    unanswered: Math.max(0, lost - found),
    ...(failure === undefined ? {} : { failure }),
    stopped: stage.stopped,
  };
}
