import {
  assertBodyPubkey,
  EXACTLY_ONCE_OPERATIONS,
  type OperationId,
  REQUEST_REPLAY_WINDOW_MS,
  ROUTES,
  type RouteBody,
  type RouteDefinition,
  type RouteParams,
  type RouteQuery,
  type RouteReply,
  replayedVerdict,
  routesOf,
  verifySignedRequest,
} from '@tensormine/protocol';
import { type RateLimiter, registerRoute } from '@tensormine/service-kit';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { ValidatorContext } from '../context.js';
import type { StorageTx } from '../store/types.js';
import { checkAdminToken } from './admin-auth.js';
import { verdictError } from './errors.js';

/** What a handler receives: the validated request parts and, for signed routes, the signer. */
export interface HandlerRequest<Id extends OperationId> {
  readonly body: RouteBody<Id>;
  readonly query: RouteQuery<Id>;
  readonly params: RouteParams<Id>;
  /** The verified public key (hex) of a signed route's signer. */
  readonly signer: string | undefined;
  /**
   * Signed routes whose handler is listed in {@link NONCE_CLAIMED_BY_HANDLER}: records the
   * request's (public key, nonce) pair in `tx`, the transaction of the request's effect, and
   * throws `request_replayed` when it is already recorded (the transaction then rolls back).
   */
  readonly claimNonce: (tx: StorageTx) => Promise<void>;
  readonly ip: string;
  readonly raw: FastifyRequest;
  readonly reply: FastifyReply;
}

export type Handler<Id extends OperationId> = (
  request: HandlerRequest<Id>,
  ctx: ValidatorContext,
) => Promise<RouteReply<Id>>;

export type Handlers = { readonly [Id in OperationId]?: Handler<Id> };

export interface RegisterOptions {
  readonly adminToken: string;
  readonly keyLimiter: RateLimiter;
  /** A preHandler hook of some routes only (e.g. the economy's stored-result replay). */
  readonly preHandlers?: { readonly [Id in OperationId]?: preHandlerAsyncHookHandler };
  /** Routes of these protocol versions are not registered. */
  readonly disabledVersions?: readonly RouteDefinition['version'][];
}

/**
 * Signed routes whose handler records the request nonce itself, in the transaction of its
 * effect (`claimNonce(tx)`). For every other signed route the router records it in its own
 * transaction after every router check passed and before the handler runs.
 */
const NONCE_CLAIMED_BY_HANDLER: ReadonlySet<OperationId> = new Set<OperationId>([
  'registerDevice',
  // The economy claims it with its effect and its stored result (services/economy/requests.ts).
  ...(EXACTLY_ONCE_OPERATIONS as ReadonlySet<OperationId>),
]);

/**
 * Records a signed request's (public key, nonce) pair in storage until its window closes
 * (docs/validator.md, "Replay protection"); `request_replayed` when it is already there.
 */
async function claimRequestNonce(
  tx: StorageTx,
  signed: { readonly publicKey: string; readonly nonce: string; readonly timestamp: number },
  now: number,
): Promise<void> {
  const expiresAt = signed.timestamp + REQUEST_REPLAY_WINDOW_MS;
  // Forget pairs one window after they expired: a clock stepping back by less than that
  // cannot readmit a forgotten pair.
  const fresh = await tx.requestNonces.claim(
    signed.publicKey,
    signed.nonce,
    expiresAt,
    now - REQUEST_REPLAY_WINDOW_MS,
  );
  if (!fresh) throw verdictError(replayedVerdict(signed.publicKey, signed.nonce));
}

/** The public key a request acts for, to rate-limit per key. */
function actingKey(route: RouteDefinition, body: unknown, signer: string | undefined): string | undefined {
  if (signer) return signer;
  const b = body as { proof?: { miner_pubkey?: unknown }; block?: { miner_pubkey?: unknown } } | undefined;
  const key = b?.proof?.miner_pubkey ?? b?.block?.miner_pubkey;
  return route.method === 'POST' && typeof key === 'string' ? key : undefined;
}

/**
 * Registers every validator route of the protocol's ROUTES table that has a handler (through the
 * service kit's `registerRoute`: schemas, OpenAPI), wrapped in the validator's own checks: the
 * admin token, signed requests and their nonces, the per-key rate limit.
 */
export function registerRoutes(
  app: FastifyInstance,
  ctx: ValidatorContext,
  handlers: Handlers,
  options: RegisterOptions,
): OperationId[] {
  const registered: OperationId[] = [];
  for (const route of routesOf('validator')) {
    const id = route.operationId as OperationId;
    const handler = handlers[id] as Handler<OperationId> | undefined;
    if (!handler || options.disabledVersions?.includes(route.version)) continue;
    registered.push(id);
    const preHandler = options.preHandlers?.[id];
    const notSigned = async () => {
      throw new Error(`${id} is not a signed route: there is no nonce to claim`);
    };
    // An unsigned GET has no signer, no acting key to rate-limit and no nonce: its handler is
    // called directly (the reads that dashboards and miners poll; no extra promise).
    const direct = (request: FastifyRequest, reply: FastifyReply) =>
      handler(
        {
          body: request.body as never,
          query: request.query as never,
          params: request.params as never,
          signer: undefined,
          claimNonce: notSigned,
          ip: request.ip,
          raw: request,
          reply,
        },
        ctx,
      );
    const full = async (request: FastifyRequest, reply: FastifyReply) => {
      let signer: string | undefined;
      let signed: { publicKey: string; nonce: string; timestamp: number } | undefined;
      let claimed = false;
      // Admin routes: the token is checked in the onRequest hook (admin-auth.ts), before
      // the body is parsed or validated.
      if (route.auth === 'signed') {
        const verdict = verifySignedRequest({
          method: request.method,
          path: request.url,
          body: request.rawBody ?? new Uint8Array(0),
          headers: request.headers,
          now: ctx.now(),
        });
        if (!verdict.ok) throw verdictError(verdict);
        signer = verdict.publicKey;
        signed = verdict;
        const bodyKey = (request.body as { pubkey?: unknown } | undefined)?.pubkey;
        if (bodyKey !== undefined) {
          const match = assertBodyPubkey(signer, bodyKey);
          if (!match.ok) throw verdictError(match);
        }
      }
      const key = actingKey(route, request.body, signer);
      if (key) options.keyLimiter.take(key, 'public key');
      if (signed && !NONCE_CLAIMED_BY_HANDLER.has(id)) {
        const pair = signed;
        await ctx.storage.transaction((tx) => claimRequestNonce(tx, pair, ctx.now()));
        claimed = true;
      }
      const result = await handler(
        {
          body: request.body as never,
          query: request.query as never,
          params: request.params as never,
          signer,
          claimNonce: async (tx) => {
            if (!signed) return notSigned();
            if (claimed) return; // the router already recorded it (a route not in the set)
            await claimRequestNonce(tx, signed, ctx.now());
            claimed = true;
          },
          ip: request.ip,
          raw: request,
          reply,
        },
        ctx,
      );
      if (signed && !claimed) {
        throw new Error(`${id} answered without recording its request nonce (claimNonce in its transaction)`);
      }
      return result;
    };
    registerRoute(app, route, route.auth !== 'signed' && route.method === 'GET' ? direct : full, {
      // The admin token is checked before anything else of the request is looked at: an
      // unauthenticated caller gets 401, never schema details of the body (onRequest runs
      // before the body is parsed and validated).
      ...(route.auth === 'admin'
        ? {
            onRequest: async (request: FastifyRequest) => {
              checkAdminToken(request, options.adminToken);
            },
          }
        : {}),
      ...(preHandler ? { preHandler } : {}),
    });
  }
  return registered;
}

export { ROUTES };
