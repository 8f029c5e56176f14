import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, Signer } from '@tensormine/client';
import { generateKeyPair, type KeyPair, sign, toHex } from '@tensormine/protocol';
import { type CreateValidatorOptions, createValidator, type Validator } from '@tensormine/validator';
import { Events, OAuth2Server } from 'oauth2-mock-server';
import { freePort } from '../../../test-support/ports.ts';
import { createTerminal, pubkeyToWallet, type Terminal } from '../src/index.js';

export { freePort };

/**
 * What the terminal tests run against, all real and in process: a validator with a funded
 * treasury, an OAuth 2 authorization server (oauth2-mock-server) behind a consent page, and the
 * terminal backend. The authorization server is made strict like a real one: a code is good
 * once, a code issued with a PKCE challenge needs its verifier, and the account that signs in is
 * the one typed on the consent page.
 */

export const WELCOME = 'PTM:100,SOL:0.05';

export interface Wallet {
  readonly key: KeyPair;
  readonly hex: string;
  readonly address: string;
}

export function newWallet(): Wallet {
  const key = generateKeyPair();
  return { key, hex: toHex(key.publicKey), address: pubkeyToWallet(toHex(key.publicKey)) };
}

type Genesis = NonNullable<CreateValidatorOptions['genesis']>;

export async function startValidator(allocations: { wallet: Wallet; token: string; amount: string }[]) {
  const genesis: Genesis = {
    reserve: '1000000',
    pools: [
      { base: 'PTM', quote: 'USDC', base_reserve: '1000000', quote_reserve: '50000', fee_bps: 30 },
      { base: 'PTM', quote: 'SOL', base_reserve: '1000000', quote_reserve: '500', fee_bps: 30 },
    ],
    allocations: allocations.map((a) => ({ pubkey: a.wallet.hex, token: a.token, amount: a.amount })),
  };
  const validator = await createValidator({ dataDir: ':memory:', genesis });
  const url = await validator.listen({ host: '127.0.0.1', port: 0 });
  return { validator, url };
}

export interface AuthServer {
  readonly server: OAuth2Server;
  readonly consent: Server;
  readonly consentUrl: string;
  readonly issuer: string;
  /** Token requests the server refused (reused code, missing or wrong verifier). */
  readonly refused: string[];
  close(): Promise<void>;
}

export async function startAuthServer(): Promise<AuthServer> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const issuer = server.issuer.url as string;
  const accountOfCode = new Map<string, string>();
  const accountOfToken = new Map<string, string>();
  const challenged = new Set<string>();
  const usedCodes = new Set<string>();
  const refused: string[] = [];

  server.service.on(
    Events.BeforeAuthorizeRedirect,
    (redirect: { url: URL }, req: { query?: Record<string, unknown> }) => {
      const code = redirect.url.searchParams.get('code');
      const login = req.query?.login_hint;
      if (code && typeof login === 'string') accountOfCode.set(code, login);
      if (code && typeof req.query?.code_challenge === 'string') challenged.add(code);
    },
  );
  server.service.on(
    Events.BeforeResponse,
    (
      response: { statusCode: number; body: Record<string, unknown> | '' },
      req: { body: Record<string, unknown> },
    ) => {
      const code = req.body.code;
      if (typeof code !== 'string') return;
      const refuse = (why: string) => {
        refused.push(why);
        response.statusCode = 400;
        response.body = { error: 'invalid_grant', error_description: why };
      };
      if (usedCodes.has(code)) return refuse('code already used');
      usedCodes.add(code);
      if (!accountOfCode.has(code)) return refuse('unknown code');
      if (challenged.has(code) && typeof req.body.code_verifier !== 'string')
        return refuse('code_verifier missing');
      const body = response.body as Record<string, unknown>;
      accountOfToken.set(String(body.access_token), accountOfCode.get(code) as string);
    },
  );
  server.service.on(
    Events.BeforeUserinfo,
    (
      response: { statusCode: number; body: Record<string, unknown> | '' },
      req: { headers: Record<string, unknown> },
    ) => {
      const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      const account = accountOfToken.get(token);
      if (!account) {
        response.statusCode = 401;
        response.body = { error: 'invalid_token' };
        return;
      }
      // The X shape: { data: { id, username } }.
      response.body = { data: { id: `id-${account}`, username: account, name: account } };
    },
  );

  // The provider's consent page: sign in as an account, then Allow or Deny.
  const consent = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://consent.test');
    const params = url.searchParams;
    if (url.pathname !== '/consent' || !URL.canParse(params.get('redirect_uri') ?? '')) {
      res.writeHead(404).end();
      return;
    }
    const redirectUri = params.get('redirect_uri') ?? '';
    const deny = new URL(redirectUri);
    deny.searchParams.set('error', 'access_denied');
    deny.searchParams.set('error_description', 'The user denied the request');
    deny.searchParams.set('state', params.get('state') ?? '');
    const hidden = [...params]
      .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
      .join('');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Authorize app</title>
<style>body{font-family:system-ui;background:#000;color:#e7e9ea;display:grid;place-items:center;min-height:100vh;margin:0}
form{background:#16181c;padding:2rem;border-radius:16px;width:340px}button,a{display:block;width:100%;margin-top:.6rem;padding:.6rem;border-radius:999px;text-align:center;font-weight:700;box-sizing:border-box}
button{background:#1d9bf0;color:#fff;border:0}a{color:#e7e9ea;border:1px solid #536471;text-decoration:none}input[type=text]{width:100%;padding:.5rem;box-sizing:border-box}</style>
</head><body><form method="get" action="${esc(issuer)}/authorize">
<h1>tensormine terminal wants to access your account</h1>
<p>It will read your profile (scopes: ${esc(params.get('scope') ?? '')}).</p>
<label>Signed in as <input type="text" name="login_hint" id="login" value="alice"></label>
${hidden}
<button type="submit" id="allow">Authorize app</button>
<a id="deny" href="${esc(deny.href)}">Cancel</a>
</form></body></html>`);
  });
  await new Promise<void>((r) => consent.listen(0, '127.0.0.1', () => r()));
  const consentUrl = `http://127.0.0.1:${(consent.address() as AddressInfo).port}/consent`;
  return {
    server,
    consent,
    consentUrl,
    issuer,
    refused,
    async close() {
      consent.closeAllConnections();
      await new Promise((r) => consent.close(r));
      await server.stop();
    },
  };
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface Env {
  readonly validatorUrl: string;
  readonly validator: Validator;
  readonly auth: AuthServer;
  readonly terminal: Terminal;
  readonly base: string;
  readonly treasury: Wallet;
  readonly dataDir: string;
  close(): Promise<void>;
}

export async function startEnv(
  options: { fundTreasury?: boolean; users?: { wallet: Wallet; token: string; amount: string }[] } = {},
): Promise<Env> {
  const treasury = newWallet();
  const funds =
    options.fundTreasury === false
      ? []
      : [
          { wallet: treasury, token: 'PTM', amount: '1000' },
          { wallet: treasury, token: 'SOL', amount: '1' },
        ];
  const { validator, url: validatorUrl } = await startValidator([...funds, ...(options.users ?? [])]);
  const auth = await startAuthServer();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'tm-terminal-'));
  const terminal = await createTerminal({
    dataDir,
    port,
    publicUrl: base,
    validatorUrl,
    // No characters that form-encoding escapes: the mock server does not decode Basic credentials.
    oauthClientId: 'terminalclient',
    oauthClientSecret: 'terminal-secret',
    oauthIssuer: auth.issuer,
    oauthAuthorizationUrl: auth.consentUrl,
    oauthTokenUrl: `${auth.issuer}/token`,
    oauthUserinfoUrl: `${auth.issuer}/userinfo`,
    oauthAllowHttp: true,
    rewardWalletPrivateKey: toHex(treasury.key.secretKey),
    welcomeTokens: WELCOME,
    rateLimitPerSecond: 1000,
    rateLimitBurst: 1000,
  });
  await terminal.listen({ host: '127.0.0.1', port });
  return {
    validatorUrl,
    validator,
    auth,
    terminal,
    base,
    treasury,
    dataDir,
    async close() {
      await terminal.close();
      await auth.close();
      await validator.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The available balance of a wallet in a token, as the validator reports it. */
export async function balance(validatorUrl: string, wallet: Wallet, token: string): Promise<string> {
  const client = createClient({ url: validatorUrl, healthCheckIntervalMs: 0 });
  try {
    const { balances } = await client.economy.balances(wallet.hex);
    return balances.find((b) => b.token === token)?.available ?? '0';
  } finally {
    await client.close();
  }
}

/** Sends a transfer from `from` (signed by it) through the SDK; returns the transfer id. */
export async function pay(
  validatorUrl: string,
  from: Wallet,
  to: string,
  token: string,
  amount: string,
): Promise<string> {
  const client = createClient({
    url: validatorUrl,
    healthCheckIntervalMs: 0,
    signer: Signer.fromSecretKey(from.key.secretKey),
  });
  try {
    return (await client.economy.transfer({ to, token, amount })).transfer_id;
  } finally {
    await client.close();
  }
}

/** A cookie jar for fetch: the terminal's session cookie. */
export class Browserless {
  cookie = '';
  constructor(readonly base: string) {}

  async call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown>; location: string | undefined }> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const set = response.headers.getSetCookie().find((c) => c.startsWith('tm_session='));
    if (set) this.cookie = set.split(';')[0] as string;
    const text = await response.text();
    return {
      status: response.status,
      json: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      location: response.headers.get('location') ?? undefined,
    };
  }

  /** Proves `wallet` in this session (challenge, ed25519 signature, verify). */
  async proveWallet(wallet: Wallet): Promise<void> {
    const challenge = await this.call('POST', '/api/wallet/challenge', { wallet: wallet.address });
    const signature = sign(new TextEncoder().encode(String(challenge.json.message)), wallet.key.secretKey);
    const verified = await this.call('POST', '/api/wallet/verify', {
      wallet: wallet.address,
      signature: toHex(signature),
    });
    if (verified.status !== 200) throw new Error(`wallet proof failed: ${JSON.stringify(verified.json)}`);
  }
}
