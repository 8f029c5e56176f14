import {
  buildChallenge,
  canonicalDeviceType,
  challengeToWire,
  type DeviceType,
  deriveChallenge,
  fromHex,
  isDeviceType,
  slotHashDigest,
  type TensorChallenge,
  toHex,
} from '@tensormine/protocol';
import { nowSeconds } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { routeHandlers } from '../../http/handlers.js';
import type { ChallengeRecord } from '../../store/types.js';
import { COUNTERS } from '../metrics.js';
import { challengeIdFor } from './rules.js';

/** The 403 for a key that never registered, naming the way to register. */
export function notRegistered(pubkey: string, field: string): ApiError {
  return new ApiError(
    'miner_not_registered',
    `${field} ${pubkey} is not registered: register it first with POST /devices/register ({"pubkey", "device_type"}, signed by that key with the x-tm-* headers)`,
    { pubkey },
  );
}

/**
 * Recently issued or rebuilt challenges. A stored challenge never changes, and re-deriving its
 * input tensor (N x N bytes of SHA-256 expansion) costs up to about 0.2 ms per submission
 * (docs/benchmarks.md), so keep the latest ones; the challenges this process issues go in at
 * issuance (the same `buildChallenge` of the same parameters), so their first proof finds
 * them too.
 */
const rebuilt = new Map<string, TensorChallenge>();
const REBUILT_MAX = 1024;

function remember(record: ChallengeRecord, challenge: TensorChallenge): void {
  const key = `${record.id}:${record.challengeHash}`;
  if (rebuilt.size >= REBUILT_MAX) rebuilt.delete(rebuilt.keys().next().value as string);
  rebuilt.set(key, challenge);
}

/** Rebuilds the consensus view of a stored challenge (the thresholds it was issued with). */
export function challengeFromRecord(record: ChallengeRecord): TensorChallenge {
  const cached = rebuilt.get(`${record.id}:${record.challengeHash}`);
  if (cached) return cached;
  const challenge = buildChallengeFromRecord(record);
  remember(record, challenge);
  return challenge;
}

function buildChallengeFromRecord(record: ChallengeRecord): TensorChallenge {
  if (!isDeviceType(record.deviceType)) {
    throw new Error(
      `stored challenge ${record.id} has an unknown device type ${JSON.stringify(record.deviceType)}`,
    );
  }
  const challenge = buildChallenge({
    slot: record.slot,
    slotHashDigest: slotHashDigest(record.slotHash),
    deviceType: record.deviceType,
    difficulty: record.difficulty,
    dim: record.dim,
    entropy: fromHex(record.entropy, 32, 'stored entropy'),
  });
  if (toHex(challenge.challengeHash) !== record.challengeHash) {
    throw new Error(`stored challenge ${record.id} does not rebuild to its hash`);
  }
  return challenge;
}

/**
 * POST /challenge. Every request gets its own challenge (a fresh serial number), with the
 * difficulty, tensor size and lifetime in force at that moment, stored so that its proofs are
 * verified against exactly these thresholds; nothing global changes.
 */
export function challengeHandlers() {
  return routeHandlers({
    async requestChallenge({ body }, ctx) {
      // One snapshot of the run-time settings: this challenge keeps them for its whole life.
      const { difficulty, maxTensorDim, challengeTtlS } = ctx.runtime;
      let deviceType: DeviceType = canonicalDeviceType(body.device_type ?? 'native');
      const minerPubkey = body.miner_pubkey;
      if (minerPubkey !== undefined) {
        const device = await ctx.storage.read((tx) => tx.devices.get(minerPubkey));
        if (!device) throw notRegistered(minerPubkey, 'miner_pubkey');
        // The registered device type wins: a board gets work sized for it whatever it asks.
        if (isDeviceType(device.deviceType)) deviceType = device.deviceType;
      }

      const issuedAt = nowSeconds(ctx);
      const expiresAt = issuedAt + challengeTtlS;
      const { challenge, record } = await ctx.storage.transaction(
        async (tx) => {
          const serial = await tx.challenges.nextSerial();
          // Deriving is a few hashes (no proof work), cheap enough inside the transaction; the
          // serial is only used when the challenge is stored.
          const challenge = deriveChallenge({
            validatorSeed: ctx.seed,
            slot: body.slot,
            slotHash: body.slot_hash,
            serial,
            deviceType,
            difficulty,
            maxTensorDim,
          });
          const record: ChallengeRecord = {
            id: challengeIdFor(challenge.challengeHash),
            serial,
            slot: body.slot,
            slotHash: body.slot_hash,
            deviceType,
            difficulty,
            dim: challenge.dim,
            entropy: toHex(challenge.entropy),
            challengeHash: toHex(challenge.challengeHash),
            issuedAt,
            expiresAt,
          };
          await Promise.all([
            tx.challenges.insert(record),
            tx.counters.add(COUNTERS.challengesIssued, 1),
            minerPubkey === undefined
              ? undefined
              : tx.miners.recordAndTouch(minerPubkey, { seenAt: issuedAt }),
          ]);
          return { challenge, record };
          // Row locks: nothing is read; the serial is a sequence (docs/storage.md).
        },
        { isolation: 'row-locks' },
      );
      ctx.metrics.recordIssued('tensor');
      remember(record, challenge);
      return challengeToWire(challenge, {
        id: record.id,
        slotHash: record.slotHash,
        issuedAt,
        expiresAt,
      });
    },
  });
}
