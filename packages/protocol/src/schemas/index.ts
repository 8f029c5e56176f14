/**
 * The wire schemas of every service (TypeBox 1.x): request validation, response serialization,
 * OpenAPI and client types from one source. The package entry point re-exports this barrel.
 */
export * from './admin.js';
export * from './common.js';
export * from './device-callbacks.js';
export * from './economy.js';
export * from './error.js';
export * from './hexchain.js';
export * from './hexchain-events.js';
export * from './hub.js';
export * from './pool.js';
export * from './routes.js';
export * from './status-proxy.js';
export * from './terminal.js';
export * from './validator.js';
