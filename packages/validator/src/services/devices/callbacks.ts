import {
  type CallbackSender,
  type DeviceCallbackHealth,
  DeviceCallbacks,
  followHexEvent,
  type HexChallenge,
  httpCallbackSender,
} from '@tensormine/protocol';
import { nodeHttp } from '@tensormine/service-kit';
import type { ValidatorContext } from '../../context.js';
import type { Handler } from '../../http/routes.js';
import type { DeviceRecord } from '../../store/types.js';
import type { HexchainService } from '../types.js';

/** Devices followed in memory at once (their current work, callback state and recent blocks). */
const MAX_DEVICES = 100_000;
/** How often coalesced notifications whose back-off ended are sent. */
const FLUSH_MS = 250;
/** A device's registration is re-read from storage when older than this (another node may have changed it). */
const REFRESH_MS = 60_000;

export interface DeviceCallbackServiceOptions {
  /** The sender (tests inject one); default HTTP with the `deviceCallbackTimeoutMs` setting. */
  readonly send?: CallbackSender;
}

/**
 * The validator's device callbacks (docs/protocol.md 4.17), beside the event stream: it follows
 * the v4.1 challenges issued to registered devices (by wrapping the challenge handler) and the
 * lattice's `block`, `retarget` and `difficulty` events (in process, from the hexchain's event
 * hub), and calls a device back, node-signed, when its work goes stale. Sending is outside every
 * request and transaction; see DeviceCallbacks for the limits that keep a dead or hostile
 * device from costing anything.
 *
 * In a cluster each node calls back the devices it issued challenges to (it follows the blocks
 * of every node through the hexchain's catch-up), so a device is called by one node at a time.
 */
export class DeviceCallbackService {
  readonly callbacks: DeviceCallbacks;
  readonly #ctx: ValidatorContext;
  readonly #hexchain: HexchainService;
  readonly #looked = new Map<string, number>();
  #stopListening: (() => void) | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(ctx: ValidatorContext, hexchain: HexchainService, options: DeviceCallbackServiceOptions = {}) {
    this.#ctx = ctx;
    this.#hexchain = hexchain;
    this.callbacks = new DeviceCallbacks({
      secretKey: ctx.identity.secretKey,
      publicKey: ctx.identity.publicKey,
      send:
        options.send ??
        httpCallbackSender(nodeHttp.request, { timeoutMs: ctx.config.deviceCallbackTimeoutMs }),
      now: ctx.now,
      maxDevices: MAX_DEVICES,
      onSent: (event) => {
        const o = event.outcome;
        ctx.log.debug(
          { device: event.device, challenge: event.challengeId, reason: event.reason, ms: event.ms },
          o.delivered ? 'device callback delivered' : `device callback not delivered: ${o.error}`,
        );
      },
    });
  }

  /** Loads the devices called back from storage and starts following the lattice. */
  async start(): Promise<void> {
    const devices = await this.#ctx.storage.read((tx) => tx.devices.listCallbacks(MAX_DEVICES));
    for (const d of devices) this.registered(d);
    const info = this.#hexchain.info();
    this.callbacks.setChain(this.#hexchain.appliedHeight(), Number(info.difficulty));
    this.#stopListening = this.#hexchain.events.listen((event, data) =>
      followHexEvent(this.callbacks, event, data),
    );
    this.#timer = setInterval(() => this.callbacks.flush(), FLUSH_MS);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#stopListening?.();
    if (this.#timer) clearInterval(this.#timer);
    await this.callbacks.close();
  }

  /** A registration was stored (here or read from storage): follow its callback target. */
  registered(device: DeviceRecord): void {
    const target =
      device.callbackAddress !== null && device.port !== null
        ? { address: device.callbackAddress, port: device.port }
        : null;
    this.callbacks.setDevice(device.pubkey, target, device.callbackMode);
    this.#looked.set(device.pubkey, this.#ctx.now());
  }

  /** Wraps the hexchain's challenge handler: a challenge issued to a key is that device's work. */
  followWork(inner: Handler<'hexChallenge'>): Handler<'hexChallenge'> {
    return async (req, ctx) => {
      const challenge = await inner(req, ctx);
      const key = req.body.miner_pubkey;
      if (key !== undefined) this.#workIssued(key, challenge);
      return challenge;
    };
  }

  /** A device's callbacks: from memory when followed here, else from its stored mode. */
  health(device: DeviceRecord): DeviceCallbackHealth {
    if (this.callbacks.knows(device.pubkey)) return this.callbacks.health(device.pubkey);
    const base = this.callbacks.health(device.pubkey);
    const state = device.callbackMode === 'on' ? 'idle' : device.callbackMode;
    return { ...base, state };
  }

  #workIssued(pubkey: string, challenge: HexChallenge): void {
    this.callbacks.workIssued(pubkey, {
      challengeId: challenge.id,
      coord: challenge.coord,
      difficulty: challenge.difficulty,
      issuedAt: challenge.issued_at,
      expiresAt: challenge.expires_at,
    });
    const looked = this.#looked.get(pubkey);
    if (looked !== undefined && this.#ctx.now() - looked < REFRESH_MS) return;
    // Registered on another node, or a while ago: read where it is called back (not awaited;
    // a notification before the answer just finds no target).
    this.#looked.set(pubkey, this.#ctx.now());
    if (this.#looked.size > MAX_DEVICES) this.#looked.delete(this.#looked.keys().next().value as string);
    this.#ctx.storage
      .read((tx) => tx.devices.get(pubkey))
      .then((device) => {
        if (device) this.registered(device);
      })
      .catch((error: unknown) => this.#ctx.log.warn({ err: error }, 'could not read a device registration'));
  }
}
