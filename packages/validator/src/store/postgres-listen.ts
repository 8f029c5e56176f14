import pg from 'pg';
import { StorageError } from './errors.js';
import { Mutex } from './mutex.js';
import { checkNotification } from './sql/scope.js';

type Handler = (payload: string) => void;

/**
 * `LISTEN` on one dedicated connection for every channel a storage listens to. The connection
 * is opened by the first `listen`; when it breaks (server restart, terminated session, network
 * loss) it is re-opened with a growing pause (0.1 s to 5 s) and every channel listened again,
 * then the `onReconnect` callbacks run: PostgreSQL does not keep notifications for a session
 * that was not listening, so those sent meanwhile are lost and the consumer must re-read.
 */
export class PostgresListener {
  readonly #config: pg.ClientConfig;
  readonly #handlers = new Map<string, Set<Handler>>();
  readonly #reconnectCallbacks = new Set<() => void>();
  /** Serialises connect, LISTEN, UNLISTEN and close. */
  readonly #mutex = new Mutex();
  #client: pg.Client | undefined;
  #closed = false;
  #reconnecting = false;

  constructor(config: pg.ClientConfig) {
    this.#config = config;
  }

  async listen(channel: string, handler: Handler): Promise<() => Promise<void>> {
    checkNotification(channel, '');
    const entry: Handler = (payload) => handler(payload);
    await this.#mutex.run(async () => {
      if (this.#closed) throw new StorageError('storage_closed', 'storage.listen() after close()');
      let set = this.#handlers.get(channel);
      const first = set === undefined;
      if (set === undefined) {
        set = new Set();
        this.#handlers.set(channel, set);
      }
      set.add(entry);
      try {
        const client = await this.#connected();
        // Channel names are checked: lowercase letters, digits and _, so they need no quoting.
        if (first) await client.query(`LISTEN ${channel}`);
      } catch (error) {
        set.delete(entry);
        if (set.size === 0) this.#handlers.delete(channel);
        throw error;
      }
    });
    let stopped = false;
    return async () => {
      if (stopped) return;
      stopped = true;
      await this.#mutex.run(async () => {
        const set = this.#handlers.get(channel);
        set?.delete(entry);
        if (set === undefined || set.size > 0) return;
        this.#handlers.delete(channel);
        // When the connection is down, there is nothing to stop: it will not LISTEN again.
        await this.#client?.query(`UNLISTEN ${channel}`).catch(() => undefined);
      });
    };
  }

  onReconnect(fn: () => void): () => void {
    const entry = () => fn();
    this.#reconnectCallbacks.add(entry);
    return () => this.#reconnectCallbacks.delete(entry);
  }

  async close(): Promise<void> {
    await this.#mutex.run(async () => {
      this.#closed = true;
      const client = this.#client;
      this.#client = undefined;
      await client?.end().catch(() => undefined);
    });
  }

  /** The listening connection, opened if needed (inside the mutex). */
  async #connected(): Promise<pg.Client> {
    if (this.#client !== undefined) return this.#client;
    const client = new pg.Client(this.#config);
    client.on('notification', (message) => this.#deliver(message.channel, message.payload ?? ''));
    const lost = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(() => undefined);
      void this.#reconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.connect();
    this.#client = client;
    return client;
  }

  async #reconnect(): Promise<void> {
    if (this.#reconnecting) return;
    this.#reconnecting = true;
    try {
      for (let attempt = 0; !this.#closed; attempt++) {
        const done = await this.#mutex
          .run(async () => {
            if (this.#closed) return true;
            if (this.#handlers.size === 0) return true; // connects again on the next listen
            const client = await this.#connected();
            for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${channel}`);
            return true;
          })
          .catch(() => {
            const client = this.#client;
            this.#client = undefined;
            client?.end().catch(() => undefined);
            return false;
          });
        if (done) break;
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 100 * 2 ** attempt)));
      }
    } finally {
      this.#reconnecting = false;
    }
    if (!this.#closed) {
      for (const fn of this.#reconnectCallbacks) {
        try {
          fn();
        } catch (error) {
          process.emitWarning(
            `an onListenReconnect callback threw: ${(error as Error)?.message ?? String(error)}`,
            {
              code: 'TENSORMINE_LISTENER',
            },
          );
        }
      }
    }
  }

  #deliver(channel: string, payload: string): void {
    for (const handler of this.#handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        process.emitWarning(
          `a listener of channel ${channel} threw: ${(error as Error)?.message ?? String(error)}`,
          {
            code: 'TENSORMINE_LISTENER',
          },
        );
      }
    }
  }
}
