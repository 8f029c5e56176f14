// v4.1 hexchain: part of the storage interface (../types.ts).

import type { DeviceRecord } from './devices.js';

export interface CoordRecord {
  readonly q: number;
  readonly r: number;
  readonly s: number;
}

export interface HexParentRecord {
  readonly coord: CoordRecord;
  /** 64 hex digits. */
  readonly blockHash: string;
  readonly depth: number;
}

export interface HexChallengeRecord {
  readonly id: string;
  readonly serial: number;
  readonly coord: CoordRecord;
  readonly slot: number;
  readonly slotHash: string;
  readonly challengeHash: string;
  /** 64 hex digits, big-endian. */
  readonly target: string;
  readonly difficulty: bigint;
  readonly entropy: string;
  readonly parents: readonly HexParentRecord[];
  readonly depth: number;
  readonly minerPubkey: string | null;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface HexChallengeRepo {
  insert(challenge: HexChallengeRecord): Promise<void>;
  get(id: string): Promise<HexChallengeRecord | undefined>;
  /** The challenge and the device of `pubkey`, in one statement (a block's first read). */
  getWithDevice(
    id: string,
    pubkey: string,
  ): Promise<{ readonly challenge?: HexChallengeRecord; readonly device?: DeviceRecord }>;
  nextSerial(): Promise<number>;
  /** Challenges still answerable at `now` (Unix seconds): expiresAt >= now. */
  countOpen(now: number): Promise<number>;
  /** The expiry times (Unix seconds) of the challenges still answerable at `now` (expiresAt >= now), in any order. */
  openExpiries(now: number): Promise<number[]>;
}

export interface BlockRecord {
  readonly coord: CoordRecord;
  readonly blockHash: string;
  readonly powHash: string;
  readonly depth: number;
  readonly parents: readonly CoordRecord[];
  readonly minerPubkey: string;
  readonly nonce: number;
  readonly challengeId: string;
  readonly slot: number;
  readonly difficulty: bigint;
  /** Acceptance time in milliseconds (the retarget rule needs sub-second spans). */
  readonly timestampMs: number;
  /** 1 for the first mined block, then 2, 3...; genesis is not stored. */
  readonly height: number;
}

/** A block before it is appended: its height is the next one of the chain. */
export type NewBlockRecord = Omit<BlockRecord, 'height'>;

/** The head of the hexchain: the newest height and the live difficulty. */
export interface ChainHead {
  /** The height of the newest block (0: only the genesis). */
  readonly height: number;
  /** The live difficulty; null until a retarget or an admin change (the configured one then). */
  readonly difficulty: bigint | null;
  /**
   * How many times the difficulty was written (retargets, admin changes), across every node
   * sharing the database: a node applies a difficulty only if its number is newer than the one
   * it holds, so it follows the commit order whatever order it learns them in.
   */
  readonly difficultySeq: number;
}

/** Why the difficulty was written: the retarget rule at a block, or an operator. */
export type DifficultyWriteKind = 'retarget' | 'admin';

/** One write of the live difficulty. */
export interface DifficultyWrite {
  /** Its number (ChainHead.difficultySeq after it). */
  readonly seq: number;
  /** The chain's height when it was written (a retarget: its block's). */
  readonly height: number;
  readonly kind: DifficultyWriteKind;
  /** The difficulty it replaced (null: the configured one). */
  readonly previous: bigint | null;
  readonly value: bigint;
  /** Unix ms (a retarget: its block's acceptance time). */
  readonly atMs: number;
}

/** A block's notification, its height and the head's difficulty write count filled in by `appendLast`. */
export interface BlockNote {
  readonly channel: string;
  readonly template: string;
  /** The payload when the block carried its height's retarget write. */
  readonly atRetarget?: string;
  /** E.g. `"height":` (the template holds `"height":-1`). */
  readonly heightKey: string;
  readonly seqKey: string;
}

export interface AppendedBlock {
  readonly block: BlockRecord;
  /** The head after the block (its height is the block's). */
  readonly head: ChainHead;
}

/** The blocks of the lattice and the head of the chain. */
export interface BlockRepo {
  /**
   * Stores the block at the next height; undefined (nothing written) when its coordinate is
   * occupied. PostgreSQL: locks the chain head until the transaction ends, so blocks and
   * difficulty writes of every node are appended one at a time (the one intended hot row,
   * docs/storage.md).
   */
  append(block: NewBlockRecord): Promise<AppendedBlock | undefined>;
  /**
   * `append` as the transaction's last write, with the block's notification: on PostgreSQL one
   * statement, meant to be left in flight so that it travels with the COMMIT, which makes the
   * head's lock last only as long as the COMMIT (docs/storage.md, "The chain head"). A block
   * landing on a retarget height (a multiple of `windowBlocks`) writes `retarget` with it when
   * that is the write for its height (`retarget.height`, and `retarget.seq` the head's
   * difficulty write count plus one), computed by the caller beforehand. Refused when the
   * coordinate is taken (`taken`) or the block would land on a retarget height without its
   * write (`retarget`: append with `append` and retarget in the transaction instead); a refusal
   * fails the transaction (nothing of it is written: the transaction rejects), the promise
   * resolves with the reason. `note.template` is the notification's payload (`note.atRetarget`
   * when the block carried the retarget), with every `note.heightKey` + `-1` standing for the
   * block's height and every `note.seqKey` + `-1` for the head's `difficultySeq` before it.
   */
  appendLast(
    block: NewBlockRecord,
    windowBlocks: number,
    note: BlockNote,
    retarget?: DifficultyWrite,
  ): Promise<AppendedBlock | { readonly refused: 'taken' | 'retarget' }>;
  /** The head as committed (read without a lock). */
  head(): Promise<ChainHead>;
  /**
   * Writes the live difficulty, numbers the write and records it (`difficultyWrites`); locks the
   * head like `append`. Returns the value it replaced (null: the configured one) and the head
   * after.
   */
  setDifficulty(
    value: bigint,
    write: { readonly kind: DifficultyWriteKind; readonly atMs: number },
  ): Promise<{ readonly previous: bigint | null; readonly head: ChainHead }>;
  /** The difficulty writes numbered above `afterSeq`, in order (at most `limit`). */
  difficultyWrites(afterSeq: number, limit: number): Promise<DifficultyWrite[]>;
  /**
   * Keeps a node's lattice state at `height` (JSON; services/hexchain/lattice-state.ts) and
   * forgets all but the newest `keep`. A snapshot already kept at that height is left as it is
   * (any node writes the same one).
   */
  putSnapshot(
    snapshot: { readonly height: number; readonly state: string; readonly createdAtMs: number },
    keep: number,
  ): Promise<void>;
  /** The newest snapshot at or below `atMostHeight`. */
  latestSnapshot(
    atMostHeight: number,
  ): Promise<{ readonly height: number; readonly state: string } | undefined>;
  get(coord: CoordRecord): Promise<BlockRecord | undefined>;
  /** Blocks in height order with height > afterHeight. */
  list(afterHeight: number, limit: number): Promise<BlockRecord[]>;
  /** Every block in height order (to rebuild the lattice at start). */
  all(): Promise<BlockRecord[]>;
  byHeight(height: number): Promise<BlockRecord | undefined>;
}
