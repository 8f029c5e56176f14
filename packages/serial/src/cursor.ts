import { type MiningJob, NONCE_SPACE_END } from '@tensormine/miner';

/** A nonce range [start, start + count). */
export interface NonceChunk {
  readonly start: number;
  readonly count: number;
}

/** The largest count of one board job: the JOB_* nonce count is a u32. */
export const MAX_CHUNK = 0xffff_ffff;

/**
 * Hands out consecutive chunks of a job's nonce range [nonceStart, nonceEnd). One cursor per
 * job; in a fleet the boards share it, each taking a chunk sized to its own rate, so a fast
 * board and a slow one both finish their chunks in about the same time.
 */
export class NonceCursor {
  readonly job: MiningJob;
  readonly end: number;
  private next: number;

  constructor(job: MiningJob) {
    this.job = job;
    this.next = job.nonceStart ?? 0;
    this.end = job.nonceEnd ?? NONCE_SPACE_END;
  }

  /** Nonces not handed out yet. */
  get remaining(): number {
    return Math.max(0, this.end - this.next);
  }

  get exhausted(): boolean {
    return this.next >= this.end;
  }

  /** The next chunk of at most `count` nonces (at least 1), or undefined when the range is used up. */
  take(count: number): NonceChunk | undefined {
    if (this.exhausted) return undefined;
    const n = Math.max(1, Math.min(Math.floor(count), MAX_CHUNK, this.end - this.next));
    const chunk = { start: this.next, count: n };
    this.next += n;
    return chunk;
  }
}
