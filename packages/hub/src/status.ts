import type { Game, GameStatus } from '@tensormine/protocol';

/**
 * Whether a game is online: a HEAD request to the game's configured URL (never any other
 * URL: callers name a game id, not a URL, and redirects are not followed), under a timeout.
 * Results are cached for `cacheMs`; concurrent asks for one game share one probe; at most
 * `concurrency` probes run at once over all games, the rest wait their turn.
 */
export interface StatusProberOptions {
  readonly timeoutMs: number;
  readonly cacheMs: number;
  readonly concurrency: number;
  readonly now?: () => number;
  /** Called after each probe with its duration (seconds) and outcome (the hub's metrics). */
  readonly onProbe?: (seconds: number, online: boolean) => void;
}

export class StatusProber {
  readonly #cache = new Map<string, { status: GameStatus; until: number }>();
  readonly #inFlight = new Map<string, Promise<GameStatus>>();
  readonly #waiting: (() => void)[] = [];
  #running = 0;
  readonly #now: () => number;
  /** Probes actually sent (for tests and metrics). */
  probesSent = 0;
  /** Asks answered from the cache, or by a probe already in flight (metrics). */
  cacheHits = 0;

  constructor(private readonly options: StatusProberOptions) {
    this.#now = options.now ?? Date.now;
  }

  async status(game: Game): Promise<GameStatus> {
    const cached = this.#cache.get(game.id);
    if (cached && cached.until > this.#now()) {
      this.cacheHits++;
      return cached.status;
    }
    const pending = this.#inFlight.get(game.id);
    if (pending) {
      this.cacheHits++;
      return pending;
    }
    const probe = this.#probe(game).finally(() => this.#inFlight.delete(game.id));
    this.#inFlight.set(game.id, probe);
    return probe;
  }

  async #probe(game: Game): Promise<GameStatus> {
    await this.#slot();
    let httpStatus: number | null = null;
    const started = performance.now();
    try {
      this.probesSent++;
      const response = await fetch(game.url, {
        method: 'HEAD',
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
        headers: { 'user-agent': 'tensormine-hub status probe' },
      });
      httpStatus = response.status;
      await response.body?.cancel();
    } catch {
      httpStatus = null; // timeout, refused connection, DNS failure, TLS error
    } finally {
      this.#release();
    }
    const status: GameStatus = {
      id: game.id,
      status: httpStatus !== null && httpStatus >= 200 && httpStatus < 400 ? 'online' : 'offline',
      checked_at: Math.floor(this.#now() / 1000),
      http_status: httpStatus,
    };
    this.#cache.set(game.id, { status, until: this.#now() + this.options.cacheMs });
    this.options.onProbe?.((performance.now() - started) / 1000, status.status === 'online');
    return status;
  }

  #slot(): Promise<void> {
    if (this.#running < this.options.concurrency) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}
