import {
  clampShareDifficulty,
  initialShareDifficulty,
  MAX_HEX_DIFFICULTY,
  shareDifficultyBounds,
  vardiffDue,
  vardiffStep,
} from '@tensormine/protocol';
import type { PoolMemberRecord, StorageTx } from '../../store/types.js';

/** A pool member's record: membership, vardiff state and counters. */

/**
 * `vardiffSinceMs` of a member that has joined but not mined yet: its vardiff clock starts at
 * its first pooled challenge (or share), so that the time before it started mining does not
 * lower its share difficulty.
 */
export const VARDIFF_NOT_STARTED = -1;

/** A key with no history. */
export function newMember(pubkey: string, nowMs: number): PoolMemberRecord {
  return {
    pubkey,
    stake: 0n,
    joinedAt: null,
    shareDifficulty: null,
    vardiffSinceMs: nowMs,
    vardiffShares: 0,
    sharesAccepted: 0,
    sharesStale: 0,
    sharesRejected: 0,
    blocksFound: 0,
    lastShareAt: null,
  };
}

/** Whether the record is a current member. */
export function isMember(m: PoolMemberRecord | undefined): m is PoolMemberRecord & { joinedAt: number } {
  return m !== undefined && m.joinedAt !== null;
}

/**
 * The unclamped share difficulty a new member starts with: one share per interval at the
 * nominal hash rate of its registered device type (protocol 4.14); advanceVardiff clamps it.
 */
export async function startingShareDifficulty(
  tx: StorageTx,
  pubkey: string,
  intervalMs: bigint,
): Promise<bigint> {
  const device = await tx.devices.get(pubkey);
  return initialShareDifficulty(device?.deviceType, intervalMs, MAX_HEX_DIFFICULTY);
}

/**
 * The member after `acceptedShares` more accepted shares at `nowMs`, with its share difficulty
 * moved by vardiff when a step is due (protocol 4.14) and kept inside [16, block difficulty].
 * A member without a share difficulty gets `initial()` (startingShareDifficulty), clamped.
 */
export async function advanceVardiff(
  m: PoolMemberRecord,
  input: {
    nowMs: number;
    blockDifficulty: bigint;
    targetIntervalMs: bigint;
    acceptedShares: number;
    initial: () => Promise<bigint>;
  },
): Promise<PoolMemberRecord> {
  const { nowMs, blockDifficulty, targetIntervalMs } = input;
  if (m.shareDifficulty === null || m.vardiffSinceMs === VARDIFF_NOT_STARTED) {
    // The vardiff clock starts now: the time between joining and mining is no evidence.
    return {
      ...m,
      shareDifficulty: clampShareDifficulty(m.shareDifficulty ?? (await input.initial()), blockDifficulty),
      vardiffSinceMs: nowMs,
      vardiffShares: input.acceptedShares,
    };
  }
  const shares = m.vardiffShares + input.acceptedShares;
  const elapsedMs = BigInt(Math.max(0, nowMs - m.vardiffSinceMs));
  if (!vardiffDue({ shares, elapsedMs, targetIntervalMs })) {
    const clamped = clampShareDifficulty(m.shareDifficulty, blockDifficulty);
    return { ...m, shareDifficulty: clamped, vardiffShares: shares };
  }
  const next = vardiffStep({
    difficulty: m.shareDifficulty,
    shares,
    elapsedMs,
    targetIntervalMs,
    ...shareDifficultyBounds(blockDifficulty),
  });
  return { ...m, shareDifficulty: next, vardiffSinceMs: nowMs, vardiffShares: 0 };
}
