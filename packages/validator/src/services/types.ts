import type { Coord, HexChallenge, SseHub } from '@tensormine/protocol';
import type { Handlers } from '../http/routes.js';
import type { BlockRecord, HexChallengeRecord, StorageTx } from '../store/types.js';

/** A part of the validator that serves some routes. */
export interface Service {
  readonly handlers: Handlers;
}

/** The v4.1 hexchain service (hexChallenge, hexSubmit, hexStatus, hexLattice, hexBlock). */
export interface HexchainService extends Service {
  /** The current difficulty (after retargets) and the number of occupied coordinates. */
  info(): { readonly difficulty: bigint; readonly occupied: number };
  /** Sets the current difficulty (POST /admin/config hexchain_difficulty); persisted. */
  setDifficulty(difficulty: bigint): Promise<void>;
  /** The push channel of GET /api/hexchain/events. */
  readonly events: SseHub;
  /** Ends the event streams and stops following the other nodes (before the server closes). */
  close(): Promise<void>;
  /**
   * Applies the blocks and the difficulty committed by any node sharing the database that the
   * in-memory lattice does not have yet (run on each notification, and by the heartbeat).
   */
  catchUp(): Promise<void>;
  /** Every block up to this height is in the in-memory lattice. */
  appliedHeight(): number;
  /**
   * Whether a block occupies `coord` (committed blocks only): from memory for a cell next to
   * the applied lattice, else from the storage.
   */
  isOccupied(coord: Coord): Promise<boolean>;
}

/** What another service adds to the hexchain paths, inside their transactions. */
export interface HexchainHooks {
  /** Extra fields of a challenge just inserted (a pool member's share terms). */
  challengeTerms?(
    tx: StorageTx,
    challenge: HexChallengeRecord,
  ): Promise<Pick<HexChallenge, 'share_difficulty' | 'share_target'> | undefined>;
  /**
   * Whether a block by this key answering this challenge would be a pool block (pool work, or
   * a member's while the pool is on; read without a lock, before the chain head is locked: a
   * solo block's reward is then written before it). `rewardBlock` decides.
   */
  poolMember?(tx: StorageTx, pubkey: string, challengeId: string): Promise<boolean>;
  /**
   * Pays an accepted block's reward when it is a pool block (then returns what it paid);
   * undefined leaves it to the solo rule.
   */
  rewardBlock?(tx: StorageTx, block: BlockRecord, reward: bigint): Promise<PoolBlockPay | undefined>;
  /** What a stored pool block paid (to answer a resent block as the first time); undefined: solo. */
  poolBlock?(tx: StorageTx, blockHash: string): Promise<PoolBlockPay | undefined>;
}

/** What a pool block paid (minor units of the reward token). */
export interface PoolBlockPay {
  /** The block reward, minted to the pool. */
  readonly reward: bigint;
  readonly fee: bigint;
  /** The finder's own PPLNS payout, rounding remainder included. */
  readonly finderPayout: bigint;
  /** Members paid. */
  readonly payees: number;
  /** The PPLNS window in difficulty units at the block's difficulty. */
  readonly window: bigint;
}
