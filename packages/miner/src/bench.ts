import { availableParallelism } from 'node:os';
import {
  DEVICE_PROFILES,
  type DeviceType,
  deriveChallenge,
  type Operation,
  sha256,
  targetFromDifficulty,
  toHex,
  utf8,
} from '@tensormine/protocol';
import { MiningEngine } from './engine.js';
import type { FoundResult } from './found.js';
import type { MiningJob } from './job.js';
import type { KernelChoice, KernelName } from './kernels/choice.js';
import type { SelectKernelOptions } from './kernels/select.js';

/**
 * An offline benchmark, xmrig `--bench` style: hashes a fixed amount of fixed work (a fixed
 * hexchain header, fixed tensor tasks of every device type and operation at their largest
 * size) with N worker threads, and returns the rates and a checksum of the results found, so
 * that a wrong kernel is visible as a different checksum. Every result is verified with the
 * reference implementation, as in mining. Deterministic for a given amount: the checksum does
 * not depend on the thread count or the machine.
 */
export interface BenchOptions {
  /** Worker threads (default os.availableParallelism()). */
  readonly threads?: number;
  /** The kernels (default `auto`); the checksum is the same whichever runs. */
  readonly kernel?: KernelChoice;
  /** How the native kernels are found and built (see MiningEngineOptions.select). */
  readonly select?: SelectKernelOptions;
  /** Hexchain hashes (default 2^22); 0 skips hexchain. */
  readonly hexchainHashes?: number;
  /** Nonce iterations per tensor task (default 4096); 0 skips tensor. */
  readonly tensorIterations?: number;
  /** Progress callback after each case. */
  readonly onCase?: (result: BenchCase) => void;
  readonly workerUrl?: URL;
}

export interface BenchCase {
  /** `hexchain` or `tensor <device> <operation> <shape>`. */
  readonly name: string;
  readonly hashes: number;
  readonly seconds: number;
  /** Hashes (nonce iterations) per second. */
  readonly rate: number;
  /** Results found (hexchain at difficulty 2^16, tensor at level 10). */
  readonly results: number;
  /** SHA-256 of the sorted results, hex. */
  readonly checksum: string;
}

export interface BenchResult {
  readonly threads: number;
  /** The kernel that ran (`native`, `wasm` or `js`). */
  readonly kernel: KernelName;
  /** Why the native kernels did not run, when they were asked for (one line). */
  readonly kernelNotice?: string;
  readonly cases: readonly BenchCase[];
  /** SHA-256 over the case checksums, hex. */
  readonly checksum: string;
  /** Kernel results the reference rejected (must be 0). */
  readonly kernelErrors: number;
}

/** The hexchain bench difficulty: about 2^22 / 2^16 = 64 results in the default amount. */
export const BENCH_HEX_DIFFICULTY = 65_536;
/** The tensor bench difficulty level (about 1 result in 155 to 190 iterations). */
export const BENCH_TENSOR_LEVEL = 10;

const BENCH_KEY = sha256(utf8('tensormine/bench/miner-key'));

/** The fixed jobs of the benchmark. */
export function benchJobs(
  hexchainHashes = 2 ** 22,
  tensorIterations = 4096,
): { name: string; job: MiningJob }[] {
  const jobs: { name: string; job: MiningJob }[] = [];
  const far = Number.MAX_SAFE_INTEGER;
  if (hexchainHashes > 0) {
    jobs.push({
      name: 'hexchain',
      job: {
        kind: 'hexchain',
        challengeId: 'bench-hexchain',
        coord: { q: 0, r: -1, s: 1 },
        challengeHash: sha256(utf8('tensormine/bench/hexchain')),
        minerPublicKey: BENCH_KEY,
        target: targetFromDifficulty(BigInt(BENCH_HEX_DIFFICULTY)),
        difficulty: BENCH_HEX_DIFFICULTY,
        expiresAtMs: far,
        nonceStart: 0,
        nonceEnd: hexchainHashes,
        stopOnFound: false,
      },
    });
  }
  if (tensorIterations > 0) {
    const validatorSeed = sha256(utf8('tensormine/bench/validator'));
    for (const deviceType of Object.keys(DEVICE_PROFILES) as DeviceType[]) {
      for (const operation of DEVICE_PROFILES[deviceType].operations) {
        const c = challengeWith(validatorSeed, deviceType, operation);
        const shape = operation === 'conv' ? `${c.filters}x${c.dim}x${c.dim}` : `${c.dim}x${c.dim}`;
        jobs.push({
          name: `tensor ${deviceType} ${operation} ${shape}`,
          job: {
            kind: 'tensor',
            challengeId: `bench-${deviceType}-${operation}`,
            task: { ...c, challengeId: `bench-${deviceType}-${operation}` },
            difficulty: c.difficulty,
            minerPublicKey: BENCH_KEY,
            expiresAtMs: far,
            nonceStart: 0,
            nonceEnd: tensorIterations,
            stopOnFound: false,
          },
        });
      }
    }
  }
  return jobs;
}

/** Warm-up nonces start here, far from the measured range [0, amount). */
const WARMUP_START = 2 ** 40;

/** Mines `job` until every worker has searched its whole slice. */
function runToEnd(engine: MiningEngine, job: MiningJob): Promise<void> {
  return new Promise<void>((resolve) => {
    const onExhausted = (id: string) => {
      if (id !== job.challengeId) return;
      engine.off('exhausted', onExhausted);
      resolve();
    };
    engine.on('exhausted', onExhausted);
    engine.setJob(job);
  });
}

function challengeWith(validatorSeed: Uint8Array, deviceType: DeviceType, operation: Operation) {
  for (let serial = 0; ; serial++) {
    const c = deriveChallenge({
      validatorSeed,
      slot: 1,
      slotHash: 'tensormine-bench',
      serial,
      deviceType,
      difficulty: BENCH_TENSOR_LEVEL,
    });
    if (c.operation === operation) return c;
  }
}

/** Runs the benchmark (see BenchOptions). */
export async function bench(options: BenchOptions = {}): Promise<BenchResult> {
  const threads = options.threads ?? availableParallelism();
  const engine = new MiningEngine({
    threads,
    ...(options.kernel === undefined ? {} : { kernel: options.kernel }),
    ...(options.select === undefined ? {} : { select: options.select }),
    // No sampling needed: rates come from the elapsed time of each case.
    sampleIntervalMs: 3_600_000,
    ...(options.workerUrl ? { workerUrl: options.workerUrl } : {}),
  });
  let kernelErrors = 0;
  engine.on('error', () => {
    kernelErrors = engine.kernelErrors;
  });
  await engine.start();
  const cases: BenchCase[] = [];
  try {
    for (const { name, job } of benchJobs(options.hexchainHashes, options.tensorIterations)) {
      // Warm up (JIT) on nonces far from the measured range, an eighth of the amount.
      const warm = Math.max(threads, Math.floor((job.nonceEnd! - job.nonceStart!) / 8));
      await runToEnd(engine, {
        ...job,
        challengeId: `${job.challengeId}-warmup`,
        nonceStart: WARMUP_START,
        nonceEnd: WARMUP_START + warm,
      });
      const results: FoundResult[] = [];
      const onFound = (f: FoundResult) => results.push(f);
      engine.on('found', onFound);
      const before = engine.totalHashes();
      const started = process.hrtime.bigint();
      await runToEnd(engine, job);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      engine.off('found', onFound);
      const hashes = engine.totalHashes() - before;
      const lines = results
        .sort((a, b) => a.nonce - b.nonce)
        .map(
          (f) =>
            `${f.nonce}:${f.kind === 'hexchain' ? f.submission.block.pow_hash : f.proof.computation_hash}`,
        );
      const c: BenchCase = {
        name,
        hashes,
        seconds,
        rate: hashes / seconds,
        results: results.length,
        checksum: toHex(sha256(utf8(lines.join('\n')))),
      };
      cases.push(c);
      options.onCase?.(c);
    }
  } finally {
    await engine.stop();
  }
  kernelErrors = engine.kernelErrors;
  return {
    threads,
    kernel: engine.kernel,
    ...(engine.kernelSelection?.notice === undefined ? {} : { kernelNotice: engine.kernelSelection.notice }),
    cases,
    checksum: toHex(sha256(utf8(cases.map((c) => `${c.name}:${c.checksum}`).join('\n')))),
    kernelErrors,
  };
}
