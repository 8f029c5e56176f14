import { randomBytes } from 'node:crypto';
import { parseAmount, type XAuthClaimResult } from '@tensormine/protocol';
import { ApiError } from '@tensormine/service-kit';
import type { WelcomeToken } from './config.js';
import { type Ledger, LedgerError } from './ledger.js';
import { type ClaimRow, isUniqueViolation, type TerminalStore } from './store.js';
import { walletToPubkey } from './wallet.js';

/**
 * Welcome claims: the treasury sends the welcome tokens (one transfer per token) to a proven
 * wallet, once per social account and once per wallet, ever.
 *
 * State machine of a claim (table claims, one row per account and per wallet):
 *
 *   (none) --insert, transfers prepared--> pending --every transfer executed--> paid
 *      ^                                      |
 *      +---- the treasury could not pay ------+   (only while no transfer executed)
 *
 * - The row is inserted with its prepared transfers (exact signed requests) before anything is
 *   sent; the UNIQUE constraints make a second claim for the account or the wallet fail, also
 *   from another process sharing the database.
 * - Payouts run one at a time (a queue): the treasury's balances are checked for the whole claim
 *   before the first transfer, so an empty treasury is refused without a partial claim.
 * - A pending claim (a crash, a network error, the validator down) is finished by sending the
 *   SAME signed requests again: the validator returns the original transfer for a request it
 *   already executed, so nothing is paid twice. The terminal resumes pending claims at start and
 *   whenever the same user asks again.
 */
export class ClaimService {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: TerminalStore,
    private readonly ledger: Ledger,
    private readonly welcome: readonly WelcomeToken[],
    private readonly provider: string,
    private readonly now: () => number,
  ) {}

  /** Runs `fn` after every payout queued before it (payouts never interleave). */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async claim(accountId: string, wallet: string): Promise<XAuthClaimResult> {
    if (!this.ledger.treasury) {
      throw new ApiError(
        'treasury_not_configured',
        'this terminal has no treasury key, so it sends no welcome tokens',
      );
    }
    const pubkey = walletToPubkey(wallet);
    if (!pubkey) throw new ApiError('validation_failed', 'body/wallet: not a 32-byte wallet address');
    if (pubkey === this.ledger.treasury)
      throw new ApiError('wallet_mismatch', 'the treasury cannot claim from itself');
    return this.#serial(async () => {
      const existing = this.#existing(accountId, wallet);
      if (existing) return this.#finish(existing, false);
      const claim = this.#insert(accountId, wallet, pubkey);
      // Another claim of the account or the wallet won the race (another process): answer for it.
      if (!claim) return this.#finish(this.#existing(accountId, wallet) as ClaimRow, false);
      await this.#checkTreasury(claim);
      return this.#finish(claim, true);
    });
  }

  /** Finishes every pending claim (at start; errors are left for the next try). */
  async resumePending(log: (message: string) => void): Promise<void> {
    for (const claim of this.store.pendingClaims()) {
      await this.#serial(() => this.#pay(claim)).then(
        () => log(`claim ${claim.claim_id}: finished`),
        (error: unknown) => log(`claim ${claim.claim_id}: still pending (${(error as Error).message})`),
      );
    }
  }

  /** The claim of this account or this wallet; refuses one that pairs them differently. */
  #existing(accountId: string, wallet: string): ClaimRow | undefined {
    const byAccount = this.store.claimByAccount(this.provider, accountId);
    const byWallet = this.store.claimByWallet(wallet);
    if (byAccount && byAccount.wallet !== wallet) {
      throw new ApiError(
        'already_claimed',
        'this social account already claimed its welcome tokens, to another wallet: one claim per account',
      );
    }
    if (byWallet && byWallet.account_id !== accountId) {
      throw new ApiError(
        'already_claimed',
        'this wallet already received welcome tokens through another social account: one claim per wallet',
      );
    }
    return byAccount ?? byWallet;
  }

  #insert(accountId: string, wallet: string, pubkey: string): ClaimRow | undefined {
    const claimId = randomBytes(12).toString('base64url');
    const createdAt = Math.floor(this.now() / 1000);
    const transfers = this.welcome.map((w) => {
      const prepared = this.ledger.prepare(pubkey, w.token, w.amount, `welcome ${claimId}`);
      return {
        claim_id: claimId,
        token: w.token,
        amount: w.amount,
        body: prepared.body,
        signed_at_ms: prepared.signedAtMs,
        nonce: prepared.nonce,
      };
    });
    const row = {
      claim_id: claimId,
      provider: this.provider,
      account_id: accountId,
      wallet,
      created_at: createdAt,
    };
    try {
      this.store.insertClaim(row, transfers);
    } catch (error) {
      if (isUniqueViolation(error)) return undefined;
      throw error;
    }
    return { ...row, state: 'pending' };
  }

  /** Refuses (and removes) a new claim the treasury cannot pay in full. */
  async #checkTreasury(claim: ClaimRow): Promise<void> {
    const treasury = this.ledger.treasury as string;
    let balances: Awaited<ReturnType<Ledger['balances']>>;
    try {
      balances = await this.ledger.balances(treasury);
    } catch (error) {
      this.store.deleteUnpaidClaim(claim.claim_id);
      throw upstream(error);
    }
    const short = this.welcome.filter((w) => {
      const row = balances.balances.find((b) => b.token === w.token);
      return !row || parseAmount(row.available, w.token) < w.minor;
    });
    if (short.length > 0) {
      this.store.deleteUnpaidClaim(claim.claim_id);
      throw new ApiError(
        'treasury_empty',
        `the treasury cannot pay the welcome tokens now (${short.map((w) => w.token).join(', ')} too low); nothing was sent, try again later`,
      );
    }
  }

  async #finish(claim: ClaimRow, fresh: boolean): Promise<XAuthClaimResult> {
    const justPaid = claim.state === 'pending' ? await this.#pay(claim) : false;
    return {
      claimed: fresh || justPaid,
      wallet: claim.wallet,
      transfers: this.store.claimTransfers(claim.claim_id).map((t) => ({
        token: t.token,
        amount: t.amount,
        transfer_id: t.transfer_id as string,
      })),
    };
  }

  /** Sends every transfer of a pending claim not yet executed; true when the claim is now paid. */
  async #pay(claim: ClaimRow): Promise<boolean> {
    for (const t of this.store.claimTransfers(claim.claim_id)) {
      if (t.transfer_id) continue;
      let prepared = { body: t.body, signedAtMs: t.signed_at_ms, nonce: t.nonce };
      let transfer: Awaited<ReturnType<Ledger['send']>>;
      try {
        transfer = await this.ledger.send(prepared);
      } catch (error) {
        // A stale signature (request_expired): the request was never executed, or it was and the
        // validator has since pruned its stored result. The ledger tells which.
        if (error instanceof LedgerError && error.code === 'request_expired') {
          const body = JSON.parse(t.body) as { to: string; memo: string };
          // The validator keeps the results of executed requests for days, then answers an old
          // copy with request_expired too. So before signing again, the ledger is searched for
          // this claim's transfer (its memo is unique): found, it is recorded, never re-sent.
          const done = await this.ledger
            .findTreasuryTransfer(body.to, t.token, body.memo)
            .catch((e: unknown) => this.#failed(claim, e));
          if (done) {
            this.store.recordTransfer(claim.claim_id, t.token, done.transfer_id);
            continue;
          }
          prepared = this.ledger.prepare(body.to, t.token, t.amount, body.memo);
          this.store.reprepareTransfer(
            claim.claim_id,
            t.token,
            prepared.body,
            prepared.signedAtMs,
            prepared.nonce,
          );
          transfer = await this.ledger.send(prepared).catch((e: unknown) => this.#failed(claim, e));
        } else {
          transfer = await this.#failed(claim, error);
        }
      }
      this.store.recordTransfer(claim.claim_id, t.token, transfer.transfer_id);
    }
    this.store.markClaimPaid(claim.claim_id, Math.floor(this.now() / 1000));
    return true;
  }

  /** A transfer failed: an unpaid claim is removed when the treasury is short; else it stays pending. */
  #failed(claim: ClaimRow, error: unknown): never {
    const executed = this.store.claimTransfers(claim.claim_id).some((t) => t.transfer_id);
    if (error instanceof LedgerError && error.code === 'insufficient_balance') {
      if (!executed) this.store.deleteUnpaidClaim(claim.claim_id);
      throw new ApiError(
        'treasury_empty',
        executed
          ? 'the treasury ran short in the middle of this claim; the rest is sent when you claim again'
          : 'the treasury cannot pay the welcome tokens now; nothing was sent, try again later',
      );
    }
    throw upstream(error);
  }
}

function upstream(error: unknown): ApiError {
  return new ApiError(
    'upstream_unavailable',
    `the validator could not complete the transfer (${error instanceof LedgerError ? error.code : 'error'}); claim again to finish: nothing is paid twice`,
  );
}
