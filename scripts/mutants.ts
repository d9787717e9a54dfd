import type { Mutant } from './mutation';

/**
 * The defects `npm run mutate` puts into the store, one at a time (scripts/mutation.ts): each one a
 * mistake someone could make while changing the code, not a random operator swap. A mutant's
 * `find` must be in its file exactly once: when the code it names changes, the run stops and says
 * so, and the mutant is to be written again against the new code (its `why` says what to keep).
 * docs/testing.md, "How sharp the tests are", gives the last run's score and why each survivor lives.
 */
export const MUTANTS: readonly Mutant[] = [
  // lib/dynamodb/outcome.ts: what became of a write.
  {
    id: 'outcome-500-not-applied',
    file: 'lib/dynamodb/outcome.ts',
    find: "if (status >= 500) return 'maybe applied';",
    replace: "if (status >= 500) return 'not applied';",
    why: 'a 500 read as a refusal: DynamoDB may have applied the copy, and a new token would write the POST twice',
  },
  {
    id: 'outcome-in-progress-refused',
    file: 'lib/dynamodb/outcome.ts',
    find: "if (code === 'TransactionInProgressException') return 'unanswered';",
    replace: "if (code === 'TransactionInProgressException') return 'not applied';",
    why: 'another copy still in progress taken for a refusal: that copy may yet apply',
  },
  {
    id: 'outcome-conditions-forget-unanswered',
    file: 'lib/dynamodb/outcome.ts',
    find: 'this.#maybeApplied = false;',
    replace: 'this.#maybeApplied = false;\n    this.#unanswered = false;',
    why: 'a failed condition also forgets the copies still on their way: a held copy lands after a new token',
  },
  {
    id: 'outcome-fate-ignores-unanswered',
    file: 'lib/dynamodb/outcome.ts',
    find: "return this.#maybeApplied || this.#unanswered ? 'unknown' : 'not applied';",
    replace: "return this.#maybeApplied ? 'unknown' : 'not applied';",
    why: 'a timeout reported as never sent: the request is "not applied" while a copy of it may land',
  },
  // lib/dynamodb/transaction.ts: one token until no copy can land.
  {
    id: 'transaction-refused-ends-while-unknown',
    file: 'lib/dynamodb/transaction.ts',
    find: "if (verdict === 'final' || (verdict === 'refused' && transaction.copies.fate === 'not applied')) {",
    replace: "if (verdict === 'final' || verdict === 'refused') {",
    why: 'a refusal ends the transaction while an earlier copy may still land: the caller builds a new token',
  },
  {
    id: 'transaction-superseded-while-unknown',
    file: 'lib/dynamodb/transaction.ts',
    find: "if (transaction.copies.fate === 'not applied' && (await watch.superseded?.())) return 'superseded';",
    replace: "if (await watch.superseded?.()) return 'superseded';",
    why: 'a transaction dropped for a moved counter while one of its copies may still land: the move may be its own',
  },
  {
    id: 'transaction-unknown-copy-thrown',
    file: 'lib/dynamodb/transaction.ts',
    find: "if (reasons === undefined && !(error instanceof DynamoDbError && error.copy !== 'not applied')) throw error;",
    replace: 'if (reasons === undefined) throw error;',
    why: "a 500 or a timeout past the client's attempts ends the transaction with its fate unknown, instead of the same token again",
  },
  {
    id: 'transaction-reasons-off-by-one',
    file: 'lib/dynamodb/transaction.ts',
    find: 'const reason = reasons[i];',
    replace: 'const reason = reasons[i + 1];',
    why: "each action read with the next action's reason: a cancellation misrouted to another role",
  },
  // lib/dynamodb/claims.ts: an Idempotency-Key's claim.
  {
    id: 'claims-expired-claim-kept',
    file: 'lib/dynamodb/claims.ts',
    find: "ConditionExpression: 'attribute_not_exists(pk) OR #expires <= :now',",
    replace: "ConditionExpression: 'attribute_not_exists(pk)',",
    why: "an expired claim not yet deleted (the table's time to live takes up to two days) still holds its key",
  },
  {
    id: 'claims-fingerprint-ignored',
    file: 'lib/dynamodb/claims.ts',
    find: 'if (kept.fingerprint !== claim.fingerprint) throw new KeyReused();',
    replace: '',
    why: "a key sent with another request replays the first request's answer instead of a 422",
  },
  {
    id: 'claims-412-not-replayed',
    file: 'lib/dynamodb/claims.ts',
    find: 'if (kept.preconditionFailed) throw new PreconditionFailed({ replayed: true });',
    replace: '',
    why: 'the retry of a request answered 412 gets another answer than its 412',
  },
  {
    id: 'claims-in-flight-uncontended',
    file: 'lib/dynamodb/claims.ts',
    find: 'if (key.contended && signal.aborted) throw new KeyInFlight();',
    replace: 'if (signal.aborted) throw new KeyInFlight();',
    why: 'every keyed write stopped by its deadline answers 409 "in flight", even when no other request held its key',
  },
  // lib/dynamodb/queue-plan.ts: the queue's decisions.
  {
    id: 'plan-second-copy-kept',
    file: 'lib/dynamodb/queue-plan.ts',
    find: 'if (copy || isStale(intent, now) || decided.done.has(intent.uuid)) {',
    replace: 'if (isStale(intent, now) || decided.done.has(intent.uuid)) {',
    why: "a second intent of one POST (its put's late copy) is written too: one POST, two records",
  },
  {
    id: 'plan-stale-in-wrong-units',
    file: 'lib/dynamodb/queue-plan.ts',
    find: 'return intent.id / 1000 < now - INTENT_LIFETIME_MS;',
    replace: 'return intent.id < now - INTENT_LIFETIME_MS;',
    why: "an intent's id compared as milliseconds (it is ms × 1000): no intent is ever stale, and a POST that gave up is written",
  },
  {
    id: 'plan-one-key-twice',
    file: 'lib/dynamodb/queue-plan.ts',
    find: 'if (claim && keys.has(claim.key)) continue;',
    replace: '',
    why: 'two POSTs with one Idempotency-Key in one commit: two records for one key, or a transaction DynamoDB refuses',
  },
  {
    id: 'plan-mine-left-out',
    file: 'lib/dynamodb/queue-plan.ts',
    find: 'if (bytes > MAX_TRANSACTION_BYTES && intent.uuid !== mine) continue;',
    replace: 'if (bytes > MAX_TRANSACTION_BYTES) continue;',
    why: 'a head whose own request does not fit after the others commits without itself, again and again',
  },
  {
    id: 'plan-cut-page-taken-whole',
    file: 'lib/dynamodb/queue-plan.ts',
    find: 'const covered = look.complete || (last !== undefined && last.id >= mine.id);',
    replace: 'const covered = look.complete || last !== undefined;',
    why: 'a page DynamoDB cut before the POST taken as the whole queue: a POST still queued thinks it left, and gives up',
  },
  {
    id: 'plan-replay-as-new',
    file: 'lib/dynamodb/queue-plan.ts',
    find: 'outcomes.set(uuid, { todo: outcome.value, replayed: true });',
    replace: 'outcomes.set(uuid, { todo: outcome.value, replayed: false });',
    why: "a queued POST whose key was claimed before answers 201 as if it had written, not the key's replay",
  },
  // lib/dynamodb/queue.ts: the queue's I/O.
  {
    id: 'queue-commit-without-outcome',
    file: 'lib/dynamodb/queue.ts',
    find: 'transaction.add(`outcome ${intent.uuid}`, outcomePut(table, intent.uuid, { todo }, now));',
    replace: '',
    why: 'a commit leaves no outcome for the POSTs it wrote: one that takes itself back then withdraws a POST already written',
  },
  {
    id: 'queue-lease-compared-wrong-way',
    file: 'lib/dynamodb/queue.ts',
    find: 'OR #takenAt < :expired OR #takenBy = :by)',
    replace: 'OR #takenAt > :expired OR #takenBy = :by)',
    why: 'a head taken over within its lease by a second POST, and never after a taker-over stalls itself',
  },
  {
    id: 'queue-outcome-unconditional',
    file: 'lib/dynamodb/queue.ts',
    find: "[EXPIRES]: expiresIn(OUTCOME_LIFETIME_S, now) },\n      ConditionExpression: 'attribute_not_exists(pk)',",
    replace: '[EXPIRES]: expiresIn(OUTCOME_LIFETIME_S, now) },',
    why: "an outcome written over another: a POST's withdrawal erases the record a commit gave it, and it answers 503 for a stored record",
  },
  {
    id: 'queue-no-time-to-retract',
    file: 'lib/dynamodb/queue.ts',
    find: 'deadline - RETRACT_BEFORE_MS - table.runtime.now(),',
    replace: 'deadline - table.runtime.now(),',
    why: 'a queued POST gives up at its deadline itself, too late to take its intent back: it answers 503 and is written later',
  },
  // lib/dynamodb/posts.ts: POSTs alone and batched.
  {
    id: 'posts-ids-by-batch-place',
    file: 'lib/dynamodb/posts.ts',
    find: 'todo: createTodo(post.request, counter.next + j)',
    replace: 'todo: createTodo(post.request, counter.next + index)',
    why: 'ids by place in the batch instead of among the POSTs still open: ids skipped once some are settled',
  },
  {
    id: 'posts-claim-not-written',
    file: 'lib/dynamodb/posts.ts',
    find: 'if (claim !== undefined) transaction.add(`claim ${index}`, claimPut(table, claim, { todo }, now));',
    replace: '',
    why: "a keyed POST written without its key's claim: its retry writes a second record",
  },
  // lib/dynamodb/client.ts: retries and each copy's fate.
  {
    id: 'client-throttle-final',
    file: 'lib/dynamodb/client.ts',
    find: "if (status === 429 || THROTTLES.includes(error.name)) return 'throttle';",
    replace: "if (status === 429) return 'throttle';",
    why: 'a ProvisionedThroughputExceededException (a 400) not sent again: a throttled write fails at once',
  },
  {
    id: 'client-conflict-final',
    file: 'lib/dynamodb/client.ts',
    find: "if (error.name === 'TransactionConflictException') return 'conflict';",
    replace: '',
    why: "a single write that met a transaction on its item is not sent again: the queue's puts fail",
  },
  {
    id: 'client-any-cancellation-read-conditions',
    file: 'lib/dynamodb/client.ts',
    find: "if (failure.cancellationReasons?.some(({ code }) => code === 'ConditionalCheckFailed')) copies.conditionsRead();",
    replace: 'if (failure.cancellationReasons !== undefined) copies.conditionsRead();',
    why: 'a conflict or a throttle taken to prove no copy applied: it is found before the token is read, and proves nothing',
  },
  {
    id: 'client-abort-not-sent',
    file: 'lib/dynamodb/client.ts',
    find: "if (signal.aborted || !(error instanceof RequestFailure)) {\n      copies.add('unanswered');",
    replace: "if (signal.aborted || !(error instanceof RequestFailure)) {\n      copies.add('not applied');",
    why: 'a copy aborted by the deadline counted as never sent: it may have gone out',
  },
  {
    id: 'client-timeout-not-sent',
    file: 'lib/dynamodb/client.ts',
    find: "const copy = error.mayHaveGone ? 'unanswered' : 'not applied';",
    replace: "const copy = 'not applied';",
    why: 'a timeout after the socket connected reported as never sent: the copy may land',
  },
  // lib/dynamodb/decisions.ts, seed.ts, store.ts: files others edit often; re-checked at each run.
  {
    id: 'decisions-conflict-final',
    file: 'lib/dynamodb/decisions.ts',
    find: "conflict: 'met others',",
    replace: "conflict: 'final',",
    why: 'a conflict mapped to final: the transaction is rebuilt with a new token while its copy may land',
  },
  {
    id: 'decisions-claim-expiry-units',
    file: 'lib/dynamodb/decisions.ts',
    find: 'expires * 1000 <= now',
    replace: 'expires <= now',
    why: "a claim's expiry (epoch seconds) compared with milliseconds: every claim found reads as expired, nothing replays",
  },
  {
    id: 'seed-counter-unconditional',
    file: 'lib/dynamodb/seed.ts',
    find: "Item: { ...COUNTER_KEY, ...fresh },\n        ConditionExpression: 'attribute_not_exists(pk)',",
    replace: 'Item: { ...COUNTER_KEY, ...fresh },',
    why: "a seed that lands after another container's puts the counter back: ids reused, deleted records back",
  },
  {
    id: 'store-aborted-post-kept',
    file: 'lib/dynamodb/store.ts',
    find: 'if (index >= 0) this.#pending.splice(index, 1);',
    replace: '',
    why: 'a POST that timed out while waiting for a batch stays in it: answered 503, then written',
  },
  // lib/aws/: signing, credentials, endpoints.
  {
    id: 'clock-skew-one-way',
    file: 'lib/aws/clock.ts',
    find: 'Math.abs(awsTime - timeOf(signedAt)) < SKEW_MS',
    replace: 'awsTime - timeOf(signedAt) < SKEW_MS',
    why: "a clock ahead of AWS's is never corrected: every request refused as signed in the future",
  },
  {
    id: 'clock-corrected-backwards',
    file: 'lib/aws/clock.ts',
    find: 'this.#offsetMs = awsTime - this.#now();',
    replace: 'this.#offsetMs = this.#now() - awsTime;',
    why: 'the correction applied the wrong way: the clock twice as far off after it',
  },
  {
    id: 'credentials-refreshed-after-expiry',
    file: 'lib/aws/credentials.ts',
    find: 'held.expiration.getTime() - now() > REFRESH_BEFORE_MS',
    replace: 'held.expiration.getTime() > now()',
    why: 'credentials kept to their last millisecond: a request signed just before expiry is refused',
  },
  {
    id: 'credentials-fetch-per-caller',
    file: 'lib/aws/credentials.ts',
    find: 'fetching ??= new Promise<C>',
    replace: 'fetching = new Promise<C>',
    why: 'a burst of requests at the expiry starts one fetch each (an STS or SSO call each)',
  },
  {
    id: 'endpoint-global-before-service',
    file: 'lib/aws/endpoint.ts',
    find: 'firstSet(env[`AWS_ENDPOINT_URL_${id}`], env.AWS_ENDPOINT_URL)',
    replace: 'firstSet(env.AWS_ENDPOINT_URL, env[`AWS_ENDPOINT_URL_${id}`])',
    why: "AWS_ENDPOINT_URL wins over AWS_ENDPOINT_URL_DYNAMODB, unlike the SDKs: requests go to another service's endpoint",
  },
  {
    id: 'endpoint-govcloud-fips-host',
    file: 'lib/aws/endpoint.ts',
    find: "const name = fips && (dualStack || id !== 'aws-us-gov') ? 'dynamodb-fips' : 'dynamodb';",
    replace: "const name = fips ? 'dynamodb-fips' : 'dynamodb';",
    why: "GovCloud's FIPS endpoint named as elsewhere: a host the SDK's rules do not give",
  },
  {
    id: 'https-resent-unmarked',
    file: 'lib/aws/https.ts',
    find: 'return attempt(to, operation, body, signal, true);',
    replace: 'return attempt(to, operation, body, signal);',
    why: "a request signed again at AWS's time is not marked so: a second refusal is not explained as the clock's",
  },
  {
    id: 'https-connect-timeout-sent',
    file: 'lib/aws/https.ts',
    find: "request.destroy(new RequestFailure('TimeoutError', `no ${what} within ${ms} ms`, connected));",
    replace: "request.destroy(new RequestFailure('TimeoutError', `no ${what} within ${ms} ms`, true));",
    why: 'a copy that never connected counted as maybe sent: its write left "unknown", the request ends 503 where it could go on',
  },
];
