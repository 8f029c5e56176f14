// v4.0 challenges and accepted proofs: part of the storage interface (../types.ts).

import type { DeviceRecord } from './devices.js';

/** Everything needed to rebuild a TensorChallenge (protocol `buildChallenge`) and serve it. */
export interface ChallengeRecord {
  readonly id: string;
  readonly serial: number;
  readonly slot: number;
  readonly slotHash: string;
  readonly deviceType: string;
  readonly difficulty: number;
  readonly dim: number;
  /** 64 hex digits. */
  readonly entropy: string;
  /** 64 hex digits. */
  readonly challengeHash: string;
  readonly issuedAt: number;
  readonly expiresAt: number;
}

export interface ChallengeRepo {
  insert(challenge: ChallengeRecord): Promise<void>;
  get(id: string): Promise<ChallengeRecord | undefined>;
  /**
   * A v4.0 submission's first read, in one statement: the challenge, the device of `pubkey`
   * and that key's accepted proof of the challenge; parts that do not exist are left out.
   */
  getForSubmit(id: string, pubkey: string): Promise<SubmitRead>;
  /** The next serial number (starts at 0, never reused). */
  nextSerial(): Promise<number>;
  /** Challenges still answerable at `now` (Unix seconds): expiresAt >= now. */
  countOpen(now: number): Promise<number>;
}

export interface AcceptedProof {
  readonly challengeId: string;
  readonly pubkey: string;
  readonly nonce: number;
  readonly acceptedAt: number;
  readonly ledgerEntryId: number;
  /** The validator's receipt signature (128 hex digits). */
  readonly txSig: string;
}

/** What `challenges.getForSubmit` found; parts that do not exist are left out. */
export interface SubmitRead {
  readonly challenge?: ChallengeRecord;
  readonly device?: DeviceRecord;
  /** The key's accepted proof of the challenge. */
  readonly proof?: AcceptedProof;
}

export interface ProofRepo {
  /** False (and nothing written) when this challenge already has an accepted proof from this key. */
  insert(proof: AcceptedProof): Promise<boolean>;
  /**
   * `insert` for a transaction that must not commit without its proof: when this challenge
   * already has an accepted proof from this key the statement fails, and with it the
   * transaction (nothing of it is written: it rejects); the promise resolves false then. Meant
   * to be left in flight: on PostgreSQL it travels with the COMMIT, the unique key deciding.
   * With `recordMiner`, the proof is also counted on its miner's row and the device touched, as
   * `miners.recordAndTouch(pubkey, { proofsAccepted: 1, seenAt: acceptedAt })` would (on
   * PostgreSQL in the proof's statement; nothing of it when the proof is refused).
   */
  insertOrFail(proof: AcceptedProof, options?: { readonly recordMiner?: boolean }): Promise<boolean>;
  /**
   * `insertOrFail` with `recordMiner` for several proofs of distinct keys (a group of proofs
   * committed together, services/mining/recorder.ts): each proof is written, counted on its
   * miner's row and its device touched; on PostgreSQL in one statement. When any of them is
   * already there (its challenge has an accepted proof from its key) the statement fails, and
   * with it the transaction (nothing of it is written); the promise resolves false then.
   */
  insertAllOrFail(proofs: readonly AcceptedProof[]): Promise<boolean>;
  get(challengeId: string, pubkey: string): Promise<AcceptedProof | undefined>;
}
