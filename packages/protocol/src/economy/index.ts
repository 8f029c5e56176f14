export * from './accounts.js';
export * from './math.js';
export * from './orders.js';
export * from './stake.js';
export * from './swap.js';
export * from './transfer.js';
export * from './vault.js';
