import type { WorkSource } from '../work-source.js';
import type { Log } from './events.js';

/**
 * The state of each validator's connection: down since when, reported once when lost and once
 * when restored (`connection-lost`, `connection-restored`). Keyed by the validator's URL, else
 * the source's label.
 */
export class Connections {
  /** The validators that are down, by key, and since when. */
  readonly #down = new Map<string, number>();

  constructor(
    private readonly source: WorkSource,
    private readonly now: () => number,
    private readonly log: Log,
    /** A validator is back: its results are due again. */
    private readonly onRestored: (url: string) => void,
  ) {}

  /** The key of a validator's connection state: its URL, else the source's label. */
  key(endpoint: string | undefined): string {
    return endpoint ?? this.source.url ?? 'validator';
  }

  isDown(key: string): boolean {
    return this.#down.has(key);
  }

  lost(url: string, reason: string, retryInMs: number): void {
    if (this.#down.has(url)) return;
    this.#down.set(url, this.now());
    this.log({ type: 'connection-lost', ...(url === 'validator' ? {} : { url }), reason, retryInMs });
  }

  /** `url` is back (or `serving` answers in its place). */
  restored(url: string, serving = url): void {
    const since = this.#down.get(url);
    if (since === undefined) return;
    this.#down.delete(url);
    this.#down.delete(serving);
    this.log({
      type: 'connection-restored',
      ...(serving === 'validator' ? {} : { url: serving }),
      downMs: this.now() - since,
    });
    this.onRestored(url);
  }
}
