const BRAND = Symbol.for('@tensormine/miner/MinerError');

/** The stable codes of MinerError. */
export type MinerErrorCode =
  /** A job or kernel input is malformed (wrong lengths, a nonce range outside [0, 2^53)). */
  | 'invalid_job'
  /** An option is out of range (thread count, intensity, token). */
  | 'invalid_option'
  /** A kernel reported a result that the reference verifier rejects: a bug, never submitted. */
  | 'kernel_mismatch'
  /** A result whose parts disagree (its nonce, its submission or proof, its header): never signed. */
  | 'invalid_result'
  /** A worker thread failed to start or exited unexpectedly. */
  | 'worker_failed'
  /** The journal file could not be read or written. */
  | 'journal_io';

/**
 * The one error type of the miner package: a stable `code`, a message that says what was
 * expected and what arrived, optional details and cause. `instanceof` works across two copies
 * of the package (brand via `Symbol.for`).
 *
 * It repeats the shape of @tensormine/protocol's CodedError on purpose: worker threads load
 * this file, and they must not import the protocol package (a worker does not get the
 * `@tensormine/source` condition, so on an unbuilt checkout that import would fail).
 */
export class MinerError extends Error {
  override readonly name = 'MinerError';
  readonly code: MinerErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: MinerErrorCode,
    message: string,
    details?: Record<string, unknown>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.code = code;
    this.details = details;
    Object.defineProperty(this, BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && BRAND in value;
  }
}
