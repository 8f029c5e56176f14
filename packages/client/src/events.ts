import { EventEmitter } from 'node:events';
import type { TensormineError } from './errors.js';

/**
 * The events of a client. Listen with `client.on(name, listener)`; a listener that throws does
 * not break the request (its error becomes a process warning).
 */

/** Before every attempt of a request (`attempt` counts from 1). */
export interface RequestEvent {
  readonly operationId: string;
  readonly method: string;
  readonly url: string;
  readonly endpoint: string;
  readonly attempt: number;
}

/** After every answer with a status, success or error. */
export interface ResponseEvent extends RequestEvent {
  readonly status: number;
  readonly durationMs: number;
}

/** A GET is tried again after `error`; `delayMs` is the backoff (0 when it moves to another endpoint). */
export interface RetryEvent extends RequestEvent {
  readonly error: TensormineError;
  readonly delayMs: number;
  /** Where the next attempt goes. */
  readonly nextEndpoint: string;
}

export type FailoverReason = 'network_error' | 'timeout' | 'server_error' | 'probe';

/** The endpoint in use changed because `from` failed. */
export interface FailoverEvent {
  readonly from: string;
  readonly to: string;
  readonly reason: FailoverReason;
  readonly error: TensormineError;
}

/** A failed endpoint answered again (a health probe or a request); `active` is the one in use now. */
export interface RecoveredEvent {
  readonly endpoint: string;
  readonly active: string;
  /** How long it had been marked down. */
  readonly downForMs: number;
}

/** The protocol generation of an endpoint was detected (GET /api/hexchain/status). */
export interface ProtocolEvent {
  readonly endpoint: string;
  readonly version: '4.0' | '4.1';
}

export interface ClientEventMap {
  request: [RequestEvent];
  response: [ResponseEvent];
  retry: [RetryEvent];
  failover: [FailoverEvent];
  recovered: [RecoveredEvent];
  protocol: [ProtocolEvent];
}

export type ClientEventName = keyof ClientEventMap;
export type ClientEventListener<K extends ClientEventName> = (...args: ClientEventMap[K]) => void;

/** The emitter behind a client: a listener's exception never reaches the request. */
export class ClientEmitter extends EventEmitter<ClientEventMap> {
  safeEmit<K extends ClientEventName>(name: K, ...args: ClientEventMap[K]): void {
    if (this.listenerCount(name) === 0) return;
    try {
      (this.emit as (name: K, ...args: ClientEventMap[K]) => boolean)(name, ...args);
    } catch (error) {
      process.emitWarning(
        `a "${name}" listener of a tensormine client threw: ${error instanceof Error ? error.message : String(error)}`,
        { code: 'TENSORMINE_LISTENER_ERROR' },
      );
    }
  }
}
