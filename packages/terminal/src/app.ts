import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import secureSession from '@fastify/secure-session';
import fastifyStatic from '@fastify/static';
import {
  bpsToFraction,
  LOCK_TERMS,
  type PurchaseRequest,
  type ServiceHealth,
  type StakingOptions,
  TOKEN_SYMBOLS,
  VAULT_MAX_HORIZON_S,
  type VaultOptions,
} from '@tensormine/protocol';
import {
  ApiError,
  createServiceApp,
  errorBody,
  type RouteHandler,
  registerServiceRoutes,
  type ServiceCreateOptions,
  type ServiceRouteHandlers,
  type SettingSource,
} from '@tensormine/service-kit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClaimService } from './claims.js';
import {
  parseWelcomeTokens,
  resolveTerminalConfig,
  type TerminalConfig,
  type TerminalSettingName,
} from './config.js';
import { asLedgerError, Ledger, loadTreasuryKey } from './ledger.js';
import { FLOW_TTL_S, OAuthClient, OAuthFlowError } from './oauth.js';
import { describeWelcome, Offer, type WelcomeStatus } from './offer.js';
import { FLOW_ERROR_TITLES, resultPage } from './pages.js';
import { type Product, PurchaseService } from './purchases.js';
import { loadSessionKey, newClaimToken, sameToken, sessionOf, sessionView, setSession } from './session.js';
import { TerminalStore } from './store.js';
import { checkChallenge, newChallenge, pubkeyToWallet, walletToPubkey } from './wallet.js';

export const TERMINAL_VERSION = '0.1.0';

/** The reference front end shipped with the package (wallet proof, sign-in, claim, purchases). */
export const BUILTIN_PUBLIC_DIR = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'public');

export interface CreateTerminalOptions
  extends Partial<Record<TerminalSettingName, unknown>>,
    ServiceCreateOptions {}

export interface Terminal {
  readonly app: FastifyInstance;
  readonly config: TerminalConfig;
  readonly sources: Readonly<Record<TerminalSettingName, SettingSource>>;
  readonly store: TerminalStore;
  /** The treasury's public key (hex), when a treasury key is configured. */
  readonly treasury: string | undefined;
  /** Finishes the claims left pending by a crash or an unreachable validator. */
  resumePendingClaims(): Promise<void>;
  /** Whether the treasury holds the whole welcome package now, and what it lacks. */
  welcomeStatus(): Promise<WelcomeStatus>;
  /** The lines the bin prints at start about the welcome package (a warning when it cannot be paid). */
  describeWelcome(): Promise<string[]>;
  listen(options?: { host?: string; port?: number }): Promise<string>;
  close(): Promise<void>;
}

const hashState = (state: string) => createHash('sha256').update(state).digest('hex');

/** Builds the terminal backend; not listening yet (`listen()`), or use `app.inject()`. */
export async function createTerminal(options: CreateTerminalOptions = {}): Promise<Terminal> {
  const { env, configFile, now = Date.now, logger, ...flags } = options;
  const { config, sources } = resolveTerminalConfig({
    flags,
    ...(env ? { env } : {}),
    ...(configFile ? { configFile } : {}),
  });
  const welcome = parseWelcomeTokens(config.welcomeTokens);
  const inMemory = config.dataDir === ':memory:';
  if (!inMemory) mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const sessionKey = loadSessionKey(config.sessionKeyFile, config.dataDir);
  const treasuryKey = await loadTreasuryKey(config.rewardWalletPrivateKey, config.rewardWalletPrivateKeyFile);
  const store = new TerminalStore(inMemory ? ':memory:' : join(config.dataDir, 'terminal.db'));
  const ledger = new Ledger(config.validatorUrl, treasuryKey, now);
  treasuryKey?.fill(0);
  const claims = new ClaimService(store, ledger, welcome, config.oauthProvider, now);
  const purchases = new PurchaseService(store, ledger, config, now);
  const offer = new Offer(config, welcome, ledger, purchases, now);
  const callbackUrl = config.oauthCallbackUrl ?? `${config.publicUrl}/api/x-auth/callback`;
  const oauthClient = new OAuthClient(config, callbackUrl);
  const frontend = config.frontendUrl ?? config.publicUrl;
  const startedAt = now();
  const nowS = () => Math.floor(now() / 1000);

  const app = createServiceApp({
    service: 'terminal',
    logLevel: config.logLevel,
    rateLimit: { burst: config.rateLimitBurst, perSecond: config.rateLimitPerSecond },
    now,
    logger,
    metrics: { version: TERMINAL_VERSION, ...config },
    headers: {
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
      // The reference front end and the result pages: own scripts only, no framing.
      'content-security-policy':
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    },
  });
  const countClaim = app.metrics.outcomes(
    'tensormine_terminal_claims_total',
    'Welcome-bonus claims (POST /api/x-auth/claim), by result: ok, or the error code of the refusal',
  );
  const countPurchase = app.metrics.outcomes(
    'tensormine_terminal_purchases_total',
    'Purchases, by product and result: ok, or the error code of the refusal',
    ['product'],
  );
  await app.register(secureSession, {
    key: sessionKey,
    cookieName: 'tm_session',
    expiry: config.sessionTtlS,
    cookie: {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: config.publicUrl.startsWith('https:'),
      maxAge: config.sessionTtlS,
    },
  });

  /** An error page for a browser navigation, a JSON error for anything else. */
  const flowFailure = (
    request: FastifyRequest,
    reply: FastifyReply,
    reason: string,
    message: string,
    status: number,
    detail?: string,
  ) => {
    request.log.info({ reason, detail }, 'sign-in refused');
    if ((request.headers.accept ?? '').includes('text/html')) {
      return reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(
          resultPage({
            title: FLOW_ERROR_TITLES[reason] ?? 'Sign-in failed',
            message,
            reason,
            backUrl: `${frontend}/`,
          }),
        );
    }
    const code =
      status === 401 ? 'session_required' : status === 503 ? 'service_unavailable' : 'oauth_failed';
    return reply.code(status).send(errorBody(code, message, { reason }));
  };

  const requireWallet = (request: FastifyRequest, wallet: string) => {
    const state = sessionOf(request);
    if (!state.wallet) {
      throw new ApiError(
        'session_required',
        'prove your wallet first (POST /api/wallet/challenge, then /api/wallet/verify)',
      );
    }
    if (state.wallet !== wallet) {
      throw new ApiError('wallet_mismatch', 'the wallet named is not the one this browser proved');
    }
    return state;
  };

  const pubkeyParam = (wallet: string) => {
    const pubkey = walletToPubkey(wallet);
    if (!pubkey) throw new ApiError('validation_failed', 'params/wallet: not a 32-byte wallet address');
    return pubkey;
  };

  /** A read from the validator through the SDK: its error passed on as it is, or upstream_unavailable. */
  const upstream = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      const e = asLedgerError(error);
      if (e.status !== undefined && e.status < 500 && e.code !== 'unexpected_response') {
        throw new ApiError(e.code as never, `the validator says: ${e.message}`);
      }
      throw new ApiError('upstream_unavailable', `the validator could not answer (${e.code})`);
    }
  };

  const purchase =
    (product: Product): RouteHandler<'premiumPurchase' | 'noAdsPurchase'> =>
    async (request) => {
      const body: PurchaseRequest = request.body;
      requireWallet(request, body.wallet);
      return countPurchase({ product }, () =>
        purchases.purchase(product, body.wallet, body.currency, body.transfer_id),
      );
    };

  const handlers: ServiceRouteHandlers<'terminal'> = {
    getTerminalHealth: async (): Promise<ServiceHealth> => {
      const validatorUp = await ledger.client.node
        .health({ timeoutMs: 2000, retries: 0 })
        .then(() => true)
        .catch(() => false);
      return {
        status: validatorUp ? 'ok' : 'degraded',
        service: 'tensormine-terminal',
        version: TERMINAL_VERSION,
        uptime_s: Math.max(0, Math.floor((now() - startedAt) / 1000)),
      };
    },

    walletChallenge: async (request) => {
      const { wallet } = request.body;
      if (!walletToPubkey(wallet))
        throw new ApiError('validation_failed', 'body/wallet: not a 32-byte wallet address');
      const challenge = newChallenge(wallet, config.publicUrl, now());
      setSession(request, 'challenge', challenge);
      return { wallet, message: challenge.message, expires_at: challenge.expiresAt };
    },

    walletVerify: async (request) => {
      const { wallet, signature } = request.body;
      const state = sessionOf(request);
      const check = checkChallenge(state.challenge, wallet, signature, now());
      // A challenge is good for one try, right or wrong.
      setSession(request, 'challenge', undefined);
      if (check !== 'ok') {
        const why = {
          missing: 'no challenge is pending in this browser: ask for one with POST /api/wallet/challenge',
          expired: 'the challenge expired: ask for a new one',
          wrong_wallet: 'the challenge was issued for another wallet',
          bad_signature: 'the signature does not verify with this wallet key',
        }[check];
        throw new ApiError('wallet_proof_invalid', why);
      }
      if (state.wallet !== wallet) setSession(request, 'wallet', wallet);
      return sessionView({ ...state, wallet }, store.entitlements(wallet, nowS()));
    },

    getTerminalSession: async (request) => {
      const state = sessionOf(request);
      return sessionView(state, state.wallet ? store.entitlements(state.wallet, nowS()) : []);
    },

    xAuthAuthorize: async (request, reply) => {
      const { query } = request;
      if (!oauthClient.configured) {
        return flowFailure(
          request,
          reply,
          'not_configured',
          'This terminal has no OAuth client configured (X_CLIENT_ID).',
          503,
        );
      }
      const state = sessionOf(request);
      if (state.wallet !== query.wallet) {
        return flowFailure(
          request,
          reply,
          'wallet_required',
          'Connect and prove this wallet in the terminal before signing in: the welcome tokens go to a wallet you own.',
          401,
        );
      }
      const flow = await oauthClient.begin();
      store.startFlow(hashState(flow.state), nowS());
      setSession(request, 'flow', {
        state: flow.state,
        verifier: flow.verifier,
        wallet: query.wallet,
        redirect: (query.redirect ?? '/').split('#')[0] as string,
        startedAt: nowS(),
      });
      return reply.redirect(flow.url, 302);
    },

    xAuthCallback: async (request, reply) => {
      const { query } = request;
      const state = sessionOf(request);
      const flow = state.flow;
      if (!flow) {
        return flowFailure(
          request,
          reply,
          'no_flow',
          'This browser has no sign-in in progress (it was finished, or started in another browser). Start again from the terminal.',
          400,
        );
      }
      // Whatever happens next, this flow is over: a second callback with it is refused.
      setSession(request, 'flow', undefined);
      if (!sameToken(query.state, flow.state)) {
        return flowFailure(
          request,
          reply,
          'bad_state',
          'The answer does not belong to the sign-in this browser started.',
          400,
        );
      }
      if (nowS() - flow.startedAt > FLOW_TTL_S) {
        return flowFailure(
          request,
          reply,
          'expired',
          'The sign-in took too long. Start again from the terminal.',
          400,
        );
      }
      if (!store.consumeFlow(hashState(flow.state), nowS())) {
        return flowFailure(
          request,
          reply,
          'replayed',
          'This sign-in answer was already used. Start again from the terminal.',
          400,
        );
      }
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (typeof v === 'string') params.set(k, v);
      try {
        const account = await oauthClient.finish(params, flow);
        store.upsertAccount(config.oauthProvider, account.id, account.username, nowS());
        setSession(request, 'account', { ...account, provider: config.oauthProvider });
        setSession(request, 'claimToken', newClaimToken());
      } catch (error) {
        if (error instanceof OAuthFlowError) {
          return flowFailure(request, reply, error.reason, error.message, 400, error.detail);
        }
        throw error;
      }
      return reply.redirect(`${frontend}${flow.redirect}`, 302);
    },

    xAuthClaim: async (request) => {
      const { body } = request;
      const state = sessionOf(request);
      if (!state.account || !sameToken(body.session, state.claimToken)) {
        throw new ApiError('session_required', 'sign in with your social account in this browser first');
      }
      requireWallet(request, body.wallet);
      const account = state.account;
      return countClaim({}, () => claims.claim(account.id, body.wallet));
    },

    getTerminalOffer: async () => offer.view(),

    terminalTransfer: async (request) => {
      const state = sessionOf(request);
      if (!state.wallet) {
        throw new ApiError(
          'session_required',
          'prove your wallet first (POST /api/wallet/challenge, then /api/wallet/verify)',
        );
      }
      return purchases.payTreasury(state.wallet, request.body);
    },

    getTerminalBalances: async (request) =>
      upstream(() => ledger.client.economy.balances(pubkeyParam(request.params.wallet))),

    premiumPurchase: purchase('premium'),
    noAdsPurchase: purchase('no_ads'),

    getTerminalStakingOptions: async (): Promise<StakingOptions> => ({
      token: 'PTM',
      options: Object.values(LOCK_TERMS).map((t) => ({
        lock_period_days: t.days,
        label: t.days === 0 ? 'Flexible' : `${t.days} days`,
        yield_rate: bpsToFraction(t.yieldBps),
        early_unstake_penalty: bpsToFraction(t.penaltyBps),
      })),
    }),
    getTerminalStakes: async (request) =>
      upstream(() => ledger.client.economy.stakes(pubkeyParam(request.params.wallet))),
    getTerminalSwapPools: async () => upstream(() => ledger.client.economy.swapPools()),
    getTerminalSwapQuote: async (request) => upstream(() => ledger.client.economy.swapQuote(request.query)),
    getTerminalVaultOptions: async (): Promise<VaultOptions> => ({
      tokens: [...TOKEN_SYMBOLS],
      min_lock_s: 1,
      max_lock_s: VAULT_MAX_HORIZON_S,
    }),
    getTerminalVaults: async (request) =>
      upstream(() => ledger.client.economy.vaults(pubkeyParam(request.params.wallet))),
  };

  registerServiceRoutes(app, 'terminal', handlers);
  await app.register(fastifyStatic, { root: BUILTIN_PUBLIC_DIR, index: ['index.html'], dotfiles: 'deny' });

  const resumePendingClaims = () => claims.resumePending((message) => app.log.info(message));

  let closed = false;
  return {
    app,
    config,
    sources,
    store,
    treasury: ledger.treasury,
    resumePendingClaims,
    welcomeStatus: () => offer.welcomeStatus(),
    describeWelcome: async () =>
      describeWelcome(await offer.welcomeStatus(), ledger.treasury && pubkeyToWallet(ledger.treasury)),
    listen: (o = {}) => app.listen({ host: o.host ?? config.host, port: o.port ?? config.port }),
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await ledger.close();
      store.close();
    },
  };
}
