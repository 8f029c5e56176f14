import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign, type Transfer, toHex } from '@tensormine/protocol';
import type { Validator } from '@tensormine/validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClaimService,
  Ledger,
  LedgerError,
  loadTreasuryKey,
  type PreparedTransfer,
  parseWelcomeTokens,
  TerminalStore,
} from '../src/index.js';
import {
  Browserless,
  balance,
  newWallet,
  pay,
  startEnv,
  startValidator,
  type Wallet,
  WELCOME,
} from './env.js';

/**
 * The claim state machine against a real validator: an empty treasury refuses without a
 * partial claim; a crash after the validator executed a transfer but before the terminal
 * recorded it is finished by the identical retry, which pays nothing twice; a stale signature is
 * signed again.
 */

let validator: Validator;
let url: string;
let faucet: Wallet;
let dir: string;

beforeAll(async () => {
  faucet = newWallet();
  ({ validator, url } = await startValidator([
    { wallet: faucet, token: 'PTM', amount: '100000' },
    { wallet: faucet, token: 'SOL', amount: '100' },
  ]));
  dir = mkdtempSync(join(tmpdir(), 'tm-claims-'));
});

afterAll(async () => {
  await validator?.close();
  rmSync(dir, { recursive: true, force: true });
});

const welcome = parseWelcomeTokens(WELCOME);

function service(treasury: Wallet, store: TerminalStore, ledger?: Ledger): ClaimService {
  return new ClaimService(
    store,
    ledger ?? new Ledger(url, treasury.key.secretKey, Date.now),
    welcome,
    'x',
    Date.now,
  );
}

describe('claims', () => {
  it('an empty treasury is a clear error, leaves no claim behind, and a later claim works', async () => {
    const treasury = newWallet();
    const user = newWallet();
    const store = new TerminalStore(':memory:');
    const claims = service(treasury, store);
    await expect(claims.claim('acct-1', user.address)).rejects.toMatchObject({ code: 'treasury_empty' });
    expect(store.claimByWallet(user.address)).toBeUndefined();

    // Only PTM: still refused, and no PTM was sent either (no partial claim).
    await pay(url, faucet, treasury.hex, 'PTM', '1000');
    await expect(claims.claim('acct-1', user.address)).rejects.toMatchObject({
      code: 'treasury_empty',
      message: expect.stringContaining('SOL too low'),
    });
    expect(await balance(url, user, 'PTM')).toBe('0');

    await pay(url, faucet, treasury.hex, 'SOL', '1');
    const result = await claims.claim('acct-1', user.address);
    expect(result.claimed).toBe(true);
    expect(await balance(url, user, 'PTM')).toBe('100');
    expect(await balance(url, user, 'SOL')).toBe('0.05');
    store.close();
  });

  it('a crash between "sent" and "recorded" is finished by the identical retry: paid once', async () => {
    const treasury = newWallet();
    await pay(url, faucet, treasury.hex, 'PTM', '1000');
    await pay(url, faucet, treasury.hex, 'SOL', '1');
    const user = newWallet();
    const file = join(dir, 'crash.db');

    // The first process: the validator executes the PTM transfer, then the process "dies"
    // before it records the answer.
    class CrashingLedger extends Ledger {
      override async send(prepared: PreparedTransfer): Promise<Transfer> {
        await super.send(prepared);
        throw new Error('process killed');
      }
    }
    const store1 = new TerminalStore(file);
    const crashing = service(treasury, store1, new CrashingLedger(url, treasury.key.secretKey, Date.now));
    await expect(crashing.claim('acct-crash', user.address)).rejects.toThrow();
    expect(store1.claimByWallet(user.address)?.state).toBe('pending');
    expect(await balance(url, user, 'PTM')).toBe('100');
    store1.close();

    // The restarted process resumes the pending claim with the same signed requests.
    const store2 = new TerminalStore(file);
    const logs: string[] = [];
    await service(treasury, store2).resumePending((m) => logs.push(m));
    expect(logs.join()).toContain('finished');
    const claim = store2.claimByWallet(user.address);
    expect(claim?.state).toBe('paid');
    expect(await balance(url, user, 'PTM')).toBe('100');
    expect(await balance(url, user, 'SOL')).toBe('0.05');
    expect(await balance(url, treasury, 'PTM')).toBe('900');
    // Asking again answers with the recorded transfers, which are on the ledger.
    const again = await service(treasury, store2).claim('acct-crash', user.address);
    expect(again.claimed).toBe(false);
    const ledger = new Ledger(url, undefined, Date.now);
    for (const t of again.transfers) {
      expect(await ledger.getTransfer(t.transfer_id)).toMatchObject({
        to: user.hex,
        from: treasury.hex,
        token: t.token,
      });
    }
    await ledger.close();
    store2.close();
  });

  it('after the validator pruned the stored result, an executed transfer is found on the ledger, not paid again', async () => {
    const treasury = newWallet();
    await pay(url, faucet, treasury.hex, 'PTM', '1000');
    await pay(url, faucet, treasury.hex, 'SOL', '1');
    const user = newWallet();
    const file = join(dir, 'pruned.db');
    class CrashingLedger extends Ledger {
      override async send(prepared: PreparedTransfer): Promise<Transfer> {
        await super.send(prepared);
        throw new Error('process killed');
      }
    }
    const store1 = new TerminalStore(file);
    await expect(
      service(treasury, store1, new CrashingLedger(url, treasury.key.secretKey, Date.now)).claim(
        'acct-pruned',
        user.address,
      ),
    ).rejects.toThrow();
    store1.close();
    // Days later: the validator no longer has the stored result and answers the old copy with
    // request_expired (as it does for any request older than its window).
    let resent = 0;
    class PrunedLedger extends Ledger {
      override async send(prepared: PreparedTransfer): Promise<Transfer> {
        if (prepared.signedAtMs < startedAt) throw new LedgerError('request_expired', 401, 'expired');
        resent++;
        return super.send(prepared);
      }
    }
    const startedAt = Date.now();
    const store2 = new TerminalStore(file);
    await service(treasury, store2, new PrunedLedger(url, treasury.key.secretKey, Date.now)).resumePending(
      () => {},
    );
    expect(store2.claimByWallet(user.address)?.state).toBe('paid');
    // The PTM transfer was found by its memo; only the never-sent SOL transfer was signed again.
    expect(resent).toBe(1);
    expect(await balance(url, user, 'PTM')).toBe('100');
    expect(await balance(url, user, 'SOL')).toBe('0.05');
    expect(await balance(url, treasury, 'PTM')).toBe('900');
    store2.close();
  });

  it('a transfer signed too long ago is signed again (the validator never executed it)', async () => {
    const treasury = newWallet();
    await pay(url, faucet, treasury.hex, 'PTM', '1000');
    await pay(url, faucet, treasury.hex, 'SOL', '1');
    const user = newWallet();
    let clock = Date.now() - 3_600_000;
    const ledger = new Ledger(url, treasury.key.secretKey, () => {
      const t = clock;
      clock = Date.now();
      return t;
    });
    const store = new TerminalStore(':memory:');
    const result = await service(treasury, store, ledger).claim('acct-stale', user.address);
    expect(result.claimed).toBe(true);
    expect(await balance(url, user, 'PTM')).toBe('100');
    expect(await balance(url, treasury, 'PTM')).toBe('900');
    store.close();
  });

  it('an unreachable validator refuses the claim and leaves nothing behind', async () => {
    const treasury = newWallet();
    const store = new TerminalStore(':memory:');
    const claims = new ClaimService(
      store,
      new Ledger('http://127.0.0.1:9', treasury.key.secretKey, Date.now),
      welcome,
      'x',
      Date.now,
    );
    await expect(claims.claim('acct-down', newWallet().address)).rejects.toMatchObject({
      code: 'upstream_unavailable',
    });
    expect(store.pendingClaims()).toEqual([]);
    store.close();
  });
});

describe('wallet proof', () => {
  it('accepts only a fresh signature of the challenge by the wallet key, once', async () => {
    const env = await startEnv();
    try {
      const s = new Browserless(env.base);
      const wallet = newWallet();
      const intruder = newWallet();
      const challenge = await s.call('POST', '/api/wallet/challenge', { wallet: wallet.address });
      expect(challenge.json.message).toContain(`Wallet: ${wallet.address}`);
      expect(challenge.json.message).toContain(`URI: ${env.base}`);
      const message = new TextEncoder().encode(String(challenge.json.message));
      // Signed by another key: refused, and the challenge is spent.
      const wrong = await s.call('POST', '/api/wallet/verify', {
        wallet: wallet.address,
        signature: toHex(sign(message, intruder.key.secretKey)),
      });
      expect(wrong.status).toBe(401);
      expect(wrong.json.code).toBe('wallet_proof_invalid');
      const late = await s.call('POST', '/api/wallet/verify', {
        wallet: wallet.address,
        signature: toHex(sign(message, wallet.key.secretKey)),
      });
      expect(late.json.code).toBe('wallet_proof_invalid');
      expect(String(late.json.message)).toContain('no challenge is pending');
      // The right way.
      await s.proveWallet(wallet);
      const me = await s.call('GET', '/api/session');
      expect(me.json).toMatchObject({ wallet: wallet.address, account: null, claim_session: null });
      // A claim without a signed-in account is refused.
      const claim = await s.call('POST', '/api/x-auth/claim', {
        wallet: wallet.address,
        session: 'A'.repeat(32),
      });
      expect(claim.status).toBe(401);
      expect(claim.json.code).toBe('session_required');
    } finally {
      await env.close();
    }
  });
});

describe('treasury key and configuration', () => {
  it('reads the key from a 0600 file, refuses a file others can read, never shows the key', async () => {
    const treasury = newWallet();
    const hex = toHex(treasury.key.secretKey);
    const file = join(dir, 'treasury.key');
    writeFileSync(file, `${hex}\n`, { mode: 0o600 });
    expect(toHex((await loadTreasuryKey(undefined, file)) as Uint8Array)).toBe(hex);
    chmodSync(file, 0o644);
    const refused = loadTreasuryKey(undefined, file);
    await expect(refused).rejects.toThrow(/readable by group or others/);
    await expect(refused).rejects.not.toThrow(hex);
    await expect(loadTreasuryKey('zz', undefined)).rejects.toThrow();

    const out = execFileSync(
      join(import.meta.dirname, '..', '..', '..', 'node_modules', '.bin', 'tsx'),
      ['--conditions=@tensormine/source', join(import.meta.dirname, '..', 'src', 'bin.ts'), 'config'],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          REWARD_WALLET_PRIVATE_KEY: hex,
          X_CLIENT_SECRET: 'very-secret-value',
          X_CLIENT_ID: 'cid',
        },
      },
    );
    expect(out).not.toContain(hex);
    expect(out).not.toContain('very-secret-value');
    expect(out).toMatch(/rewardWalletPrivateKey\s+\(set\)\s+env \(REWARD_WALLET_PRIVATE_KEY\)/);
    expect(out).toMatch(/oauthClientId\s+cid\s+env \(X_CLIENT_ID\)/);
  });

  it('never returns the treasury key in an answer', async () => {
    const env = await startEnv();
    try {
      const hex = toHex(env.treasury.key.secretKey);
      for (const path of ['/api/health', '/api/session', '/api/staking/options', '/api/vault/options']) {
        const r = await fetch(`${env.base}${path}`);
        expect(await r.text()).not.toContain(hex);
      }
    } finally {
      await env.close();
    }
  });
});
