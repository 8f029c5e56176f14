import type { ValidatorContext } from '../context.js';
import type { Handlers } from '../http/routes.js';
import { DeviceCallbackService, type DeviceCallbackServiceOptions } from './devices/callbacks.js';
import { deviceHandlers } from './devices/handlers.js';
import type { HexchainService, Service } from './types.js';

/**
 * The devices: POST /devices/register, GET /devices, and their callbacks (docs/protocol.md 4.17;
 * the parts in services/devices/: `handlers.ts` the routes, `callbacks.ts` who is called back
 * when). `wrap` adds what the callbacks need to the other services' handlers (the challenges
 * issued).
 */
export interface DeviceService extends Service {
  readonly callbacks: DeviceCallbackService;
  /** The handlers with the hexchain challenge handler followed (unchanged without it). */
  wrap(handlers: Handlers): Handlers;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createDeviceService(
  ctx: ValidatorContext,
  hexchain: HexchainService,
  options: DeviceCallbackServiceOptions = {},
): DeviceService {
  const callbacks = new DeviceCallbackService(ctx, hexchain, options);
  return {
    callbacks,
    handlers: deviceHandlers(callbacks),
    wrap(handlers) {
      const hexChallenge = handlers.hexChallenge;
      return hexChallenge ? { ...handlers, hexChallenge: callbacks.followWork(hexChallenge) } : handlers;
    },
    start: () => callbacks.start(),
    close: () => callbacks.close(),
  };
}
