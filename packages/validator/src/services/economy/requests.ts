import { createHash } from 'node:crypto';
import { EXACTLY_ONCE_OPERATIONS, formatAmount, SIGNED_REQUEST_HEADERS } from '@tensormine/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { nowSeconds, type ValidatorContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { InsufficientBalanceError, type StorageTx, type TransactionOptions } from '../../store/types.js';

/**
 * Exactly-once execution of signed economy requests.
 *
 * A signed request is identified by its signer and its x-tm-nonce. Its 200 result is stored in
 * `economy_requests`, in the same transaction that moved the money, with the hash of the whole
 * signed request (method, path, timestamp, nonce, signature, body). Then:
 * - a retry of the identical signed request, at any time, returns the stored result (the
 *   pre-handler below answers it before the replay check of the signed-request scheme, and the
 *   transaction checks again, for two copies racing each other or a retry after a restart);
 * - a different request reusing the nonce is refused (`idempotency_conflict`);
 * - a request that failed stored nothing and moved nothing: sign it again with a fresh nonce.
 */

/** The operations whose results are stored (every signed state-changing economy route). */
export const STORED_OPERATIONS = EXACTLY_ONCE_OPERATIONS;

/** The identity of a signed request: signer, nonce and the hash of the whole request. */
export interface SignedRequestKey {
  readonly pubkey: string;
  readonly nonce: string;
  /** Its x-tm-timestamp, as sent (decimal milliseconds). */
  readonly timestamp: string;
  readonly requestHash: string;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The key of a signed request, from its headers and raw body (undefined when unsigned). */
export function signedRequestKey(request: FastifyRequest): SignedRequestKey | undefined {
  const pubkey = header(request, SIGNED_REQUEST_HEADERS.publicKey);
  const nonce = header(request, SIGNED_REQUEST_HEADERS.nonce);
  const timestamp = header(request, SIGNED_REQUEST_HEADERS.timestamp);
  const signature = header(request, SIGNED_REQUEST_HEADERS.signature);
  if (!pubkey || !nonce || !timestamp || !signature) return undefined;
  if (!/^[0-9a-f]{64}$/.test(pubkey) || !/^[0-9a-f]{32}$/.test(nonce)) return undefined;
  const hash = createHash('sha256');
  for (const part of [request.method.toUpperCase(), request.url, timestamp, nonce, signature]) {
    hash.update(part);
    hash.update('\n');
  }
  hash.update(request.rawBody ?? new Uint8Array(0));
  return { pubkey, nonce, timestamp, requestHash: hash.digest('hex') };
}

/**
 * Fastify preHandler: answers a retry of an already executed signed economy request with its
 * stored result (header `x-tm-idempotent-replay: true`), before the signed-request replay check.
 */
export function replayStoredResult(ctx: ValidatorContext) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const operationId = (request.routeOptions.schema as { operationId?: string } | undefined)?.operationId;
    if (operationId === undefined || !STORED_OPERATIONS.has(operationId)) return;
    const key = signedRequestKey(request);
    if (key === undefined) return;
    const stored = await ctx.storage.read((tx) => tx.economy.requests.get(key.pubkey, key.nonce));
    if (stored === undefined || stored.requestHash !== key.requestHash) return;
    void reply.header('x-tm-idempotent-replay', 'true');
    await reply.code(200).send(JSON.parse(stored.result));
  };
}

/**
 * Runs `fn` once for this signed request, in one transaction, and stores its result with the
 * request; a stored result is returned instead of running again. Maps a refused debit to
 * `insufficient_balance` saying what is available.
 */
export async function executeOnce<T extends object>(
  ctx: ValidatorContext,
  request: FastifyRequest,
  claimNonce: (tx: StorageTx) => Promise<void>,
  operation: string,
  fn: (tx: StorageTx, now: number, key: SignedRequestKey) => Promise<T>,
  options: ExecuteOptions = {},
): Promise<T> {
  const key = signedRequestKey(request);
  if (key === undefined) {
    // The router verified the signature, so the headers are there; this is a bug if reached.
    throw new Error(`${operation}: a signed request without signed-request headers`);
  }
  const { withClaim = false, ...transaction } = options;
  try {
    return await ctx.storage.transaction(async (tx) => {
      // The stored result is read and the nonce claimed together (one round trip on
      // PostgreSQL). The nonce is recorded with the effect: a refused request records nothing.
      // The claim fails when the nonce is recorded: by this request's original (a copy racing
      // it gets request_replayed), by another request (idempotency_conflict), or by a request
      // committed meanwhile (row-locks: the claim waited for it; read again below).
      const checked = Promise.all([
        tx.economy.requests.get(key.pubkey, key.nonce),
        claimNonce(tx).then(
          () => undefined,
          (error: unknown) => ({ error }),
        ),
      ]);
      const now = nowSeconds(ctx);
      // `withClaim`: the effect starts now, its first statements in the claim's round trip; it
      // counts only once the checks below pass (else the transaction is rolled back).
      const early = withClaim ? settle(fn(tx, now, key)) : undefined;
      const [stored, claim] = await checked;
      if (early !== undefined && (stored !== undefined || claim !== undefined)) {
        // The effect's statements are answered before the transaction ends (it is rolled back).
        await early;
        if (stored !== undefined && stored.requestHash === key.requestHash && claim === undefined) {
          throw new StoredResult(stored.result);
        }
      }
      if (stored !== undefined && stored.requestHash !== key.requestHash) {
        throw reusedNonce(key, stored.operation);
      }
      if (claim !== undefined) {
        const { error } = claim;
        // Another request may have committed with the nonce after `stored` was read: read
        // again, after this transaction (which an early effect may have aborted meanwhile, its
        // record's key taken by that request's).
        if (stored === undefined && error instanceof ApiError && error.code === 'request_replayed') {
          throw new ReadAgain(error);
        }
        throw error;
      }
      // Unreachable in practice (a stored result keeps its nonce claimed for the whole replay
      // window, and an older retry is refused as expired before it gets here): the result.
      if (stored !== undefined) return JSON.parse(stored.result) as T;
      const result = early === undefined ? await fn(tx, now, key) : unwrap(await early);
      // Left in flight: it travels with the COMMIT, and a failure fails the transaction (the
      // nonce, claimed above, keys it).
      tx.inFlight(
        tx.economy.requests.insert({
          pubkey: key.pubkey,
          nonce: key.nonce,
          requestHash: key.requestHash,
          operation,
          result: JSON.stringify(result),
          createdAt: now,
        }),
      );
      return result;
    }, transaction);
  } catch (error) {
    if (error instanceof StoredResult) return JSON.parse(error.result) as T;
    if (error instanceof ReadAgain) {
      const committed = await ctx.storage.read((tx) => tx.economy.requests.get(key.pubkey, key.nonce));
      if (committed !== undefined && committed.requestHash !== key.requestHash) {
        throw reusedNonce(key, committed.operation);
      }
      throw error.refusal;
    }
    if (error instanceof InsufficientBalanceError) throw insufficient(error);
    throw error;
  }
}

/** How {@link executeOnce} runs its transaction. */
export interface ExecuteOptions extends TransactionOptions {
  /**
   * Starts `fn` with the nonce claim, not after it: its first statements travel in the claim's
   * round trip (a transfer: the accounts' locks), one round trip less. Its effect is kept only
   * if the claim succeeds; otherwise the transaction, with whatever `fn` did, is rolled back.
   * For an `fn` that only reads and writes through `tx` (nothing outside the transaction).
   * `isolation: 'row-locks'` for an operation whose `fn` keeps the rules of such transactions
   * (a transfer: ledger.apply locks what it reads); the stored result and the nonce are keyed,
   * unique rows.
   */
  readonly withClaim?: boolean;
}

/** A stored result found while an early effect ran: thrown to roll that effect back, then answered. */
class StoredResult extends Error {
  constructor(readonly result: string) {
    super('a stored result');
  }
}

/** A refused claim whose reason {@link executeOnce} reads once its transaction has ended. */
class ReadAgain extends Error {
  constructor(readonly refusal: ApiError) {
    super(refusal.message);
  }
}

type Settled<T> = { readonly value: T } | { readonly error: unknown };

function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

function unwrap<T>(settled: Settled<T>): T {
  if ('error' in settled) throw settled.error;
  return settled.value;
}

/** `idempotency_conflict`: the nonce was used by another request of this key. */
function reusedNonce(key: SignedRequestKey, operation: string): ApiError {
  return new ApiError(
    'idempotency_conflict',
    `x-tm-nonce ${key.nonce} was already used by ${key.pubkey} for another ${operation} request; sign each new request with a fresh nonce`,
    { nonce: key.nonce, operation },
  );
}

/** `insufficient_balance`, with what is available and what was needed, in whole tokens. */
export function insufficient(error: InsufficientBalanceError): ApiError {
  const available = formatAmount(error.balance, error.token);
  const required = formatAmount(error.required, error.token);
  const whose = error.pubkey.startsWith('@') ? `the ${error.pubkey} account` : 'your balance';
  return new ApiError(
    'insufficient_balance',
    `insufficient ${error.token}: ${whose} holds ${available} ${error.token}, ${required} ${error.token} required`,
    { token: error.token, available, required },
  );
}

/**
 * How long a stored result is kept: 7 days. Long enough for any client to fetch a lost answer;
 * pruning is safe because an identical retry older than the signed-request window (60 s) is
 * refused as expired and never executes.
 */
export const RESULT_RETENTION_S = 7 * 86_400;

/** Deletes stored results older than the retention; returns how many. */
export function pruneStoredResults(ctx: ValidatorContext): Promise<number> {
  const before = nowSeconds(ctx) - RESULT_RETENTION_S;
  return ctx.storage.transaction((tx) => tx.economy.requests.prune(before));
}
