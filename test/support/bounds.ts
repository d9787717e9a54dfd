/**
 * How a test is bounded (docs/testing.md: work is bounded by its count, a wait by what it waits
 * for). Two kinds:
 *
 * - **Work that computes** (the simulator's search and its timing mode, fast-check's property runs,
 *   the model on the memory store, a list filled to its limit on it) is bounded by its own count:
 *   scripts and seeds, `numRuns` (fast-check's default of 100 where a test names none; no
 *   `timeout` or `interruptAfterTimeLimit`), commands, simulated time, the list's size. A machine
 *   that other jobs keep busy stretches its wall time as much as they like (a fresh clone's
 *   `npm test` at a load of 11 to 14 on 2 cores took the simulator's file to 612 s and a search
 *   past a 120 s bound; at a load of 20 the file took 29 minutes), so its jest timeout is
 *   ONLY_A_HANG_MS: there to end a hang, never a race with the machine. The `unit` and
 *   `simulation` projects, which start no other process, have it as their default
 *   (test/support/work-bound.ts): a test of theirs states no bound unless it waits on something.
 * - **A wait on another process** (a server, DynamoDB Local, a command, a socket) states its own
 *   bound, named for what it waits for and derived from it; in the projects that start processes
 *   (`dynamodb`, `e2e`, `system`, `fleet`, `external`) a test that states none gets
 *   jest.config.ts's TEST_WITHIN_MS.
 */

/**
 * Only a hang meets this. The longest work a test waits for, the search of a POST queued behind a
 * stalled head (2,301 runs, 47 s of CPU: `npm run simulate -- --scenario 'POST queued behind a
 * stalled head' --seeds 100 --jobs 1`), took 487 s in its test at a load of 20 on the 2-core
 * machine, the busiest it has been seen: an hour is seven times that.
 */
export const ONLY_A_HANG_MS = 60 * 60_000;
