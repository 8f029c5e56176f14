import {
  type Challenge,
  type ChallengeWire,
  computeWork,
  type DeviceType,
  fromHex,
  type HexChallenge,
  type HexSubmissionInput,
  type HexSubmitResult,
  type ProofWire,
  ProtocolError,
  type SignedHexSubmission,
  type SignedProof,
  type SubmitResult,
  solveBlock,
  solveProof,
  taggedHash,
  targetFromHex,
  taskFromWire,
  toHex,
  u64le,
  type WorkResult,
} from '@tensormine/protocol';
import { InvalidInputError, ProtocolMismatchError, TensormineError } from './errors.js';
import type { CallOptions } from './options.js';
import type { Signer } from './signer.js';
import type { Transport } from './transport.js';

/**
 * The mining helpers: hexchain detection, getWork, submitWork, and the protocol package's
 * reference solvers behind one call (solveWork).
 */

/** A protocol generation: v4.0 tensor proofs, v4.1 hexchain blocks. */
export type ProtocolVersion = '4.0' | '4.1';

/** A v4.1 lattice challenge, and the validator that issued it (submit there). */
export interface HexWork {
  readonly version: '4.1';
  readonly challenge: HexChallenge;
  readonly endpoint: string;
}

/** A v4.0 tensor challenge, and the validator that issued it (submit there). */
export interface TensorWork {
  readonly version: '4.0';
  readonly challenge: Challenge;
  readonly endpoint: string;
}

/** What getWork returns: discriminate on `version`. */
export type Work = HexWork | TensorWork;

export interface GetWorkParams {
  /** v4.0: the device the challenge is sized for (default native; a registered key's type wins). */
  readonly deviceType?: DeviceType;
  /** The chain slot; default the current Unix time in seconds (see {@link defaultSlot}). */
  readonly slot?: number;
  /** The slot's hash; default a hash of the slot (see {@link defaultSlot}). */
  readonly slotHash?: string;
  /**
   * The key the challenge is for: default the signer's key when the client has a signer (it must
   * then be registered: miner_not_registered otherwise); false asks without a key.
   */
  readonly minerPubkey?: string | false;
}

/** A nonce that solves a work unit. */
export interface WorkSolution {
  readonly nonce: number;
  /** v4.0: the computed work of the nonce (solveWork gives it); recomputed when absent. */
  readonly work?: WorkResult;
  /** Nonces tried to find it. */
  readonly iterations?: number;
}

export interface HexWorkResult {
  readonly version: '4.1';
  readonly result: HexSubmitResult;
  /** The signed submission that was sent (keep it as evidence of the block). */
  readonly submission: HexSubmissionInput;
  readonly endpoint: string;
}

export interface TensorWorkResult {
  readonly version: '4.0';
  readonly result: SubmitResult;
  /** The proof that was sent; with `result.tx_sig` it is the receipt (verifyReceipt). */
  readonly proof: ProofWire;
  readonly signature: readonly number[];
  readonly endpoint: string;
}

/**
 * A solution built and signed already, as it travels (`submitSigned`): per version, a union for a
 * union. v4.1 the block submission, v4.0 the signed proof envelope.
 */
export type SignedSolution<W extends Work> = W extends HexWork
  ? SignedHexSubmission
  : W extends TensorWork
    ? SignedProof
    : never;

/** The result type of submitWork for a work type: per version, a union for a union. */
export type SubmitWorkResult<W extends Work> = W extends HexWork
  ? HexWorkResult
  : W extends TensorWork
    ? TensorWorkResult
    : never;

/**
 * The slot and slot hash to ask for work with when no chain supplies them: the current Unix
 * time in seconds, and `taggedHash("tensormine/local-slot", u64le(slot))` in hex. A miner that
 * follows a chain passes the chain's slot height and slot hash instead.
 */
export function defaultSlot(nowMs: number = Date.now()): { slot: number; slotHash: string } {
  const slot = Math.floor(nowMs / 1000);
  return { slot, slotHash: toHex(taggedHash('tensormine/local-slot', u64le(slot))) };
}

/**
 * Remembers the protocol generation of each endpoint: GET /api/hexchain/status answers 200
 * (v4.1) or 404 (v4.0). Asked once per base URL; forgotten when a request to it fails so that
 * a validator replaced by another version is detected again.
 */
export class ProtocolDetector {
  readonly #transport: Transport;
  readonly #forced: ProtocolVersion | undefined;
  readonly #cache = new Map<string, Promise<ProtocolVersion>>();

  constructor(transport: Transport, forced: ProtocolVersion | undefined) {
    this.#transport = transport;
    this.#forced = forced;
  }

  get forced(): ProtocolVersion | undefined {
    return this.#forced;
  }

  async detect(endpoint: string, options: CallOptions = {}): Promise<ProtocolVersion> {
    if (this.#forced !== undefined) return this.#forced;
    let pending = this.#cache.get(endpoint);
    if (pending === undefined) {
      // Shared by concurrent callers, so it does not carry any one caller's signal.
      pending = this.#probe(endpoint, options);
      this.#cache.set(endpoint, pending);
      pending.then(
        (version) => this.#transport.events.safeEmit('protocol', { endpoint, version }),
        () => this.#cache.delete(endpoint),
      );
    }
    return raceSignal(pending, options.signal);
  }

  forget(endpoint: string): void {
    this.#cache.delete(endpoint);
  }

  async #probe(endpoint: string, options: CallOptions): Promise<ProtocolVersion> {
    try {
      await this.#transport.send(
        'hexStatus',
        {},
        {
          endpoint,
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          ...(options.retries === undefined ? {} : { retries: options.retries }),
        },
      );
      return '4.1';
    } catch (error) {
      if (error instanceof TensormineError && error.status === 404) return '4.0';
      throw error;
    }
  }
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** True for an answer that says "no hexchain here": 404 not_found or hexchain_disabled. */
export function isHexchainMissing(error: unknown): boolean {
  return (
    error instanceof TensormineError &&
    error.status === 404 &&
    (error.code === 'not_found' || error.code === 'hexchain_disabled' || error.code === 'unexpected_response')
  );
}

/** Whether a failure means the endpoint may have changed, so its detected version is stale. */
export function invalidatesDetection(error: unknown): boolean {
  if (!(error instanceof TensormineError)) return false;
  return (
    error.code === 'network_error' ||
    error.code === 'timeout' ||
    (error.status !== undefined && error.status >= 500) ||
    isHexchainMissing(error)
  );
}

/** The reference solvers of @tensormine/protocol, as used by solveWork. */
export interface SolveWorkOptions {
  /** The first nonce (default 0). */
  readonly startNonce?: number;
  /** Give up after this many nonces (default: unbounded). */
  readonly maxIterations?: number;
}

/**
 * Solves a work unit with the protocol package's reference solvers (clear, not fast: one core,
 * no midstate; the miner package has the fast kernels): solveBlock for v4.1, solveProof for v4.0.
 * Returns undefined when `maxIterations` nonces were tried without success.
 * @param miner the signer (or its 32-byte public key) that will submit: the key is part of the work.
 * @throws ProtocolMismatchError for a v4.0 challenge that fails its self-consistency checks.
 */
export function solveWork(
  work: Work,
  miner: Signer | Uint8Array,
  options: SolveWorkOptions = {},
): WorkSolution | undefined {
  const publicKey = miner instanceof Uint8Array ? miner : miner.publicKey;
  const limits = {
    ...(options.startNonce !== undefined ? { startNonce: options.startNonce } : {}),
    ...(options.maxIterations !== undefined ? { maxIterations: options.maxIterations } : {}),
  };
  if (work.version === '4.1') {
    const c = work.challenge;
    const solved = solveBlock({
      challengeHash: fromHex(c.challenge_hash, 32, 'challenge_hash'),
      coord: c.coord,
      minerPublicKey: publicKey,
      target: targetFromHex(c.target),
      ...limits,
    });
    return solved === undefined ? undefined : { nonce: solved.nonce, iterations: solved.iterations };
  }
  const solution = solveProof(tensorTask(work), publicKey, limits);
  return solution === undefined
    ? undefined
    : { nonce: solution.nonce, work: solution.work, iterations: solution.iterations };
}

/** The mining task of a v4.0 challenge, checked (input tensor, path target, thresholds). */
export function tensorTask(work: TensorWork): ReturnType<typeof taskFromWire> {
  try {
    return taskFromWire(work.challenge as ChallengeWire);
  } catch (error) {
    if (error instanceof ProtocolError) {
      throw new ProtocolMismatchError(
        `the v4.0 challenge from ${work.endpoint} is not self-consistent: ${error.message}`,
        { endpoint: work.endpoint },
        { cause: error },
      );
    }
    throw error;
  }
}

/** The work of a v4.0 nonce: the solution's, or recomputed. */
export function workOf(work: TensorWork, solution: WorkSolution, publicKey: Uint8Array): WorkResult {
  if (solution.work !== undefined) return solution.work;
  return computeWork(tensorTask(work), publicKey, solution.nonce);
}

export function checkNonce(nonce: unknown): void {
  if (typeof nonce !== 'number' || !Number.isSafeInteger(nonce) || nonce < 0) {
    throw new InvalidInputError([
      {
        path: 'solution.nonce',
        message: `solution.nonce: expected an integer in [0, 2^53 - 1], got ${JSON.stringify(nonce)}`,
      },
    ]);
  }
}
