import type { FoundResult } from './found.js';
import type { MiningJob } from './job.js';

/**
 * Where work comes from and where results go. The CLI implements it with the SDK client
 * (solo: challenges from a validator, with failover); a pool client will be another. The
 * Miner never talks HTTP itself.
 */

/** The outcome of submitting one result. */
export type SubmitOutcome =
  /** The validator accepted it. `details` is its response (depth, block_hash, reward...). */
  | { readonly status: 'accepted'; readonly details?: Readonly<Record<string, unknown>> }
  /**
   * The validator answered with a definitive rejection: its error code (docs/errors.md), e.g.
   * `challenge_expired`, `coordinate_occupied`, `proof_replayed`. Not retried.
   */
  | { readonly status: 'rejected'; readonly code: string; readonly message: string }
  /**
   * The result could not be delivered (network error, validator down, 5xx, rate limited):
   * the Miner journals it and retries. A `submit` that throws counts as this.
   */
  | {
      readonly status: 'unavailable';
      readonly reason: string;
      /** The validator that could not be reached (its connection state is its own). */
      readonly endpoint?: string;
    };

/**
 * How jobs relate to results. `solo`: one result per challenge (a block or a proof), so a job
 * ends at its first result and the Miner fetches new work at once. `pool`: a job stays valid
 * for many shares and is replaced only when the source says it is stale or it expires.
 */
export interface MiningStrategy {
  readonly kind: 'solo' | 'pool';
  /** Whether a job continues after a result. */
  readonly continueAfterFound: boolean;
}

export const SOLO: MiningStrategy = { kind: 'solo', continueAfterFound: false };
export const POOL: MiningStrategy = { kind: 'pool', continueAfterFound: true };

export interface WorkSourceEvents {
  /**
   * The current work is stale: the lattice moved (the target cell was taken), the slot
   * changed, or the source switched validators. The Miner fetches new work.
   */
  stale: [reason: string];
}

export interface WorkSource {
  /** A label for logs and the control API (the validator URL in use). */
  readonly url?: string;
  /** Default SOLO. */
  readonly strategy?: MiningStrategy;
  /** The next job. Rejects when no validator can be reached (the Miner retries with backoff). */
  getWork(): Promise<MiningJob>;
  /** Submits a result (the source signs it: see `signFound`). */
  submit(found: FoundResult): Promise<SubmitOutcome>;
  /**
   * Optional: the validator a result must go to (the one that issued its work), when known.
   * The Miner keeps the journal's retries for a validator that is down on that validator's
   * back-off instead of trying each of its results.
   */
  endpointOf?(found: FoundResult): string | undefined;
  /**
   * Optional: a source that can tell when its work goes stale emits `stale` (an EventEmitter of
   * WorkSourceEvents fits).
   */
  on?(event: 'stale', listener: (reason: string) => void): unknown;
  off?(event: 'stale', listener: (reason: string) => void): unknown;
}
