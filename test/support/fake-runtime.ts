import FakeTimers from '@sinonjs/fake-timers';
import type { Runtime } from '../../lib/runtime';

/**
 * A Runtime (lib/runtime.ts) whose time and timers are a fake clock's, installed nowhere, so a test
 * moves time itself (`clock.tickAsync`): the store's waits, deadlines and retries without a
 * wall-clock race. Chance is fixed; `uuid` is what the test passes.
 */
export function fakeRuntime(
  start: number,
  uuid: () => string,
): { clock: ReturnType<typeof FakeTimers.createClock>; runtime: Runtime } {
  const clock = FakeTimers.createClock(start);
  const runtime: Runtime = {
    now: () => clock.now,
    after: (ms, run) => {
      const timer = clock.setTimeout(run, ms);
      return () => {
        clock.clearTimeout(timer);
      };
    },
    random: () => 0.5,
    uuid,
  };
  return { clock, runtime };
}
