import { ApiError } from '../../http/errors.js';

/**
 * The per-key budget of invalid v4.0 proofs. Every proof that reaches the recomputation costs
 * the validator the whole tensor work of a nonce; an honest miner almost never sends one that
 * fails there, so a key that does is throttled like pools throttle bad shares:
 *
 * - each key has a bucket of `burst` invalid proofs, refilled at one per `refillMs`;
 * - a proof that fails the recomputation or the thresholds takes one; taking the last one puts
 *   the key in back-off for `baseBackoffMs * 2^(strikes - 1)` (capped at `maxBackoffMs`),
 *   `strikes` counting the exhaustions;
 * - while in back-off every proof naming the key is refused before any verification with
 *   `invalid_submission_backoff` (429, Retry-After);
 * - an accepted proof removes one strike.
 *
 * Only rejections attributable to the key count (registered key, valid signature), so nobody
 * can put another key in back-off. The state is in memory, bounded to `maxKeys` keys (least
 * recently used dropped) and lost at a restart: a restart gives every key its budget back, which
 * costs at most `burst` recomputations per key.
 */
export interface InvalidBudgetRule {
  readonly burst: number;
  readonly refillMs: number;
  readonly baseBackoffMs: number;
  readonly maxBackoffMs: number;
}

/** The defaults per key (docs/validator.md, "Invalid-proof budget"). */
export const INVALID_BUDGET: InvalidBudgetRule = {
  burst: 10,
  refillMs: 60_000,
  baseBackoffMs: 60_000,
  maxBackoffMs: 3_600_000,
};

/**
 * The defaults per source address: keys are free to register, so one address sending invalid
 * proofs under many throwaway keys has a budget of its own (larger, for miners behind one NAT,
 * who send none when honest).
 */
export const INVALID_BUDGET_PER_ADDRESS: InvalidBudgetRule = {
  burst: 100,
  refillMs: 6_000,
  baseBackoffMs: 60_000,
  maxBackoffMs: 3_600_000,
};

interface KeyState {
  tokens: number;
  at: number;
  strikes: number;
  blockedUntil: number;
}

export class InvalidSubmissionBudget {
  readonly #keys = new Map<string, KeyState>();

  constructor(
    readonly rule: InvalidBudgetRule,
    private readonly now: () => number,
    /** What the budget is kept per, for messages: `key` or `address`. */
    private readonly subject: 'key' | 'address' = 'key',
    private readonly maxKeys = 50_000,
  ) {}

  /** Throws `invalid_submission_backoff` while `pubkey` (or the address) is in back-off. */
  check(pubkey: string): void {
    const state = this.#keys.get(pubkey);
    if (state === undefined) return;
    const now = this.now();
    if (state.blockedUntil > now) {
      const retryAfterS = Math.ceil((state.blockedUntil - now) / 1000);
      throw new ApiError(
        'invalid_submission_backoff',
        `${this.subject === 'key' ? pubkey : 'this address'} sent more invalid proofs than its budget (${this.rule.burst}, one more every ${this.rule.refillMs / 1000} s): proofs ${this.subject === 'key' ? 'of this key' : 'from this address'} are refused for ${retryAfterS} s; the wait doubles at each new exhaustion (${state.strikes} so far)`,
        { retry_after_s: retryAfterS, strikes: state.strikes },
        { 'retry-after': String(retryAfterS) },
      );
    }
  }

  /** Counts an invalid proof of `pubkey`; may start a back-off (the next `check` refuses). */
  recordInvalid(pubkey: string): void {
    const now = this.now();
    const state = this.#take(pubkey, now);
    state.tokens -= 1;
    if (state.tokens < 1) {
      state.strikes += 1;
      const backoff = Math.min(
        this.rule.maxBackoffMs,
        this.rule.baseBackoffMs * 2 ** Math.min(30, state.strikes - 1),
      );
      state.blockedUntil = now + backoff;
    }
  }

  /** Counts an accepted proof: one strike fewer. */
  recordValid(pubkey: string): void {
    const state = this.#keys.get(pubkey);
    if (state !== undefined && state.strikes > 0) state.strikes -= 1;
  }

  /** The key's state refilled to `now`, most recently used. */
  #take(pubkey: string, now: number): KeyState {
    const state = this.#keys.get(pubkey) ?? { tokens: this.rule.burst, at: now, strikes: 0, blockedUntil: 0 };
    this.#keys.delete(pubkey);
    state.tokens = Math.min(this.rule.burst, state.tokens + Math.max(0, now - state.at) / this.rule.refillMs);
    state.at = now;
    this.#keys.set(pubkey, state);
    if (this.#keys.size > this.maxKeys) {
      const oldest = this.#keys.keys().next().value;
      if (oldest !== undefined) this.#keys.delete(oldest);
    }
    return state;
  }
}

/** The two budgets a proof is charged to: its key's and its source address's. */
export class InvalidProofBudgets {
  readonly byKey: InvalidSubmissionBudget;
  readonly byAddress: InvalidSubmissionBudget;

  constructor(
    now: () => number,
    perKey: InvalidBudgetRule = INVALID_BUDGET,
    perAddress: InvalidBudgetRule = INVALID_BUDGET_PER_ADDRESS,
  ) {
    this.byKey = new InvalidSubmissionBudget(perKey, now, 'key');
    this.byAddress = new InvalidSubmissionBudget(perAddress, now, 'address');
  }

  check(pubkey: string, address: string): void {
    this.byKey.check(pubkey);
    this.byAddress.check(address);
  }

  recordInvalid(pubkey: string, address: string): void {
    this.byKey.recordInvalid(pubkey);
    this.byAddress.recordInvalid(address);
  }

  recordValid(pubkey: string, address: string): void {
    this.byKey.recordValid(pubkey);
    this.byAddress.recordValid(address);
  }
}
