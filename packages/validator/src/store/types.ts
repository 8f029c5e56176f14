/**
 * The storage interface of the validator, one file per aggregate (types/*.ts): the storage and
 * its transaction (types/storage.ts), settings, counters and request nonces (types/meta.ts), the
 * ledger, devices and miners, v4.0 challenges and proofs, the hexchain, the mining pool, the
 * economy and the validator nodes. Import from here.
 */

export * from './types/devices.js';
export * from './types/economy.js';
export * from './types/hexchain.js';
export * from './types/ledger.js';
export * from './types/meta.js';
export * from './types/nodes.js';
export * from './types/pool.js';
export * from './types/proofs.js';
export * from './types/storage.js';
