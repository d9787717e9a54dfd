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
  };
  readonly ms: number;
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
  for (const check of checks) {
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
        print.problem(`No answer from ${stage.baseUrl}: ${error.message}`);
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
  const left = await cleanUp(stage, print);
  if (results.length > 0) {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    print.line(
      `${results.length - failed} passed, ${failed} failed, of ${checks.length} checks against ${stage.baseUrl} in ${seconds} s`,
    );
  }
  return {
    url: stage.baseUrl,
    result: left.length > 0 && outcome === 'passed' ? 'failed' : outcome,
    checks: results,
    notRun,
    ...(unreachable === undefined ? {} : { unreachable }),
    notProvoked: missing.map(({ method, template, status }) => `${method} ${template} ${status}`),
    records: { created: stage.created.size, deleted: stage.deleted.size, left },
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

/**
 * Deletes the records this run created and has not deleted, and returns the ids it could not.
 * A create whose answer was lost may still have made a record: those are found by their titles.
 * It sends whatever the run's state, and its answers are not held to the contract: a stage that
 * breaks it must still be left clean.
 */
async function cleanUp(stage: Stage, print: Printer): Promise<number[]> {
  /** Records of this run that someone else deleted: not left, and not deleted by it. */
  const gone = new Set<number>();
  try {
    if (stage.lostCreates > 0) {
      const list = await stage.request('GET', '/todos', {}, false);
      const marker = stage.title('');
      for (const todo of list.status === 200 ? todosIn(list.text) : []) {
        if (todo.title.startsWith(marker)) stage.created.add(todo.id);
      }
    }
    for (const id of stage.undeleted()) {
      const answer = await stage.request('DELETE', `/todos/${id}`, {}, false);
      if (answer.status === 404) gone.add(id);
    }
  } catch (error) {
    if (!(error instanceof Unreachable)) throw error;
    print.problem(`Cleanup: no answer from ${stage.baseUrl}: ${error.message}`);
  }
  const left = stage.undeleted().filter((id) => !gone.has(id));
  if (left.length > 0) {
    print.problem(`Cleanup: ${left.length} records this run created are left on the stage: ids ${left.join(', ')}`);
  } else if (stage.created.size > 0) {
    print.line(
      `Cleanup: deleted the ${stage.deleted.size} records this run created${gone.size > 0 ? ` (${gone.size} more were deleted by someone else)` : ''}`,
    );
  }
  return left;
}
