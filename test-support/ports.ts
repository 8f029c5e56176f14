import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/**
 * Free TCP ports of 127.0.0.1 for servers a test starts in other processes that take their port
 * as a flag (PostgreSQL, Patroni, etcd, HAProxy, Prometheus, a service's bin).
 *
 * A port the kernel hands out for `listen(0)` and then closed is free only until the next
 * `listen(0)` or outgoing connection of any process takes it: with a whole suite starting servers
 * in parallel, a server started seconds later on that number may find it taken (seen: a Patroni
 * member's PostgreSQL refused "Address already in use", its standby never ready). So these
 * ports are chosen below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), where
 * neither `listen(0)` nor an outgoing connection ever lands, each vitest worker in a slice of
 * its own (VITEST_POOL_ID), handed out in turn from a random start and never twice by one
 * process; each is checked free by binding it, all of one call held together while chosen.
 */

const LOW = 10_000;
/** Slices: the main process (0) and up to 16 workers. */
const SLICES = 17;

function ephemeralLow(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const n = Number(low);
    return Number.isInteger(n) && n > LOW + SLICES * 64 ? n : 32_768;
  } catch {
    return 32_768;
  }
}

const width = Math.floor((ephemeralLow() - LOW) / SLICES);
const slice = (Number(process.env.VITEST_POOL_ID ?? 0) || 0) % SLICES;
const first = LOW + slice * width;
let offset = Math.floor(Math.random() * width);

function bind(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** `n` distinct free ports of 127.0.0.1 (see above). */
export async function freePorts(n: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let tried = 0; ports.length < n; tried++) {
      if (tried >= width)
        throw new Error(`freePorts: fewer than ${n} free ports in ${first}-${first + width - 1}`);
      const port = first + (offset++ % width);
      const server = await bind(port);
      if (server === undefined) continue;
      held.push(server);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

/** One free port of 127.0.0.1 (see above). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('freePorts returned none');
  return port;
}
