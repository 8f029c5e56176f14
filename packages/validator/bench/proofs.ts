/**
 * What the v4.0 /submit benches share (http.bench.ts part 2, verify-kernel.bench.ts): the
 * validator's command line with the rate limits out of the way, the bench miner's key, and
 * proofs requested over HTTP, solved and signed in the bench process.
 */
import {
  type ChallengeWire,
  type DeviceType,
  formatPublicKey,
  type KeyPair,
  keyPairFromSecret,
  proofBytesFromWire,
  proofFromWork,
  signProof,
  signRequest,
  slotHashDigest,
  solveProof,
  type TensorChallenge,
  taggedHash,
  taskFromWire,
  utf8,
  verifyProof,
} from '@tensormine/protocol';
import { mapConcurrent, request } from './support.js';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
export const VALIDATOR = 'src/bin.ts';
export const MINER: KeyPair = keyPairFromSecret(taggedHash('bench/validator-http', utf8('miner')));

/** Rate limits out of the way: the bench measures the work, not the limiter's refusals. */
export const UNLIMITED = [
  '--rate-limit-per-second',
  '1000000',
  '--rate-limit-burst',
  '1000000',
  '--key-rate-limit-per-second',
  '1000000',
  '--key-rate-limit-burst',
  '1000000',
  // The per-address budget of invalid proofs too (part 5 sends them all from 127.0.0.1); the
  // per-key budget stays at its default, which part 5 measures.
  '--invalid-proof-budget-per-address',
  '1000000',
];
export const validatorArgs = (...extra: string[]) => [
  'start',
  '--data-dir',
  ':memory:',
  '--port',
  '0',
  '--log-level',
  'silent',
  ...UNLIMITED,
  ...extra,
];
export const adminEnv = { TENSORMINE_ADMIN_TOKEN: ADMIN_TOKEN };
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** Registers MINER over HTTP with a signed request. */
export async function registerMiner(base: string): Promise<void> {
  const path = '/devices/register';
  const body = JSON.stringify({ pubkey: formatPublicKey(MINER.publicKey), device_type: 'native' });
  const headers = signRequest({ method: 'POST', path, body, secretKey: MINER.secretKey });
  await request(base, 'POST', path, { body, headers });
}

export const EXPECTED_DIM: Readonly<Record<DeviceType, number>> = { native: 64, esp32: 32, esp8266: 16 };
/** verifyProof in this process over the first proofs of each batch: the side-by-side reference. */
export const LOCAL_VERIFY_COUNT = 300;

export interface Prepared {
  readonly bodies: string[];
  readonly ops: Map<string, number>;
  /** verifyProof per second in this process, over the same proofs. */
  readonly localRate: number;
}

/**
 * Requests `count` challenges of `deviceType` over HTTP, solves them (the reference solver)
 * (or through `base` when it is a function: in process) and signs the proofs as MINER; verifyProof runs in this process over the first `localVerify`
 * of them, timed (the side-by-side reference of part 2; 0 skips it).
 */
export async function prepareProofs(
  base: string | ((body: string) => Promise<ChallengeWire>),
  deviceType: DeviceType,
  count: number,
  localVerify = LOCAL_VERIFY_COUNT,
): Promise<Prepared> {
  const slots = Array.from({ length: count }, (_, i) => i + 1);
  const issue =
    typeof base === 'string'
      ? (body: string) => request<ChallengeWire>(base, 'POST', '/challenge', { body })
      : base;
  const wires = await mapConcurrent(slots, 8, (slot) =>
    issue(JSON.stringify({ slot, slot_hash: `bench-${deviceType}`, device_type: deviceType })),
  );
  const ops = new Map<string, number>();
  const checks: {
    challenge: TensorChallenge;
    proof: ReturnType<typeof proofFromWork>;
    signature: number[];
  }[] = [];
  const bodies = wires.map((wire) => {
    const task = taskFromWire(wire);
    if (task.dim !== EXPECTED_DIM[deviceType]) {
      throw new Error(`${deviceType}: served a ${task.dim}x${task.dim} tensor`);
    }
    const op =
      task.operation === 'conv'
        ? `conv ${task.filters}x${task.dim}x${task.dim}`
        : `matmul ${task.dim}x${task.dim}`;
    ops.set(op, (ops.get(op) ?? 0) + 1);
    const solution = solveProof(task, MINER.publicKey, { maxIterations: 100_000 });
    if (!solution)
      throw new Error(`${deviceType}: no proof in 100,000 nonces at difficulty ${wire.difficulty}`);
    const proof = proofFromWork(
      task.challengeId,
      task.challengeHash,
      MINER.publicKey,
      solution.nonce,
      solution.work,
    );
    const signature = signProof(proofBytesFromWire(proof, solution.work.mmlScoreQ16), MINER.secretKey);
    if (checks.length < localVerify) {
      // verifyProof reads the task, the thresholds and the hash (which commits to the entropy);
      // the validator's secret entropy is not needed to verify, so zeros stand in for it.
      const challenge: TensorChallenge = {
        ...task,
        slot: wire.slot,
        slotHashDigest: slotHashDigest(wire.slot_hash),
        deviceType: wire.device_type,
        difficulty: wire.difficulty,
        entropy: new Uint8Array(32),
      };
      checks.push({ challenge, proof, signature });
    }
    return JSON.stringify({ proof, signature });
  });
  const started = performance.now();
  for (const c of checks) {
    const verdict = verifyProof(c.challenge, c.proof, { signature: c.signature });
    if (!verdict.ok) throw new Error(`${deviceType}: a prepared proof does not verify: ${verdict.code}`);
  }
  const localRate = checks.length === 0 ? 0 : (checks.length * 1000) / (performance.now() - started);
  return { bodies, ops, localRate };
}
