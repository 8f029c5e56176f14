import { readFileSync, writeFileSync } from 'node:fs';
import {
  type CallbackAddressPolicy,
  type CallbackSender,
  callbackAddress,
  callbackModeFor,
  DEVICE_CALLBACK_RELAY_HEADER,
  DeviceCallbacks,
  ERROR_CODES,
  type ErrorCode,
  followHexEvent,
  fromHex,
  generateKeyPair,
  type HexChallenge,
  httpCallbackSender,
  type KeyPair,
  keyPairFromSecret,
  type SseHub,
  throughUnseenProxy,
  toHex,
} from '@tensormine/protocol';
import { errorBody, nodeHttp } from '@tensormine/service-kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The signed-request headers forwarded as they came (the board signed the exact body and path). */
const SIGNED_HEADERS = ['x-tm-pubkey', 'x-tm-timestamp', 'x-tm-nonce', 'x-tm-signature'] as const;
const PUBKEY = /^[0-9a-f]{64}$/;

export interface DeviceRelayOptions {
  /** The validator in use (the SDK client's active endpoint). */
  readonly upstream: () => string;
  /** The event stream the proxy re-serves: its blocks and retargets make work stale. */
  readonly hub: SseHub;
  /** The key that signs this proxy's callbacks (default: a new one per process). */
  readonly keyPair?: KeyPair;
  /** Which board addresses are called back (default private: a LAN). */
  readonly policy?: CallbackAddressPolicy;
  /** Boards with a callback port one address may register through the proxy (default 16). */
  readonly perAddress?: number;
  /** A callback's time limit, connection included (default 1000 ms). */
  readonly timeoutMs?: number;
  /** The sender (tests inject one). */
  readonly send?: CallbackSender;
  /**
   * The proxy's budget of validator requests: a registration is forwarded only when this
   * answers undefined, otherwise its refusal (status, body, headers) is the answer.
   */
  readonly admit?: (
    request: FastifyRequest,
  ) => { status: number; body: string | Buffer; headers?: Record<string, string> } | undefined;
  readonly log?: (message: string) => void;
}

/**
 * The status proxy's relay for boards behind it (docs/status-proxy.md, docs/protocol.md 4.17):
 * it forwards a board's signed registration to the validator byte for byte, with the
 * `x-tm-callback-relay` header (the validator then leaves the board to the proxy), keeps the
 * board's address (the socket's peer, or the client a trusted proxy forwards for) and port, follows the challenges it forwards to the
 * board's key, and calls the board back, signed with the proxy's own key (published as
 * `callback_pubkey` in GET /health), when a block or a retarget of the re-served stream makes
 * its work stale. The same DeviceCallbacks as the validator: one in flight, coalesced, back-off.
 */
export class DeviceRelay {
  readonly callbacks: DeviceCallbacks;
  readonly keyPair: KeyPair;
  readonly #options: DeviceRelayOptions;
  readonly #atAddress = new Map<string, Set<string>>();
  readonly #stopListening: () => void;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(options: DeviceRelayOptions) {
    this.#options = options;
    this.keyPair = options.keyPair ?? generateKeyPair();
    this.callbacks = new DeviceCallbacks({
      secretKey: this.keyPair.secretKey,
      publicKey: this.keyPair.publicKey,
      send: options.send ?? httpCallbackSender(nodeHttp.request, { timeoutMs: options.timeoutMs ?? 1000 }),
      onSent: (e) => {
        if (!e.outcome.delivered)
          options.log?.(`callback to ${e.device.slice(0, 12)}… not delivered: ${e.outcome.error}`);
      },
    });
    this.#stopListening = options.hub.listen((event, data) => followHexEvent(this.callbacks, event, data));
    this.#timer = setInterval(() => this.callbacks.flush(), 250);
    this.#timer.unref();
  }

  /** The key boards check callbacks with: GET /health `callback_pubkey`. */
  get publicKeyHex(): string {
    return toHex(this.keyPair.publicKey);
  }

  /** A challenge the proxy forwarded: the board's current work when it was asked with its key. */
  followChallenge(body: unknown, answer: string): void {
    const key = (body as { miner_pubkey?: unknown } | null)?.miner_pubkey;
    if (typeof key !== 'string' || !this.callbacks.knows(key)) return;
    const c = JSON.parse(answer) as HexChallenge;
    this.callbacks.workIssued(key, {
      challengeId: c.id,
      coord: c.coord,
      difficulty: c.difficulty,
      issuedAt: c.issued_at,
      expiresAt: c.expires_at,
    });
  }

  /**
   * POST /devices/register, forwarded byte for byte: the raw body (kept by the service kit's
   * parser, which also refused a body that is not JSON) is what the board signed.
   */
  routes(app: FastifyInstance): void {
    app.post('/devices/register', async (req, reply) => {
      const raw = req.rawBody ?? Buffer.alloc(0);
      const answer = (status: number, text: string | Buffer) =>
        reply.code(status).header('content-type', 'application/json; charset=utf-8').send(text);
      const refuse = (code: ErrorCode, message: string, details?: Record<string, unknown>) =>
        answer(ERROR_CODES[code].status, JSON.stringify(errorBody(code, message, details)));
      const parsed = (req.body ?? {}) as { pubkey?: unknown; port?: unknown };
      const pubkey =
        typeof parsed.pubkey === 'string' && PUBKEY.test(parsed.pubkey) ? parsed.pubkey : undefined;
      const port = Number.isInteger(parsed.port) ? (parsed.port as number) : null;
      const unseenProxy = throughUnseenProxy(req.headers, req.ip, req.socket.remoteAddress);
      const mode = callbackModeFor(this.#options.policy ?? 'private', req.ip, port, false, unseenProxy);
      const address = callbackAddress(req.ip);
      if (pubkey !== undefined && port !== null) {
        const others = [...(this.#atAddress.get(address) ?? [])].filter((k) => k !== pubkey).length;
        const cap = this.#options.perAddress ?? 16;
        if (others >= cap) {
          return refuse(
            'device_limit_reached',
            `port: this address already has ${others} boards with a callback port on this status proxy, the most it allows (${cap})`,
            { devices: others, limit: cap },
          );
        }
      }
      const refused = this.#options.admit?.(req);
      if (refused !== undefined) {
        if (refused.headers !== undefined) void reply.headers(refused.headers);
        return answer(refused.status, refused.body);
      }
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        [DEVICE_CALLBACK_RELAY_HEADER]: '1',
      };
      for (const h of SIGNED_HEADERS) {
        const value = req.headers[h];
        if (typeof value === 'string') headers[h] = value;
      }
      let status: number;
      let text: string;
      try {
        const res = await fetch(`${this.#options.upstream()}/devices/register`, {
          method: 'POST',
          headers,
          body: new Uint8Array(raw),
          signal: AbortSignal.timeout(10_000),
        });
        status = res.status;
        text = await res.text();
      } catch (error) {
        return refuse('upstream_unavailable', `no validator answered: ${(error as Error).message}`);
      }
      if (status !== 200 || pubkey === undefined) return answer(status, text);
      // Registered: the proxy calls this board back (or not, by its own address policy).
      this.callbacks.setDevice(pubkey, port === null ? null : { address, port }, mode);
      for (const set of this.#atAddress.values()) set.delete(pubkey);
      if (port !== null) {
        const set = this.#atAddress.get(address) ?? new Set<string>();
        set.add(pubkey);
        this.#atAddress.set(address, set);
      }
      const result = JSON.parse(text) as Record<string, unknown>;
      return answer(200, JSON.stringify({ ...result, callbacks: mode }));
    });
  }

  async close(): Promise<void> {
    this.#stopListening();
    clearInterval(this.#timer);
    await this.callbacks.close();
  }
}

/**
 * The proxy's callback key from `path` (64 hex digits, the secret), created (mode 0600) when the
 * file does not exist: boards keep the key they read from GET /health, so it must survive a
 * restart of the proxy.
 */
export function loadCallbackKey(path: string): KeyPair {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const key = generateKeyPair();
    writeFileSync(path, `${toHex(key.secretKey)}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  }
  if (!/^[0-9a-f]{64}$/.test(text))
    throw new Error(`${path}: expected 64 lowercase hex digits (a secret key)`);
  return keyPairFromSecret(fromHex(text, 32, path));
}
