import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { MAX_BODY_BYTES } from '../lib/input';
import { MAX_TITLE_LENGTH, applyPatch, createTodo, titleLength } from '../lib/todos';
import type { Answer, Stage, Todo } from './stage';

/**
 * The checks `npm run smoke` runs, in order: every endpoint with every status of openapi.yaml
 * that a client can cause without harming the stage, CORS as a page of another origin meets it,
 * a keyed retry, and the body limit. Every answer is also held to openapi.yaml by Stage.send.
 *
 * Each check creates the records it works on, and asserts nothing of any other: a stage in use
 * holds records of its users, and may have none of the seed.
 */

export interface Check {
  /** What it proves, as one line: the request, the status, and what else must hold. */
  readonly name: string;
  readonly run: (stage: Stage) => Promise<void>;
}

/** A page of another origin, as a browser would name it in Origin. */
export const FOREIGN_ORIGIN = 'https://smoke-check.example';

/**
 * A body past MAX_BODY_BYTES (lib/input.ts), far under the gateway's own 10 MB: a short title, and
 * a field the service ignores that takes it past the limit, so that it is the body's size that is
 * refused whatever a title may hold.
 */
function oversizedBody(stage: Stage): { title: string; padding: string } {
  return { title: stage.title('oversized'), padding: 'x'.repeat(MAX_BODY_BYTES) };
}

/** A title of this run of `length` characters (lib/todos.ts counts them), `what` first, then `fill`, one character. */
function titleOfLength(stage: Stage, what: string, length: number, fill: string): string {
  const named = `${stage.title(what)} `;
  const room = length - titleLength(named);
  if (room < 0) throw new Error(`a title of ${length} characters cannot hold this run's name: "${named}"`);
  return named + fill.repeat(room);
}

const NOT_FOUND = { error: 'Todo not found' };

/** Fails the check with `why` unless `ok`. */
function expectThat(ok: boolean, why: string): asserts ok {
  if (!ok) throw new Error(why);
}

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  expectThat(
    isDeepStrictEqual(actual, expected),
    `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
  );
}

/** An Idempotency-Key of this run, unique to the request it is made for. */
function key(): string {
  return `"${randomUUID()}"`;
}

function idempotencyKey(value: string) {
  return { 'idempotency-key': value };
}
function replayed(answer: Answer) {
  return answer.headers.get('idempotent-replayed');
}

/** The answer's ETag, which openapi.yaml requires of it (the contract has checked it is there). */
function etagOf(answer: Answer): string {
  const etag = answer.headers.get('etag');
  expectThat(etag !== null, `${answer.status} answer without an ETag`);
  return etag;
}

/** The answer's values of a comma-separated header, lower-cased. */
function listed(answer: Answer, header: string): string[] {
  return (answer.headers.get(header) ?? '')
    .split(',')
    .map((value) => value.trim().toLowerCase())
    .filter((value) => value !== '');
}

/** A record this run created and then deleted: its id is never used again (docs/spec.md §1). */
async function deletedRecord(stage: Stage, what: string): Promise<Todo> {
  const todo = await stage.create(what);
  await stage.send('DELETE', `/todos/${todo.id}`, { expect: 200 });
  return todo;
}

/** A preflight as a browser sends it before a write with a JSON body and an Idempotency-Key. */
async function expectPreflightAllows(stage: Stage, path: string, method: string): Promise<void> {
  const answer = await stage.send('OPTIONS', path, {
    headers: {
      origin: FOREIGN_ORIGIN,
      'access-control-request-method': method,
      'access-control-request-headers': 'content-type,idempotency-key,if-match,if-none-match',
    },
  });
  const where = `OPTIONS ${path} (preflight of ${method}) → ${answer.status}`;
  expectThat(answer.status >= 200 && answer.status < 300, `${where}: not a 2xx`);
  const origin = answer.headers.get('access-control-allow-origin');
  expectThat(origin === '*' || origin === FOREIGN_ORIGIN, `${where}: Access-Control-Allow-Origin is ${origin}`);
  const methods = listed(answer, 'access-control-allow-methods');
  expectThat(
    methods.includes('*') || methods.includes(method.toLowerCase()),
    `${where}: Access-Control-Allow-Methods (${methods.join(',')}) leaves out ${method}`,
  );
  const headers = listed(answer, 'access-control-allow-headers');
  for (const header of ['content-type', 'idempotency-key', 'if-match', 'if-none-match']) {
    expectThat(
      headers.includes('*') || headers.includes(header),
      `${where}: Access-Control-Allow-Headers (${headers.join(',')}) leaves out ${header}`,
    );
  }
}

export const CHECKS: readonly Check[] = [
  {
    name: 'GET /todos → 200: every Todo in list order, new records at the end',
    run: async (stage) => {
      const first = await stage.create('listed first');
      const second = await stage.create('listed second');
      const answer = await stage.send('GET', '/todos', { headers: { 'accept-encoding': 'identity' }, expect: 200 });
      const ids = (answer.json() as Todo[]).map((todo) => todo.id);
      expectThat(
        ids.includes(first.id) && ids.indexOf(first.id) < ids.indexOf(second.id),
        `GET /todos: expected ${first.id} then ${second.id} in the list, got ${ids.slice(-10).join(', ')} at its end`,
      );
      expectEqual(answer.headers.get('content-encoding'), null, 'GET /todos without gzip: Content-Encoding');
    },
  },
  {
    name: 'GET /todos → 200 gzip-compressed, for a client that accepts gzip',
    run: async (stage) => {
      // Records of compressible titles at the cap, one at a time, until the list is long enough to
      // be worth compressing (lib/http.ts): one or a few, whatever the stage holds. A list past the
      // largest body a client may send (MAX_BODY_BYTES) that still comes plain fails the check.
      const title = titleOfLength(stage, 'compressible', MAX_TITLE_LENGTH, 'z');
      for (;;) {
        const todo = (await stage.send('POST', '/todos', { body: { title }, expect: 201 })).json() as Todo;
        // fetch decodes gzip itself: the body read is the list, and the header says how it came.
        const answer = await stage.send('GET', '/todos', { headers: { 'accept-encoding': 'gzip' }, expect: 200 });
        expectThat(
          (answer.json() as Todo[]).some((listed) => isDeepStrictEqual(listed, todo)),
          `GET /todos with gzip: record ${todo.id} is not in the list`,
        );
        const encoding = answer.headers.get('content-encoding');
        if (encoding === 'gzip') return;
        expectThat(
          Buffer.byteLength(answer.text) <= MAX_BODY_BYTES,
          `GET /todos with gzip: a list of ${Buffer.byteLength(answer.text)} bytes came with Content-Encoding ${encoding}`,
        );
      }
    },
  },
  {
    name: 'POST /todos → 201: the new Todo, completed = false, other fields ignored, and its Location',
    run: async (stage) => {
      const title = stage.title('created');
      const answer = await stage.send('POST', '/todos', { body: { title, completed: true, extra: 1 }, expect: 201 });
      const todo = answer.json() as Todo;
      expectEqual(todo, createTodo({ title }, todo.id), 'POST /todos');
      expectEqual(todo.completed, false, 'POST /todos: completed');
      expectEqual(answer.headers.get('location'), `/todos/${todo.id}`, 'POST /todos: Location');
      expectEqual(replayed(answer), null, 'POST /todos without a key: Idempotent-Replayed');
    },
  },
  {
    name: 'POST /todos → 400: a body without a title, and one that is not JSON',
    run: async (stage) => {
      await stage.send('POST', '/todos', { body: { completed: false }, expect: 400 });
      await stage.send('POST', '/todos', { rawBody: '{"title":', expect: 400 });
    },
  },
  {
    name: `POST /todos → 413: a body over ${MAX_BODY_BYTES} bytes`,
    run: async (stage) => {
      await stage.send('POST', '/todos', { body: oversizedBody(stage), expect: 413 });
    },
  },
  {
    name: `POST and PUT → 400: a title past ${MAX_TITLE_LENGTH} characters, naming the limit; 201 at it`,
    run: async (stage) => {
      // Characters of two UTF-16 units each: the cap counts characters, not JavaScript's units or bytes.
      const longest = titleOfLength(stage, 'at the cap', MAX_TITLE_LENGTH, '🚀');
      const past = `${longest}🚀`;
      const refused = await stage.send('POST', '/todos', { body: { title: past }, expect: 400 });
      expectThat(
        (refused.json() as { error: string }).error.includes(String(MAX_TITLE_LENGTH)),
        `POST /todos with a title of ${MAX_TITLE_LENGTH + 1} characters: the 400 does not name the limit`,
      );
      const created = await stage.send('POST', '/todos', { body: { title: longest }, expect: 201 });
      const todo = created.json() as Todo;
      expectEqual(
        todo,
        createTodo({ title: longest }, todo.id),
        `POST /todos with a title of ${MAX_TITLE_LENGTH} characters`,
      );
      const path = `/todos/${todo.id}`;
      await stage.send('PUT', path, { body: { title: past }, expect: 400 });
      expectEqual((await stage.send('GET', path, { expect: 200 })).json(), todo, `GET ${path} after the 400`);
    },
  },
  {
    name: 'POST /todos sent again with its Idempotency-Key → 201, Idempotent-Replayed: true, the same record',
    run: async (stage) => {
      const headers = idempotencyKey(key());
      const body = { title: stage.title('keyed') };
      const first = await stage.send('POST', '/todos', { body, headers, expect: 201 });
      const again = await stage.send('POST', '/todos', { body, headers, expect: 201 });
      expectEqual(replayed(first), null, 'the first POST: Idempotent-Replayed');
      expectEqual(replayed(again), 'true', 'the POST sent again: Idempotent-Replayed');
      expectEqual(again.json(), first.json(), 'the POST sent again: its record');
    },
  },
  {
    name: 'POST /todos → 422: an Idempotency-Key reused with another body',
    run: async (stage) => {
      const headers = idempotencyKey(key());
      await stage.send('POST', '/todos', { body: { title: stage.title('key used') }, headers, expect: 201 });
      await stage.send('POST', '/todos', { body: { title: stage.title('key reused') }, headers, expect: 422 });
    },
  },
  {
    name: 'GET /todos/{id} → 200: the Todo',
    run: async (stage) => {
      const todo = await stage.create('read');
      expectEqual((await stage.send('GET', `/todos/${todo.id}`, { expect: 200 })).json(), todo, 'GET /todos/{id}');
    },
  },
  {
    name: 'GET /todos/{id} → 404: a deleted record, and an id that is not a number',
    run: async (stage) => {
      const gone = await deletedRecord(stage, 'read after delete');
      for (const path of [`/todos/${gone.id}`, '/todos/abc']) {
        expectEqual((await stage.send('GET', path, { expect: 404 })).json(), NOT_FOUND, `GET ${path}`);
      }
    },
  },
  {
    name: 'PUT /todos/{id} → 200: a partial update, the Todo after it',
    run: async (stage) => {
      const todo = await stage.create('to update');
      const path = `/todos/${todo.id}`;
      const done = applyPatch(todo, { completed: true });
      const answered = await stage.send('PUT', path, { body: { completed: true }, expect: 200 });
      expectEqual(answered.json(), done, `PUT ${path} {completed: true}`);
      const title = stage.title('renamed');
      const renamed = await stage.send('PUT', path, { body: { title }, expect: 200 });
      expectEqual(renamed.json(), applyPatch(done, { title }), `PUT ${path} {title}: the other fields kept`);
    },
  },
  {
    name: 'PUT /todos/{id} → 400: completed that is not a boolean; nothing changes',
    run: async (stage) => {
      const todo = await stage.create('bad update');
      const path = `/todos/${todo.id}`;
      await stage.send('PUT', path, { body: { completed: 'yes' }, expect: 400 });
      expectEqual((await stage.send('GET', path, { expect: 200 })).json(), todo, `GET ${path} after the 400`);
    },
  },
  {
    name: 'PUT /todos/{id} → 404: a deleted record',
    run: async (stage) => {
      const gone = await deletedRecord(stage, 'update after delete');
      const answer = await stage.send('PUT', `/todos/${gone.id}`, { body: { completed: true }, expect: 404 });
      expectEqual(answer.json(), NOT_FOUND, `PUT /todos/${gone.id}`);
    },
  },
  {
    name: `PUT /todos/{id} → 413: a body over ${MAX_BODY_BYTES} bytes`,
    run: async (stage) => {
      const todo = await stage.create('oversized update');
      await stage.send('PUT', `/todos/${todo.id}`, { body: oversizedBody(stage), expect: 413 });
    },
  },
  {
    name: 'PUT /todos/{id} sent again with its Idempotency-Key → 200, Idempotent-Replayed: true',
    run: async (stage) => {
      const todo = await stage.create('keyed update');
      const options = { body: { completed: true }, headers: idempotencyKey(key()), expect: 200 };
      const first = await stage.send('PUT', `/todos/${todo.id}`, options);
      const again = await stage.send('PUT', `/todos/${todo.id}`, options);
      expectEqual(replayed(first), null, 'the first PUT: Idempotent-Replayed');
      expectEqual(replayed(again), 'true', 'the PUT sent again: Idempotent-Replayed');
      expectEqual(again.json(), applyPatch(todo, { completed: true }), 'the PUT sent again: its record');
    },
  },
  {
    name: 'PUT /todos/{id} → 422: an Idempotency-Key reused with another body',
    run: async (stage) => {
      const todo = await stage.create('key reused on update');
      const headers = idempotencyKey(key());
      await stage.send('PUT', `/todos/${todo.id}`, { body: { completed: true }, headers, expect: 200 });
      await stage.send('PUT', `/todos/${todo.id}`, { body: { completed: false }, headers, expect: 422 });
    },
  },
  {
    name: 'DELETE /todos/{id} → 200: text/plain "Deleted", and the record is gone',
    run: async (stage) => {
      const todo = await stage.create('to delete');
      const answer = await stage.send('DELETE', `/todos/${todo.id}`, { expect: 200 });
      expectEqual(answer.text, 'Deleted', `DELETE /todos/${todo.id}`);
      await stage.send('GET', `/todos/${todo.id}`, { expect: 404 });
    },
  },
  {
    name: 'DELETE /todos/{id} → 404: a deleted record',
    run: async (stage) => {
      const gone = await deletedRecord(stage, 'deleted twice');
      expectEqual(
        (await stage.send('DELETE', `/todos/${gone.id}`, { expect: 404 })).json(),
        NOT_FOUND,
        `DELETE /todos/${gone.id}`,
      );
    },
  },
  {
    name: 'DELETE /todos/{id} → 400: a malformed Idempotency-Key; nothing is deleted',
    run: async (stage) => {
      const todo = await stage.create('malformed key');
      await stage.send('DELETE', `/todos/${todo.id}`, { headers: idempotencyKey('not-quoted'), expect: 400 });
      await stage.send('GET', `/todos/${todo.id}`, { expect: 200 });
    },
  },
  {
    name: 'DELETE /todos/{id} sent again with its Idempotency-Key → 200, Idempotent-Replayed: true',
    run: async (stage) => {
      const todo = await stage.create('keyed delete');
      const options = { headers: idempotencyKey(key()), expect: 200 };
      const first = await stage.send('DELETE', `/todos/${todo.id}`, options);
      const again = await stage.send('DELETE', `/todos/${todo.id}`, options);
      expectEqual(replayed(first), null, 'the first DELETE: Idempotent-Replayed');
      expectEqual([replayed(again), again.text], ['true', 'Deleted'], 'the DELETE sent again');
    },
  },
  {
    name: 'DELETE /todos/{id} → 422: an Idempotency-Key reused on another record; it is kept',
    run: async (stage) => {
      const [first, second] = [await stage.create('key used on delete'), await stage.create('key reused on delete')];
      const headers = idempotencyKey(key());
      await stage.send('DELETE', `/todos/${first.id}`, { headers, expect: 200 });
      await stage.send('DELETE', `/todos/${second.id}`, { headers, expect: 422 });
      await stage.send('GET', `/todos/${second.id}`, { expect: 200 });
    },
  },
  {
    name: 'GET /todos/{id} → 304: If-None-Match naming its ETag, no body; 400 for a malformed If-None-Match',
    run: async (stage) => {
      const todo = await stage.create('cached');
      const path = `/todos/${todo.id}`;
      const etag = etagOf(await stage.send('GET', path, { expect: 200 }));
      const again = await stage.send('GET', path, { headers: { 'if-none-match': etag }, expect: 304 });
      expectEqual([again.text, again.headers.get('etag')], ['', etag], `GET ${path} with If-None-Match`);
      await stage.send('GET', path, { headers: { 'if-none-match': 'not-quoted' }, expect: 400 });
    },
  },
  {
    name: 'GET /todos → 304: If-None-Match naming the list’s ETag; 400 for a malformed If-None-Match',
    run: async (stage) => {
      // Other clients of a stage in use may change the list between the two requests: a few tries.
      let answer: Answer | undefined;
      for (let tries = 0; tries < 3 && answer?.status !== 304; tries++) {
        const etag = etagOf(await stage.send('GET', '/todos', { expect: 200 }));
        answer = await stage.send('GET', '/todos', { headers: { 'if-none-match': etag } });
      }
      expectEqual(answer?.status, 304, 'GET /todos with the If-None-Match of the list just read');
      await stage.send('GET', '/todos', { headers: { 'if-none-match': 'not-quoted' }, expect: 400 });
    },
  },
  {
    name: 'PUT /todos/{id} → 412: If-Match naming the ETag it had before a change; nothing changes',
    run: async (stage) => {
      const todo = await stage.create('edited in two tabs');
      const path = `/todos/${todo.id}`;
      const read = etagOf(await stage.send('GET', path, { expect: 200 }));
      const changed = await stage.send('PUT', path, {
        body: { completed: true },
        headers: { 'if-match': read },
        expect: 200,
      });
      const stale = { body: { title: stage.title('lost update') }, headers: { 'if-match': read } };
      await stage.send('PUT', path, { ...stale, expect: 412 });
      expectEqual((await stage.send('GET', path, { expect: 200 })).json(), changed.json(), `GET ${path} after the 412`);
      await stage.send('PUT', path, {
        body: { completed: false },
        headers: { 'if-match': etagOf(changed) },
        expect: 200,
      });
    },
  },
  {
    name: 'PUT /todos/{id} → 412 sent again with its Idempotency-Key → 412 again, Idempotent-Replayed: true',
    run: async (stage) => {
      const todo = await stage.create('stale keyed update');
      const path = `/todos/${todo.id}`;
      const read = etagOf(await stage.send('GET', path, { expect: 200 }));
      await stage.send('PUT', path, { body: { completed: true }, expect: 200 });
      const options = {
        body: { completed: false },
        headers: { 'if-match': read, ...idempotencyKey(key()) },
        expect: 412,
      };
      const first = await stage.send('PUT', path, options);
      const again = await stage.send('PUT', path, options);
      expectEqual([replayed(first), replayed(again)], [null, 'true'], 'the 412 and its retry: Idempotent-Replayed');
    },
  },
  {
    name: 'DELETE /todos/{id} → 412: If-Match naming the ETag it had before a change; the record stays',
    run: async (stage) => {
      const todo = await stage.create('deleted in two tabs');
      const path = `/todos/${todo.id}`;
      const read = etagOf(await stage.send('GET', path, { expect: 200 }));
      await stage.send('PUT', path, { body: { completed: true }, expect: 200 });
      await stage.send('DELETE', path, { headers: { 'if-match': read }, expect: 412 });
      await stage.send('GET', path, { expect: 200 });
    },
  },
  {
    name: 'GET /todos/{id} → 412: If-Match naming the ETag it had before a change, or its ETag made weak',
    run: async (stage) => {
      const todo = await stage.create('read only if unchanged');
      const path = `/todos/${todo.id}`;
      const read = etagOf(await stage.send('GET', path, { expect: 200 }));
      await stage.send('GET', path, { headers: { 'if-match': read }, expect: 200 });
      const weak = await stage.send('GET', path, { headers: { 'if-match': `W/${read}` }, expect: 412 });
      expectThat(
        (weak.json() as { error: string }).error.includes('weak tag'),
        `GET ${path} with a weak If-Match: the 412 does not say that a weak tag never matches`,
      );
      await stage.send('PUT', path, { body: { completed: true }, expect: 200 });
      await stage.send('GET', path, { headers: { 'if-match': read }, expect: 412 });
    },
  },
  {
    name: 'GET /todos → 412: If-Match naming the list’s ETag, which is weak; 200 for If-Match: *',
    run: async (stage) => {
      const etag = etagOf(await stage.send('GET', '/todos', { expect: 200 }));
      await stage.send('GET', '/todos', { headers: { 'if-match': etag }, expect: 412 });
      await stage.send('GET', '/todos', { headers: { 'if-match': '*' }, expect: 200 });
    },
  },
  {
    name: 'PUT /todos/{id} → 412: If-None-Match: * on a record that exists, or naming its ETag; nothing changes',
    run: async (stage) => {
      const todo = await stage.create('put only if new');
      const path = `/todos/${todo.id}`;
      const etag = etagOf(await stage.send('GET', path, { expect: 200 }));
      for (const ifNoneMatch of ['*', etag]) {
        const body = { title: stage.title('overwritten') };
        await stage.send('PUT', path, { body, headers: { 'if-none-match': ifNoneMatch }, expect: 412 });
      }
      expectEqual((await stage.send('GET', path, { expect: 200 })).json(), todo, `GET ${path} after the 412s`);
    },
  },
  {
    name: 'DELETE /todos/{id} → 412: If-None-Match naming its ETag; the record stays',
    run: async (stage) => {
      const todo = await stage.create('delete only if changed');
      const path = `/todos/${todo.id}`;
      const etag = etagOf(await stage.send('GET', path, { expect: 200 }));
      await stage.send('DELETE', path, { headers: { 'if-none-match': etag }, expect: 412 });
      await stage.send('GET', path, { expect: 200 });
    },
  },
  {
    name: 'PUT and DELETE /todos/{id} → 400: a malformed If-None-Match; nothing changes',
    run: async (stage) => {
      const todo = await stage.create('malformed If-None-Match');
      const path = `/todos/${todo.id}`;
      const headers = { 'if-none-match': 'not-quoted' };
      await stage.send('PUT', path, { body: { completed: true }, headers, expect: 400 });
      await stage.send('DELETE', path, { headers, expect: 400 });
      expectEqual((await stage.send('GET', path, { expect: 200 })).json(), todo, `GET ${path} after the 400s`);
    },
  },
  {
    name: 'POST and PUT → 400: a title that is not well-formed Unicode (a lone surrogate, legal in JSON)',
    run: async (stage) => {
      const todo = await stage.create('lone surrogate');
      // JSON.stringify sends it as the escape `\udc00`; the title still names this run, for the cleanup.
      const body = { title: `${stage.title('lone')}\udc00` };
      await stage.send('POST', '/todos', { body, expect: 400 });
      await stage.send('PUT', `/todos/${todo.id}`, { body, expect: 400 });
      expectEqual((await stage.send('GET', `/todos/${todo.id}`, { expect: 200 })).json(), todo, 'after the 400s');
    },
  },
  {
    name: 'PATCH /todos/{id} → 404 from the gateway: a route openapi.yaml does not list',
    run: async (stage) => {
      const todo = await stage.create('patched');
      await stage.send('PATCH', `/todos/${todo.id}`, { body: { completed: true }, expect: 404 });
      expectEqual((await stage.send('GET', `/todos/${todo.id}`, { expect: 200 })).json(), todo, 'after the PATCH');
    },
  },
  {
    name: `CORS: a preflight from ${FOREIGN_ORIGIN} is allowed POST, PUT and DELETE with Content-Type, Idempotency-Key, If-Match and If-None-Match`,
    run: async (stage) => {
      const todo = await stage.create('preflighted');
      await expectPreflightAllows(stage, '/todos', 'POST');
      await expectPreflightAllows(stage, `/todos/${todo.id}`, 'PUT');
      await expectPreflightAllows(stage, `/todos/${todo.id}`, 'DELETE');
    },
  },
  {
    name: `CORS: a POST from ${FOREIGN_ORIGIN} is readable there, Location, Idempotent-Replayed, ETag and Retry-After exposed`,
    run: async (stage) => {
      const answer = await stage.send('POST', '/todos', {
        body: { title: stage.title('from another origin') },
        headers: { origin: FOREIGN_ORIGIN, ...idempotencyKey(key()) },
        expect: 201,
      });
      const origin = answer.headers.get('access-control-allow-origin');
      expectThat(origin === '*' || origin === FOREIGN_ORIGIN, `POST /todos: Access-Control-Allow-Origin is ${origin}`);
      const exposed = listed(answer, 'access-control-expose-headers');
      // Retry-After comes with a 503, a 409 or the gateway's 429, which no check may cause: the
      // list that exposes it is the same on every answer.
      for (const header of ['location', 'idempotent-replayed', 'etag', 'retry-after']) {
        expectThat(
          exposed.includes('*') || exposed.includes(header),
          `POST /todos: Access-Control-Expose-Headers (${exposed.join(',')}) leaves out ${header}`,
        );
      }
    },
  },
];
