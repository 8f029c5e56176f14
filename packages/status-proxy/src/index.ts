/**
 * @tensormine/status-proxy: the status proxy of a hexchain network. It forwards
 * /api/hexchain/* to validators with failover and a short cache, re-serves their event stream
 * from one upstream connection, serves the live lattice dashboard, and relays registrations and
 * callbacks for the boards behind it. See docs/status-proxy.md.
 */
export { type CachedAnswer, ReadCache } from './cache.js';
export { DeviceRelay, type DeviceRelayOptions, loadCallbackKey } from './devices.js';
export { LatticeMirror, type MirrorOptions, RATE_WINDOW_BLOCKS } from './mirror.js';
export {
  type CreateStatusProxyOptions,
  createStatusProxy,
  SOFTWARE_VERSION,
  type StatusProxy,
} from './proxy.js';
