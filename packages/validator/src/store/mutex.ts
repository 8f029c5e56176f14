/**
 * A first-in first-out asynchronous lock: `run` calls wait for each other, in call order.
 * Not reentrant: calling `run` from inside a `run` callback waits forever (callers detect it).
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();
  #pending = 0;

  /** Callbacks running or waiting. */
  get pending(): number {
    return this.#pending;
  }

  async run<T>(fn: () => T | Promise<T>): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#pending++;
    try {
      await previous;
      return await fn();
    } finally {
      this.#pending--;
      release();
    }
  }
}
