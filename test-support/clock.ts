/**
 * A clock the test moves by hand: what a test gives a component as its `now` (Unix ms) so that
 * back-offs, expiries, retargets, rate limits and windows depend on the time the test sets,
 * never on how fast the machine runs the test.
 *
 * A component that also schedules timers (heartbeats, retries, flushes, yields) is tested
 * under vitest's fake timers instead (`vi.useFakeTimers()`, then `vi.advanceTimersByTimeAsync`):
 * they replace both the clock and the timers, and the test advances them.
 */
export interface TestClock {
  /** The current time, in Unix milliseconds: pass it as a component's `now` option. */
  readonly now: () => number;
  /** Moves the clock forward by `ms` (may be 0, never negative). */
  advance(ms: number): void;
  /** Moves the clock forward by `seconds`. */
  advanceSeconds(seconds: number): void;
  /** Sets the clock (may move it backwards: a test of a clock step). */
  set(ms: number): void;
  /** Where the clock started. */
  readonly start: number;
}

/**
 * A fixed instant (2027-01-15T08:00:00Z): far from any real time, so that a component that
 * reads the real clock instead of the injected one shows at once.
 */
export const TEST_EPOCH_MS = 1_800_000_000_000;

/**
 * A clock at `start` (default TEST_EPOCH_MS). A test that signs requests with the real clock's
 * timestamps gives `Date.now()` rounded to a second instead (`testClock(realSecond())`).
 */
export function testClock(start: number = TEST_EPOCH_MS): TestClock {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      if (!(ms >= 0)) throw new Error(`a test clock moves forward: advance(${ms})`);
      t += ms;
    },
    advanceSeconds(seconds) {
      this.advance(seconds * 1000);
    },
    set(ms) {
      t = ms;
    },
    start,
  };
}

/** The real time rounded down to a whole second: a start for a clock near the real one. */
export function realSecond(): number {
  return Math.floor(Date.now() / 1000) * 1000;
}

/**
 * A clock that follows the real one in steps of `stepMs`: for a component that must stay near
 * real time (it checks the real-clock timestamps of signed requests, within 60 s) while what it
 * schedules by elapsed time (a vardiff retarget after 4 share intervals) must not depend on how
 * fast the machine runs the test: between two steps its time stands still, so at most one
 * step's worth of elapsed time is seen per `stepMs` of real time, however slow the machine.
 */
export function steppedClock(stepMs: number): { readonly now: () => number; readonly start: number } {
  const start = realSecond();
  return { now: () => start + Math.floor((Date.now() - start) / stepMs) * stepMs, start };
}
