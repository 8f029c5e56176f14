import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { DEVICE_CALLBACK_PATH, type SignedDeviceCallback } from './callback.js';
import type { CallbackOutcome, CallbackSender, CallbackTarget } from './callbacks.js';

/** node:http's `request`, passed in by the service (this package does no I/O of its own). */
export type HttpRequestFunction = (
  options: RequestOptions,
  callback?: (res: IncomingMessage) => void,
) => ClientRequest;

export interface HttpCallbackSenderOptions {
  /** The whole exchange, connection included (default 1000 ms): then the socket is destroyed. */
  readonly timeoutMs?: number;
}

/**
 * The sender of device callbacks over HTTP/1.1: one POST to `DEVICE_CALLBACK_PATH` on the target's
 * address and port, a fresh connection without keep-alive, a bounded time, and nothing read but
 * the status line (the socket is destroyed once it arrives): a device that answers slowly, answers
 * garbage or does not answer costs one socket for at most `timeoutMs`. Never rejects.
 */
export function httpCallbackSender(
  request: HttpRequestFunction,
  options: HttpCallbackSenderOptions = {},
): CallbackSender {
  const timeoutMs = options.timeoutMs ?? 1000;
  return (target: CallbackTarget, message: SignedDeviceCallback) =>
    new Promise<CallbackOutcome>((resolve) => {
      let settled = false;
      let req: ClientRequest | undefined;
      const settle = (outcome: CallbackOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req?.destroy();
        resolve(outcome);
      };
      const timer = setTimeout(
        () => settle({ delivered: false, error: `no answer in ${timeoutMs} ms` }),
        timeoutMs,
      );
      try {
        req = request(
          {
            host: target.address,
            port: target.port,
            method: 'POST',
            path: DEVICE_CALLBACK_PATH,
            agent: false,
            headers: {
              ...message.headers,
              'content-length': String(message.body.length),
              connection: 'close',
            },
          },
          (res) => {
            const status = res.statusCode ?? 0;
            res.on('error', () => {});
            settle(
              status >= 200 && status < 300
                ? { delivered: true, status }
                : { delivered: false, status, error: `HTTP ${status}` },
            );
          },
        );
      } catch (error) {
        settle({ delivered: false, error: (error as Error).message });
        return;
      }
      req.on('error', (error) => settle({ delivered: false, error: error.message }));
      req.end(message.body);
    });
}
