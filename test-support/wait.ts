import { WAIT_TIMEOUT_MS } from './timeouts.ts';

/**
 * Waiting for a condition: the one way a test waits for something a real process, socket,
 * server or page does. It polls until the condition holds and fails (naming what it waited
 * for) only after a generous bound, so a slow machine makes a test slower, never red. It is
 * never a way to let time pass: time-dependent behaviour runs on an injected clock
 * (test-support/clock.ts) that the test advances.
 *
 * The timers are the real ones, captured when this module loads, so that a wait still works
 * inside a test that fakes the global timers.
 */
const realSetTimeout = globalThis.setTimeout;
const realClearTimeout = globalThis.clearTimeout;
const realNow = performance.now.bind(performance);

export interface WaitOptions {
  /** The bound: default WAIT_TIMEOUT_MS (test-support/timeouts.ts). */
  readonly timeoutMs?: number;
  /** Between two checks. Default 20 ms. */
  readonly intervalMs?: number;
  /** What the failure shows besides the condition's name (the output so far, the state). */
  readonly context?: () => string;
}

/** Polls `check` until it returns true; rejects after the bound with `timed out waiting for <what>`. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  options: WaitOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? WAIT_TIMEOUT_MS;
  const deadline = realNow() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (realNow() > deadline) {
      const context = options.context?.();
      throw new Error(
        `timed out after ${Math.round(timeoutMs)} ms waiting for ${what}${context ? `; so far:\n${context}` : ''}`,
      );
    }
    await pause(options.intervalMs ?? 20);
  }
}

/**
 * Polls `read` until it returns a value other than undefined, and returns that value (or
 * rejects after the bound, as waitFor).
 */
export async function waitForValue<T>(
  read: () => T | undefined | Promise<T | undefined>,
  what: string,
  options: WaitOptions = {},
): Promise<T> {
  let value: T | undefined;
  await waitFor(
    async () => {
      value = await read();
      return value !== undefined;
    },
    what,
    options,
  );
  return value as T;
}

/**
 * Resolves `promise`, or rejects after the bound naming `what`: for an event a test awaits
 * (a process's exit, a message), so that a missing one fails with a name instead of the
 * test's timeout.
 */
export function within<T>(
  promise: Promise<T>,
  what: string,
  timeoutMs: number = WAIT_TIMEOUT_MS,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = realSetTimeout(
      () => reject(new Error(`timed out after ${Math.round(timeoutMs)} ms waiting for ${what}`)),
      timeoutMs,
    );
    promise.then(
      (value) => {
        realClearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        realClearTimeout(timer);
        reject(error);
      },
    );
  });
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}
