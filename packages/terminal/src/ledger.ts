import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { createClient, type TensormineClient, ValidatorError } from '@tensormine/client';
import {
  type BalancesResponse,
  fromHex,
  isErrorCode,
  keyPairFromSecret,
  type SignedRequestHeaders,
  signRequest,
  type Transfer,
  toHex,
} from '@tensormine/protocol';
import { ConfigError } from '@tensormine/service-kit';

/**
 * The terminal's side of the validator ledger: the treasury key, transfers it sends (as exact
 * signed requests that can be sent again byte for byte), and the reads (transfers, balances)
 * through the SDK.
 */

/** A transfer prepared for sending: the body text and what its signature covers. */
export interface PreparedTransfer {
  readonly body: string;
  readonly signedAtMs: number;
  /** 32 hex digits (16 bytes). */
  readonly nonce: string;
}

/** The validator answered with an error; `code` is from the error table when it is known. */
export class LedgerError extends Error {
  override readonly name = 'LedgerError';
  constructor(
    readonly code: string,
    readonly status: number | undefined,
    message: string,
  ) {
    super(message);
  }
  /** True when the request never executed on the validator (safe to prepare again). */
  get notExecuted(): boolean {
    return (
      this.status !== undefined && this.status >= 400 && this.status < 500 && this.code !== 'rate_limited'
    );
  }
}

/** The treasury's secret key, from the environment or a 0600 file; never logged or returned. */
export async function loadTreasuryKey(
  fromEnv: string | undefined,
  file: string | undefined,
): Promise<Uint8Array | undefined> {
  if (fromEnv && file) {
    throw new ConfigError(
      'give the treasury key once: REWARD_WALLET_PRIVATE_KEY or REWARD_WALLET_PRIVATE_KEY_FILE, not both',
    );
  }
  if (fromEnv) return fromHex(fromEnv, 32, 'treasury key');
  if (!file) return undefined;
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, 'r');
    const stat = await handle.stat();
    if ((stat.mode & 0o077) !== 0 && process.platform !== 'win32') {
      throw new ConfigError(
        `treasury key file ${file} is readable by group or others (mode ${(stat.mode & 0o777).toString(8)}): run "chmod 600 ${file}"`,
      );
    }
    const text = (await handle.readFile({ encoding: 'utf8' })).trim();
    // A bare hex key, or a key file of the SDK ({"type":"ed25519","secret_key":hex,...}).
    let hex = text;
    if (text.startsWith('{')) {
      try {
        hex = String((JSON.parse(text) as { secret_key?: unknown }).secret_key ?? '');
      } catch {
        hex = '';
      }
    }
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
      throw new ConfigError(
        `treasury key file ${file}: expected 64 hex digits or an SDK key file; the content is not shown`,
      );
    }
    return fromHex(hex.toLowerCase(), 32, 'treasury key');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(
      `treasury key file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  } finally {
    await handle?.close();
  }
}

export class Ledger {
  readonly client: TensormineClient;
  readonly #secretKey: Uint8Array | undefined;
  /** The treasury's public key (hex), when a treasury key is configured. */
  readonly treasury: string | undefined;

  constructor(
    readonly validatorUrl: string,
    secretKey: Uint8Array | undefined,
    private readonly now: () => number,
  ) {
    this.client = createClient({ url: validatorUrl, healthCheckIntervalMs: 0, timeoutMs: 10_000 });
    this.#secretKey = secretKey ? Uint8Array.from(secretKey) : undefined;
    this.treasury = secretKey ? toHex(keyPairFromSecret(secretKey).publicKey) : undefined;
  }

  /** A transfer from the treasury, ready to be stored and sent. */
  prepare(to: string, token: string, amount: string, memo: string): PreparedTransfer {
    if (!this.treasury) throw new Error('no treasury key');
    const body = JSON.stringify({ from: this.treasury, to, token, amount, memo });
    return { body, signedAtMs: this.now(), nonce: randomBytes(16).toString('hex') };
  }

  /**
   * Sends a prepared transfer exactly as prepared (same body, time and nonce: ed25519 signatures
   * are deterministic, so the headers are the same too). Sending it again returns the original
   * transfer; it never pays twice.
   * @throws LedgerError
   */
  async send(prepared: PreparedTransfer): Promise<Transfer> {
    if (!this.#secretKey) throw new Error('no treasury key');
    const headers = signRequest({
      method: 'POST',
      path: '/transfer',
      body: prepared.body,
      secretKey: this.#secretKey,
      timestamp: prepared.signedAtMs,
      nonce: fromHex(prepared.nonce, 16, 'nonce'),
    });
    return this.postTransfer(prepared.body, headers);
  }

  /**
   * Sends a POST /transfer signed by someone else (a wallet in a browser) exactly as signed: the
   * body text and the four signed-request headers. The validator checks the signature.
   * @throws LedgerError
   */
  async postTransfer(body: string, headers: SignedRequestHeaders): Promise<Transfer> {
    let response: Response;
    try {
      response = await fetch(`${this.validatorUrl}/transfer`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new LedgerError(
        'network_error',
        undefined,
        `the validator could not be reached (${(error as Error).name})`,
      );
    }
    const json = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    if (response.ok && json && typeof json.transfer_id === 'string') return json as unknown as Transfer;
    const code = json && typeof json.code === 'string' ? json.code : 'unexpected_response';
    throw new LedgerError(
      code,
      response.status,
      `the validator refused the transfer: ${typeof json?.message === 'string' ? json.message : response.status}`,
    );
  }

  /** A transfer by id; undefined when the validator does not know it. */
  async getTransfer(transferId: string): Promise<Transfer | undefined> {
    try {
      return await this.client.economy.getTransfer(transferId);
    } catch (error) {
      if (error instanceof ValidatorError && error.status === 404) return undefined;
      throw asLedgerError(error);
    }
  }

  /**
   * The transfer from the treasury to `to` in `token` carrying `memo`, if the ledger has one:
   * walks `to`'s transfer entries, newest first (at most `maxPages` pages of 100).
   */
  async findTreasuryTransfer(
    to: string,
    token: string,
    memo: string,
    maxPages = 50,
  ): Promise<Transfer | undefined> {
    let cursor: string | undefined;
    try {
      for (let page = 0; page < maxPages; page++) {
        const result = await this.client.economy.ledger({
          pubkey: to,
          token,
          type: 'transfer',
          limit: 100,
          ...(cursor ? { cursor } : {}),
        });
        for (const entry of result.entries) {
          if (!entry.ref || entry.amount.startsWith('-')) continue;
          const transfer = await this.getTransfer(entry.ref);
          if (transfer && transfer.from === this.treasury && transfer.memo === memo) return transfer;
        }
        if (!result.next_cursor) return undefined;
        cursor = result.next_cursor;
      }
    } catch (error) {
      throw asLedgerError(error);
    }
    throw new LedgerError(
      'unexpected_response',
      undefined,
      'the ledger search for the transfer did not finish',
    );
  }

  async balances(pubkey: string): Promise<BalancesResponse> {
    try {
      return await this.client.economy.balances(pubkey);
    } catch (error) {
      throw asLedgerError(error);
    }
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/** An SDK error as a LedgerError (the validator's code kept when it is one of ours). */
export function asLedgerError(error: unknown): LedgerError {
  if (error instanceof LedgerError) return error;
  if (error instanceof ValidatorError) {
    return new LedgerError(
      isErrorCode(error.code) ? error.code : 'unexpected_response',
      error.status,
      error.serverMessage,
    );
  }
  const e = error as { code?: unknown; message?: unknown };
  return new LedgerError(
    typeof e.code === 'string' ? e.code : 'network_error',
    undefined,
    `the validator could not be reached or answered unexpectedly (${typeof e.code === 'string' ? e.code : 'error'})`,
  );
}
