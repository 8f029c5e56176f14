import { EventEmitter } from 'node:events';
import { Signer } from '@tensormine/client';
import {
  type ChallengeWire,
  type Coord,
  challengeToWire,
  deriveChallenge,
  type KeyPair,
  keyPairFromSecret,
  numberToQ16,
  proofBytesFromWire,
  signatureToWire,
  signProof,
  signSubmission,
  type TensorChallenge,
  taggedHash,
  targetFromDifficulty,
  utf8,
} from '@tensormine/protocol';
import { vi } from 'vitest';
import { afterEachTest } from '../../../test-support/cleanup.ts';
import { waitFor as waitUntil, within } from '../../../test-support/wait.ts';
import type { DeviceBackend } from '../src/device.js';
import type { FoundResult, FoundSigner } from '../src/found.js';
import type { HexchainJob, MiningJob, TensorJob } from '../src/job.js';
import { tensorJob } from '../src/job.js';
import type { SubmitOutcome, WorkSource, WorkSourceEvents } from '../src/work-source.js';

/** A deterministic test key pair. */
export function testKey(name: string): KeyPair {
  return keyPairFromSecret(taggedHash('miner-test/key', utf8(name)));
}

export const KEY = testKey('miner');

/** The client's Signer of a test key pair (what signs results: `signFound`). */
export function signerOf(key: KeyPair): Signer {
  return Signer.fromSecretKey(key.secretKey);
}

/**
 * A FoundSigner that signs with any key, even one that did not mine the result (the client's
 * Signer refuses to): for tests that need a signature the validator refuses.
 */
export function anyKeySigner(key: KeyPair): FoundSigner {
  return {
    signProof: (proof) =>
      signProof(proofBytesFromWire(proof, numberToQ16(proof.mml_score) ?? 0), key.secretKey),
    signSubmission: (challengeId, header) =>
      signatureToWire(signSubmission(challengeId, header, key.secretKey)),
  };
}

/** A hexchain job with difficulty D (16 finds a block in about 16 hashes; 2^53 - 1 never in a test). */
export function hexJob(difficulty: number | bigint, overrides: Partial<HexchainJob> = {}): HexchainJob {
  const coord: Coord = { q: 1, r: -1, s: 0 };
  return {
    kind: 'hexchain',
    challengeId: `hx-${difficulty}-${Math.random().toString(36).slice(2, 8)}`,
    coord,
    challengeHash: taggedHash('miner-test/challenge', utf8(String(Math.random()))),
    minerPublicKey: KEY.publicKey,
    target: targetFromDifficulty(BigInt(difficulty)),
    difficulty: Number(difficulty),
    expiresAtMs: Date.now() + 600_000,
    ...overrides,
  };
}

/** The largest hexchain difficulty: no block in any test's lifetime. */
export const NEVER = 2n ** 53n - 1n;

/** A v4.0 challenge of a device type (and operation, if given) at a difficulty level. */
export function tensorChallenge(
  deviceType: 'native' | 'esp32' | 'esp8266',
  difficulty: number,
  operation?: 'matmul' | 'conv',
): { challenge: TensorChallenge; wire: ChallengeWire } {
  const validatorSeed = taggedHash('miner-test/validator', utf8('seed'));
  for (let serial = 0; ; serial++) {
    const challenge = deriveChallenge({
      validatorSeed,
      slot: 1,
      slotHash: 'test',
      serial,
      deviceType,
      difficulty,
    });
    if (operation !== undefined && challenge.operation !== operation) continue;
    const now = Math.floor(Date.now() / 1000);
    const wire = challengeToWire(challenge, {
      id: `t-${deviceType}-${serial}-${Math.random().toString(36).slice(2, 8)}`,
      slotHash: 'test',
      issuedAt: now,
      expiresAt: now + 600,
    });
    return { challenge, wire };
  }
}

export function tensorTestJob(
  deviceType: 'native' | 'esp32' | 'esp8266',
  difficulty: number,
  operation?: 'matmul' | 'conv',
): TensorJob {
  return tensorJob(tensorChallenge(deviceType, difficulty, operation).wire, KEY.publicKey);
}

/** Polls `predicate` until it holds; fails after `timeoutMs` (default: the suite's wait bound). */
export function waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void> {
  return waitUntil(predicate, what, { intervalMs: 10, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}

/** The next `event` of `emitter`. */
export function next<T>(emitter: EventEmitter, event: string): Promise<T> {
  return new Promise((resolve) => emitter.once(event, resolve as (value: unknown) => void));
}

const cleanups: (() => Promise<unknown> | unknown)[] = [];

/** Runs `fn` after the current test (engines and miners are stopped even when a test fails). */
export function cleanup(fn: () => Promise<unknown> | unknown): void {
  cleanups.push(fn);
}

afterEachTest(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/**
 * Date alone on an injected clock until the test ends (passHashrateWindow moves it): the engine
 * stamps its hashrate samples with Date.now(), while its sampling timer, the workers, the
 * sockets and a browser keep the real clock.
 */
export function fakeDate(): void {
  vi.useFakeTimers({ toFake: ['Date'] });
  cleanup(() => vi.useRealTimers());
}

/**
 * The engine's hashrate window of `ms` passed on the faked Date (fakeDate): one sample, then the
 * clock `ms` on, so that the next sample (at most a second later) closes the window. Waiting for
 * a 10 s window in real time cost 10 s of threads hashing that the test does not measure.
 */
export async function passHashrateWindow(engine: EventEmitter, ms = 10_000): Promise<void> {
  await within(next(engine, 'hashrate'), 'a hashrate sample');
  const now = vi.getMockedSystemTime();
  if (now === null) throw new Error('passHashrateWindow needs fakeDate()');
  vi.setSystemTime(now.getTime() + ms);
}

/** A WorkSource that hands out one hexchain job after another. */
export class FakeSource extends EventEmitter<WorkSourceEvents> implements WorkSource {
  url: string = 'fake://source';
  failures = 0;
  jobs = 0;
  readonly submitted: FoundResult[] = [];
  difficulty: bigint = NEVER;
  lifetimeMs = 600_000;

  async getWork(): Promise<MiningJob> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('validator unreachable');
    }
    this.jobs++;
    return hexJob(this.difficulty, {
      challengeId: `fake-${this.jobs}`,
      expiresAtMs: Date.now() + this.lifetimeMs,
    });
  }

  async submit(found: FoundResult): Promise<SubmitOutcome> {
    this.submitted.push(found);
    return { status: 'accepted' };
  }
}

/** Sets `job` (ending at its first result) on a started engine and resolves to that result. */
export function firstFound(engine: DeviceBackend, job: MiningJob): Promise<FoundResult> {
  const found = new Promise<FoundResult>((resolve) => engine.once('found', resolve));
  engine.setJob({ ...job, stopOnFound: true });
  return found;
}
