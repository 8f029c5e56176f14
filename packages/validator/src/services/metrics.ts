import type { ErrorCode } from '@tensormine/protocol';
import type { Storage } from '../store/types.js';

/** Persisted counter names. */
export const COUNTERS = {
  challengesIssued: 'challenges_issued',
  proofsValid: 'proofs_valid',
  proofsRejected: 'proofs_rejected',
  hexChallengesIssued: 'hex_challenges_issued',
  blocksRejected: 'blocks_rejected',
  sharesAccepted: 'pool_shares_accepted',
  sharesStale: 'pool_shares_stale',
  sharesRejected: 'pool_shares_rejected',
  /** Prefix of `rejected.<code>`: rejections of proofs and blocks by reason. */
  rejectedPrefix: 'rejected.',
  /** Accumulated serving time in milliseconds, and the first start (Unix ms). */
  uptimeMs: 'uptime_ms',
  firstStartMs: 'first_start_ms',
} as const;

export interface CounterSnapshot {
  readonly challengesIssued: number;
  readonly proofsValid: number;
  readonly proofsRejected: number;
  readonly blocksAccepted: number;
  readonly blocksRejected: number;
  /** Rejected proofs and blocks per error code. */
  readonly rejectionsByReason: Readonly<Record<string, number>>;
}

/** What a miner submits: a v4.0 proof, a hexchain block, or a pool share. */
export type ResultKind = 'proof' | 'block' | 'share';

/** What happened in this process since it started: the Prometheus counters of this node. */
export interface ProcessCounts {
  readonly accepted: Readonly<Record<ResultKind, number>>;
  /** By `${kind} ${code}`. */
  readonly rejected: ReadonlyMap<string, number>;
  readonly challengesIssued: Readonly<Record<'tensor' | 'hexchain', number>>;
}

/**
 * Request timing and outcomes (in memory, since this process started: this node's Prometheus
 * counters) and the persisted counters of the node (challenges, proofs, blocks, rejections by
 * reason, serving time: in a cluster, the network's totals).
 */
export class Metrics {
  requestsTotal = 0;
  readonly #accepted: Record<ResultKind, number> = { proof: 0, block: 0, share: 0 };
  readonly #rejected = new Map<string, number>();
  readonly #issued = { tensor: 0, hexchain: 0 };
  #responseMsTotal = 0;
  #lastBeat: number;
  readonly #uptimeMs: string;
  readonly #firstStartMs: string;

  /**
   * @param node In a cluster, the node id: the serving time (uptime_pct) is kept per node, since
   *   the nodes share the other counters (the network's totals).
   */
  constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
    node?: string,
  ) {
    this.#lastBeat = now();
    const suffix = node === undefined ? '' : `.node.${node}`;
    this.#uptimeMs = `${COUNTERS.uptimeMs}${suffix}`;
    this.#firstStartMs = `${COUNTERS.firstStartMs}${suffix}`;
  }

  observeResponse(ms: number): void {
    this.requestsTotal++;
    this.#responseMsTotal += ms;
  }

  avgResponseTimeMs(): number {
    return this.requestsTotal === 0
      ? 0
      : Math.round((this.#responseMsTotal / this.requestsTotal) * 1000) / 1000;
  }

  /** Counts a result accepted by this node (after its transaction committed). */
  recordAccepted(kind: ResultKind): void {
    this.#accepted[kind]++;
  }

  /** Counts challenges issued by this node (after their transaction committed). */
  recordIssued(kind: 'tensor' | 'hexchain', count = 1): void {
    this.#issued[kind] += count;
  }

  /**
   * Counts a pool share refused as stale (`share_stale`) in this process; the persisted count is
   * written by the share's own transaction.
   */
  recordStaleShare(): void {
    this.#countRejected('share', 'share_stale');
  }

  /** This node's counts since it started (read by the Prometheus series at each scrape). */
  processCounts(): ProcessCounts {
    return { accepted: this.#accepted, rejected: this.#rejected, challengesIssued: this.#issued };
  }

  #countRejected(kind: ResultKind, code: string): void {
    const key = `${kind} ${code}`;
    this.#rejected.set(key, (this.#rejected.get(key) ?? 0) + 1);
  }

  /** Counts a rejected proof, block or pool share by reason, in its own transaction. */
  async recordRejection(code: ErrorCode, kind: 'proof' | 'block' | 'share'): Promise<void> {
    this.#countRejected(kind, code);
    await this.storage.transaction(
      async (tx) => {
        await tx.counters.add(
          kind === 'proof'
            ? COUNTERS.proofsRejected
            : kind === 'block'
              ? COUNTERS.blocksRejected
              : COUNTERS.sharesRejected,
          1,
        );
        await tx.counters.add(`${COUNTERS.rejectedPrefix}${code}`, 1);
      },
      // Nothing is read: additions only.
      { isolation: 'row-locks' },
    );
  }

  /** The persisted counters, read together (GET /status and GET /admin/metrics). */
  async snapshot(): Promise<CounterSnapshot> {
    return this.storage.read(async (tx) => {
      const reasons = await tx.counters.list(COUNTERS.rejectedPrefix);
      const rejectionsByReason: Record<string, number> = {};
      for (const [name, count] of Object.entries(reasons)) {
        rejectionsByReason[name.slice(COUNTERS.rejectedPrefix.length)] = count;
      }
      return {
        challengesIssued: await tx.counters.get(COUNTERS.challengesIssued),
        proofsValid: await tx.counters.get(COUNTERS.proofsValid),
        proofsRejected: await tx.counters.get(COUNTERS.proofsRejected),
        // Not a counter: every accepted block has its own height, 1, 2, ... (the chain's
        // height is their count), so a block's transaction writes no counter row (one statement
        // and one row lock less per block; docs/storage.md, "Few round trips").
        blocksAccepted: (await tx.blocks.head()).height,
        blocksRejected: await tx.counters.get(COUNTERS.blocksRejected),
        rejectionsByReason,
      };
    });
  }

  /** Records the first start if this database never saw one. */
  async start(): Promise<void> {
    this.#lastBeat = this.now();
    await this.storage.transaction(async (tx) => {
      if ((await tx.counters.get(this.#firstStartMs)) === 0)
        await tx.counters.add(this.#firstStartMs, this.#lastBeat);
    });
  }

  /** Adds the serving time since the last beat to the persisted total (call periodically and at close). */
  async beat(): Promise<void> {
    const now = this.now();
    const elapsed = Math.max(0, now - this.#lastBeat);
    this.#lastBeat = now;
    await this.storage.transaction((tx) => tx.counters.add(this.#uptimeMs, elapsed));
  }

  /**
   * Percentage of the time since the first start of this database during which a validator
   * served from it, including the time since the last beat.
   */
  async uptimePct(): Promise<number> {
    const { first, served } = await this.storage.read(async (tx) => ({
      first: await tx.counters.get(this.#firstStartMs),
      served: await tx.counters.get(this.#uptimeMs),
    }));
    const now = this.now();
    const total = now - first;
    if (first === 0 || total <= 0) return 100;
    const pct = (100 * (served + (now - this.#lastBeat))) / total;
    return Math.min(100, Math.round(pct * 100) / 100);
  }
}
