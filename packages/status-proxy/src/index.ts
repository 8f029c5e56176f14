/**
 * @tensormine/status-proxy: the status proxy of a hexchain network. It forwards
 * /api/hexchain/* to validators with failover and a short cache, re-serves their event stream
 * from one upstream connection, and serves the live lattice dashboard. See docs/status-proxy.md.
 */
export { type CachedAnswer, ReadCache } from './cache.js';
export { LatticeMirror, type MirrorOptions, RATE_WINDOW_BLOCKS } from './mirror.js';
export {
  type CreateStatusProxyOptions,
  createStatusProxy,
  SOFTWARE_VERSION,
  type StatusProxy,
} from './proxy.js';
