import * as oauth from 'oauth4webapi';
import type { TerminalConfig } from './config.js';

/**
 * The OAuth 2.0 authorization code flow with PKCE (S256) and state against the configured
 * provider (X by default), with oauth4webapi: the authorization URL, then the callback's
 * checks, the code exchange and the account lookup.
 */

export interface OAuthAccount {
  readonly id: string;
  readonly username: string | null;
}

/** What the browser's session keeps between authorize and callback. */
export interface PendingFlow {
  readonly state: string;
  readonly verifier: string;
  readonly wallet: string;
  readonly redirect: string;
  /** Unix seconds. */
  readonly startedAt: number;
}

/** Why a callback was refused; the page shown names it in plain words. */
export class OAuthFlowError extends Error {
  override readonly name = 'OAuthFlowError';
  constructor(
    readonly reason:
      | 'denied'
      | 'no_flow'
      | 'bad_state'
      | 'expired'
      | 'replayed'
      | 'code_refused'
      | 'provider_error',
    message: string,
    /** The library's error code behind it (for the log, never shown to the user). */
    readonly detail?: string,
  ) {
    super(message);
  }
}

const codeOf = (error: unknown) => String((error as { code?: unknown }).code ?? (error as Error).name);

/** A flow older than this is refused at the callback. */
export const FLOW_TTL_S = 600;

export class OAuthClient {
  readonly #as: oauth.AuthorizationServer;
  readonly #client: oauth.Client;
  readonly #auth: oauth.ClientAuth;
  readonly #options: { [oauth.allowInsecureRequests]?: boolean; signal: () => AbortSignal };

  constructor(
    private readonly config: TerminalConfig,
    readonly redirectUri: string,
  ) {
    this.#as = {
      issuer: config.oauthIssuer,
      authorization_endpoint: config.oauthAuthorizationUrl,
      token_endpoint: config.oauthTokenUrl,
      userinfo_endpoint: config.oauthUserinfoUrl,
      code_challenge_methods_supported: ['S256'],
    };
    this.#client = { client_id: config.oauthClientId ?? '' };
    // Without a secret (sign-in not configured: `configured` is false) no client auth is built.
    const secret = config.oauthClientSecret;
    this.#auth =
      config.oauthClientAuth === 'none' || !secret
        ? oauth.None()
        : config.oauthClientAuth === 'post'
          ? oauth.ClientSecretPost(secret)
          : oauth.ClientSecretBasic(secret);
    this.#options = {
      signal: () => AbortSignal.timeout(10_000),
      ...(config.oauthAllowHttp ? { [oauth.allowInsecureRequests]: true } : {}),
    };
  }

  get configured(): boolean {
    return (
      Boolean(this.config.oauthClientId) &&
      (this.config.oauthClientAuth === 'none' || Boolean(this.config.oauthClientSecret))
    );
  }

  /** A new flow: the provider URL to send the browser to, and what the session must keep. */
  async begin(): Promise<{ url: string; state: string; verifier: string }> {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(this.config.oauthAuthorizationUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.#client.client_id);
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('scope', this.config.oauthScopes);
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return { url: url.href, state, verifier };
  }

  /**
   * The callback: checks the response against the flow's state, exchanges the code with the
   * flow's PKCE verifier and asks the provider who signed in.
   * @throws OAuthFlowError
   */
  async finish(callbackParams: URLSearchParams, flow: PendingFlow): Promise<OAuthAccount> {
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(this.#as, this.#client, callbackParams, flow.state);
    } catch (error) {
      if (error instanceof oauth.AuthorizationResponseError) {
        if (error.error === 'access_denied') {
          throw new OAuthFlowError(
            'denied',
            'You declined the sign-in at the provider, so nothing was connected.',
          );
        }
        throw new OAuthFlowError('provider_error', `The provider ended the sign-in with "${error.error}".`);
      }
      throw new OAuthFlowError(
        'bad_state',
        'The sign-in answer does not belong to the sign-in this browser started.',
      );
    }
    let token: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        this.#as,
        this.#client,
        this.#auth,
        params,
        this.redirectUri,
        flow.verifier,
        this.#options,
      );
      token = await oauth.processAuthorizationCodeResponse(this.#as, this.#client, response);
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError) {
        throw new OAuthFlowError(
          'code_refused',
          'The provider refused the sign-in code (expired, already used, or not issued for this sign-in).',
          error.error,
        );
      }
      throw new OAuthFlowError('provider_error', 'The provider could not finish the sign-in.', codeOf(error));
    }
    let info: Record<string, unknown>;
    try {
      const response = await oauth.protectedResourceRequest(
        token.access_token,
        'GET',
        new URL(this.config.oauthUserinfoUrl),
        new Headers({ accept: 'application/json' }),
        null,
        this.#options,
      );
      if (!response.ok) throw new Error(String(response.status));
      info = (await response.json()) as Record<string, unknown>;
    } catch (error) {
      throw new OAuthFlowError(
        'provider_error',
        'The provider did not say which account signed in.',
        codeOf(error),
      );
    }
    return accountOf(info);
  }
}

/** The account in a user-info answer: X's `{data: {id, username}}` or OpenID's `{sub, preferred_username}`. */
export function accountOf(info: Record<string, unknown>): OAuthAccount {
  const data = (typeof info.data === 'object' && info.data !== null ? info.data : info) as Record<
    string,
    unknown
  >;
  const id = data.id ?? data.sub;
  const username = data.username ?? data.preferred_username ?? null;
  if (
    (typeof id !== 'string' && typeof id !== 'number') ||
    String(id).length === 0 ||
    String(id).length > 128
  ) {
    throw new OAuthFlowError('provider_error', 'The provider did not say which account signed in.');
  }
  return { id: String(id), username: typeof username === 'string' ? username.slice(0, 128) : null };
}
