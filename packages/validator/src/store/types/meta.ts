// Small repositories: settings, counters, request nonces: part of the storage interface (../types.ts).

/**
 * The (public key, nonce) pairs of accepted signed requests, remembered until their replay
 * window has closed. A pair is claimed in the transaction of the request's effect, after every
 * check passed, so a rolled-back request leaves no pair behind and a committed one leaves
 * exactly one.
 */
export interface RequestNonceRepo {
  /**
   * Records the pair, valid until `expiresAtMs`; false when it is already recorded (a replay).
   * Also forgets a bounded batch of pairs whose window closed before `forgetBeforeMs`.
   */
  claim(pubkey: string, nonce: string, expiresAtMs: number, forgetBeforeMs: number): Promise<boolean>;
  /** Pairs currently stored (expired ones included until they are forgotten). */
  count(): Promise<number>;
}

/** Small key/value settings that must survive a restart (validator seed, config overrides). */
export interface MetaRepo {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
}

/** Monotonic counters (challenges issued, proofs valid, rejections by reason...). */
export interface CounterRepo {
  add(name: string, delta: number): Promise<void>;
  get(name: string): Promise<number>;
  /** Every counter whose name starts with `prefix`. */
  list(prefix: string): Promise<Record<string, number>>;
}
