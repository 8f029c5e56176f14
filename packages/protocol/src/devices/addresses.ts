import { BlockList, isIP } from 'node:net';
import type { DeviceCallbackMode } from './callbacks.js';

/**
 * Where a registration is called back, and whether it is (docs/protocol.md 4.17): only at the
 * address the registration came from (the socket's peer, or the client a trusted reverse proxy
 * forwards for; other forwarding headers are never read, and a registration that carries them
 * came through a proxy the service cannot see past, so it is not called back),
 * only at the registered port, and by default only when that address is a local one (a home
 * LAN): loopback, RFC 1918, link-local, shared address space (CGNAT) and IPv6 unique-local.
 * Pure computation (node:net's BlockList): the validator and the status proxy both decide here.
 */

const LOCAL = new BlockList();
for (const [net, prefix] of [
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['169.254.0.0', 16],
  ['100.64.0.0', 10],
] as const) {
  LOCAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const) {
  LOCAL.addSubnet(net, prefix, 'ipv6');
}

/** The address as the validator connects to it: an IPv4-mapped IPv6 address is its IPv4 address. */
export function callbackAddress(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}

/** True for loopback, private, link-local, shared (CGNAT) and unique-local addresses. */
export function isLocalAddress(ip: string): boolean {
  const address = callbackAddress(ip);
  const family = isIP(address);
  if (family === 0) return false;
  return LOCAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Which addresses a service calls back: local ones, all, or none. */
export type CallbackAddressPolicy = 'private' | 'all' | 'off';

/** The headers a proxy adds to what it forwards. */
const PROXY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'via'] as const;

/**
 * True when a request came through a proxy the service does not see past: it carries a
 * forwarding header, yet its address `ip` is the socket's peer `peer` (the service does not
 * trust that proxy, so `ip` is the proxy's). Calling such a registration back would call the
 * proxy's host (often the service's own loopback) at a port a stranger chose.
 */
export function throughUnseenProxy(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  ip: string,
  peer: string | undefined,
): boolean {
  return (peer === undefined || ip === peer) && PROXY_HEADERS.some((h) => headers[h] !== undefined);
}

/**
 * How a registration from `ip` with `port` is called back under `policy`; `unseenProxy` (see
 * {@link throughUnseenProxy}) switches its callbacks off.
 */
export function callbackModeFor(
  policy: CallbackAddressPolicy,
  ip: string,
  port: number | null,
  relayed: boolean,
  unseenProxy = false,
): DeviceCallbackMode {
  if (port === null) return 'none';
  if (relayed) return 'relayed';
  if (policy === 'off' || unseenProxy) return 'off';
  if (policy === 'private' && !isLocalAddress(ip)) return 'off';
  return 'on';
}

/**
 * The header a status proxy adds when it forwards a board's registration: it calls the board
 * back itself. It can only switch the validator's callbacks off for that registration, never
 * send them anywhere, so nobody needs to be trusted for it.
 */
export const DEVICE_CALLBACK_RELAY_HEADER = 'x-tm-callback-relay';
