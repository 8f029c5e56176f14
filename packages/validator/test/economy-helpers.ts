import { type KeyPair, signRequest, toHex } from '@tensormine/protocol';
import type { LightMyRequestResponse } from 'fastify';
import type { Validator } from '../src/app.js';
import type { EconomyGenesis } from '../src/services/economy.js';

/** A signed POST that can be sent again byte for byte (a client retry). */
export interface SignedPost {
  send(v: Validator): Promise<LightMyRequestResponse>;
}

export function signedPost(
  key: KeyPair,
  url: string,
  body: unknown,
  options: { nonce?: Uint8Array; timestamp?: number } = {},
): SignedPost {
  const payload = JSON.stringify(body);
  const headers = signRequest({
    method: 'POST',
    path: url,
    body: payload,
    secretKey: key.secretKey,
    ...(options.nonce ? { nonce: options.nonce } : {}),
    ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
  });
  return {
    send: (v) =>
      v.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload }),
  };
}

/** Signs (at the validator's clock) and sends once. */
export function signedSend(
  v: Validator,
  key: KeyPair,
  url: string,
  body: unknown,
): Promise<LightMyRequestResponse> {
  return signedPost(key, url, body, { timestamp: v.context.now() }).send(v);
}

/** A clock tests move by hand (Unix ms). */
export function manualClock(start = 1_800_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(seconds: number) {
      now += seconds * 1000;
    },
  };
}

export const hex = (key: KeyPair): string => toHex(key.publicKey);

/** A genesis with the default pools and reserve, and allocations for the given keys. */
export function genesisWith(
  allocations: readonly { key: KeyPair; token: string; amount: string }[],
  extra: Partial<EconomyGenesis> = {},
): EconomyGenesis {
  return {
    reserve: '1000000',
    pools: [
      { base: 'PTM', quote: 'USDC', base_reserve: '1000000', quote_reserve: '50000', fee_bps: 30 },
      { base: 'PTM', quote: 'SOL', base_reserve: '1000000', quote_reserve: '500', fee_bps: 30 },
      { base: 'SOL', quote: 'USDC', base_reserve: '1000', quote_reserve: '100000', fee_bps: 30 },
    ],
    allocations: allocations.map((a) => ({ pubkey: hex(a.key), token: a.token, amount: a.amount })),
    ...extra,
  };
}

/** Asserts conservation through the storage: per token, supply == genesis + mining rewards. */
export async function conservation(
  v: Validator,
): Promise<{ supply: Map<string, bigint>; issued: Map<string, bigint> }> {
  return v.context.storage.read(async (tx) => ({
    supply: await tx.economy.supply(),
    issued: await tx.economy.issued(),
  }));
}
