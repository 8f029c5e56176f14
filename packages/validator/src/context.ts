import type { KeyPair, MacCore } from '@tensormine/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { RuntimeSettingName, ValidatorConfig } from './config.js';
import type { Metrics } from './services/metrics.js';
import type { Storage } from './store/types.js';

/** The settings that can change at run time (POST /admin/config), as currently in force. */
export type RuntimeConfig = { -readonly [K in RuntimeSettingName]: ValidatorConfig[K] };

/**
 * Everything a route handler or service needs, created once per validator instance.
 * Nothing here is global: two validators in one process share nothing.
 */
export interface ValidatorContext {
  readonly config: ValidatorConfig;
  /** Current values of the run-time settings (persisted when changed). */
  readonly runtime: RuntimeConfig;
  readonly storage: Storage;
  /** The clock, Unix milliseconds (injectable for tests). */
  readonly now: () => number;
  /** The validator's secret seed: challenge entropy derives from it. Never log it. */
  readonly seed: Uint8Array;
  /** The validator's signing key (derived from the seed): signs acceptance receipts. */
  readonly identity: KeyPair;
  /** Public, stable identifier of this node (derived from its signing key). */
  readonly nodeId: string;
  readonly metrics: Metrics;
  /** The multiply-accumulate core of v4.0 verification (config verifyKernel). */
  readonly mac: MacCore;
  readonly log: FastifyBaseLogger;
  /** Unix milliseconds when this process started serving. */
  readonly startedAt: number;
}

/** Unix seconds of the context clock. */
export function nowSeconds(ctx: Pick<ValidatorContext, 'now'>): number {
  return Math.floor(ctx.now() / 1000);
}
