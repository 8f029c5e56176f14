import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Entitlement, TerminalSession } from '@tensormine/protocol';
import { ConfigError } from '@tensormine/service-kit';
import type { FastifyRequest } from 'fastify';
import type { OAuthAccount, PendingFlow } from './oauth.js';
import type { PendingChallenge } from './wallet.js';

/**
 * What the browser's session cookie holds (encrypted and authenticated by
 * @fastify/secure-session, http-only, SameSite=Lax): the sign-in in progress, the signed-in
 * account, the wallet challenge and the proven wallet, and the claim token.
 */
export interface SessionState {
  flow?: PendingFlow;
  account?: OAuthAccount & { provider: string };
  challenge?: PendingChallenge;
  wallet?: string;
  claimToken?: string;
}

export function sessionOf(request: FastifyRequest): SessionState {
  const s = request.session;
  const out: SessionState = {};
  for (const key of ['flow', 'account', 'challenge', 'wallet', 'claimToken'] as const) {
    const value = s.get(key);
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

export function setSession<K extends keyof SessionState>(
  request: FastifyRequest,
  key: K,
  value: SessionState[K],
): void {
  (request.session as unknown as { set(key: string, value: unknown): void }).set(key, value);
}

export function newClaimToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time comparison of two tokens. */
export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function sessionView(state: SessionState, entitlements: readonly Entitlement[]): TerminalSession {
  return {
    account: state.account
      ? { provider: state.account.provider, id: state.account.id, username: state.account.username }
      : null,
    wallet: state.wallet ?? null,
    claim_session: state.account && state.claimToken ? state.claimToken : null,
    entitlements: [...entitlements],
  };
}

/**
 * The 32-byte key that encrypts and signs session cookies: from a file (hex), or generated once
 * in the data directory (mode 0600), or per process in memory.
 */
export function loadSessionKey(file: string | undefined, dataDir: string): Buffer {
  const parse = (text: string, where: string) => {
    const hex = text.trim();
    if (!/^[0-9a-fA-F]{64}$/.test(hex))
      throw new ConfigError(`${where}: expected 64 hex digits (32 bytes); the content is not shown`);
    return Buffer.from(hex, 'hex');
  };
  if (file) {
    try {
      return parse(readFileSync(file, 'utf8'), `session key file ${file}`);
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      throw new ConfigError(
        `session key file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  if (dataDir === ':memory:') return randomBytes(32);
  const path = join(dataDir, 'session-key');
  if (existsSync(path)) return parse(readFileSync(path, 'utf8'), `session key file ${path}`);
  const key = randomBytes(32);
  writeFileSync(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}
