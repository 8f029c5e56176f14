import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { type KeyPair, toHex } from '@tensormine/protocol';
import type { ValidatorConfig } from '../config.js';
import type { NodeRecord, Storage } from '../store/types.js';
import type { HexchainService } from './types.js';

/**
 * The nodes sharing one database (docs/cluster.md). On PostgreSQL several validator processes
 * serve one network: each writes a heartbeat row (`cluster_nodes`) every HEARTBEAT_MS with the
 * height its in-memory lattice has applied, and catches that lattice up at the same time (the
 * safety net of the notifications, should one be lost). GET /network/peers lists the other
 * live nodes; a node is live while its last heartbeat is younger than LIVE_MS and it has not
 * stopped cleanly.
 */

export const HEARTBEAT_MS = 5_000;
/** Three missed heartbeats: the node is gone (crashed, stopped, cut off from the database). */
export const LIVE_MS = 3 * HEARTBEAT_MS;
/** Rows of nodes gone for this long are deleted. */
const FORGET_MS = 7 * 86_400_000;

/** The file of the generated node id in the data directory. */
export const NODE_ID_FILE = 'node-id';

/**
 * This node's identifier. Alone on its database (SQLite) it is `node-` and the first 16 hex
 * digits of the validator's public key, as before clusters existed. In a cluster every node has
 * the same key (the seed is in the shared database), so the id is `--node-id` or, by default,
 * `<hostname>-<8 random hex>` generated at the first start and kept in `<dataDir>/node-id`
 * (stable across restarts; a new one per process when the data directory is `:memory:`).
 */
export function resolveNodeId(config: ValidatorConfig, identity: KeyPair, cluster: boolean): string {
  if (config.nodeId !== undefined) return config.nodeId;
  if (!cluster) return `node-${toHex(identity.publicKey).slice(0, 16)}`;
  const generated = `${
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 40) || 'node'
  }-${toHex(randomBytes(4))}`;
  if (config.dataDir === ':memory:') return generated;
  const file = join(config.dataDir, NODE_ID_FILE);
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, `${generated}\n`);
    } finally {
      closeSync(fd);
    }
    return generated;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stored = readFileSync(file, 'utf8').trim();
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(stored)) {
    throw new Error(
      `${file}: not a node id (1 to 64 letters, digits, '.', '_', ':' or '-'); delete it to generate one`,
    );
  }
  return stored;
}

/**
 * A storage other processes may share: PostgreSQL, whose `location` is its postgres:// URL
 * (SQLite is one process's file).
 */
export function isSharedStorage(storage: Storage): boolean {
  return /^postgres(ql)?:\/\//.test(storage.location);
}

/**
 * Notifications sent while the storage's listening connection was down are lost: when it is
 * back, `catchUp` re-reads what the node follows. Returns the unsubscribe (a no-op when the
 * storage never loses its listeners, as SQLite in process).
 */
export function followReconnects(
  storage: Storage,
  catchUp: () => Promise<void>,
  log: { warn(obj: unknown, msg: string): void },
): () => void {
  const s = storage as { onListenReconnect?: (fn: () => void) => () => void };
  if (typeof s.onListenReconnect !== 'function') return () => {};
  return s.onListenReconnect(() => {
    catchUp().catch((error: unknown) =>
      log.warn({ err: error }, 'could not catch up after the listener reconnected'),
    );
  });
}

export interface PeerView {
  readonly node_id: string;
  readonly url: string;
  readonly last_seen: number | null;
  readonly latency_ms: number | null;
  readonly applied_height: number;
  readonly synced: boolean;
  readonly software_version: string;
  readonly started_at: number;
}

export interface NetworkView {
  readonly mode: 'local_only' | 'cluster';
  readonly peers: PeerView[];
  readonly total_nodes: number;
  readonly synced: boolean;
  /** Committed blocks in the database, and the height this node's lattice applied. */
  readonly height: number;
  readonly applied_height: number;
}

export interface ClusterOptions {
  readonly storage: Storage;
  readonly now: () => number;
  readonly nodeId: string;
  readonly softwareVersion: string;
  readonly hexchain: HexchainService;
  readonly log: { warn(obj: unknown, msg: string): void };
}

/** The membership of this node in its cluster (a no-op view when alone on SQLite). */
export class Cluster {
  readonly instance = toHex(randomBytes(8));
  readonly startedAtMs: number;
  #url: string | null = null;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    readonly enabled: boolean,
    private readonly o: ClusterOptions,
  ) {
    this.startedAtMs = o.now();
  }

  /** Writes the first heartbeat (warning when a live node already uses this id) and starts beating. */
  async start(): Promise<void> {
    if (!this.enabled) return;
    const existing = await this.o.storage.read((tx) => tx.nodes.get(this.o.nodeId));
    if (existing !== undefined && this.#live(existing) && existing.instance !== this.instance) {
      this.o.log.warn(
        { nodeId: this.o.nodeId, lastHeartbeatMs: existing.heartbeatAtMs },
        'another live process may be using this node id (a restart after a crash looks the same until its heartbeat expires); give each node its own --node-id or data directory',
      );
    }
    await this.beat();
    this.#timer = setInterval(() => {
      this.beat().catch((error: unknown) => this.o.log.warn({ err: error }, 'cluster heartbeat failed'));
    }, HEARTBEAT_MS);
    this.#timer.unref();
  }

  /** Records the URL this node serves at (when it starts listening). */
  async listening(url: string): Promise<void> {
    this.#url = url;
    if (this.enabled && !this.#stopped) await this.beat();
  }

  /** Catches the lattice up, then writes the heartbeat with the applied height. */
  async beat(): Promise<void> {
    if (!this.enabled || this.#stopped) return;
    await this.o.hexchain.catchUp();
    // Read apart from the write: the heartbeat's transaction touches only cluster_nodes, so it
    // never takes part in a serialization conflict with the blocks being accepted.
    const height = await this.o.storage.read(async (tx) => (await tx.blocks.head()).height);
    const applied = this.o.hexchain.appliedHeight();
    await this.o.storage.transaction(async (tx) => {
      await tx.nodes.put(this.#record({ applied, synced: applied >= height, stoppedAtMs: null }));
      await tx.nodes.forget(this.o.now() - FORGET_MS);
    });
  }

  /** Marks the node stopped (a clean stop: peers drop it at once). */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (!this.enabled || this.#stopped) return;
    this.#stopped = true;
    const applied = this.o.hexchain.appliedHeight();
    await this.o.storage.transaction((tx) =>
      tx.nodes.put(this.#record({ applied, synced: false, stoppedAtMs: this.o.now() })),
    );
  }

  /** GET /network/peers, and the network part of GET /status. */
  async view(): Promise<NetworkView> {
    const { nodes, height } = await this.o.storage.read(async (tx) => ({
      nodes: this.enabled ? await tx.nodes.list() : [],
      height: (await tx.blocks.head()).height,
    }));
    const applied = this.o.hexchain.appliedHeight();
    const synced = applied >= height;
    if (!this.enabled) {
      return { mode: 'local_only', peers: [], total_nodes: 1, synced: true, height, applied_height: applied };
    }
    const others = nodes.filter((n) => n.nodeId !== this.o.nodeId && this.#live(n));
    const peers = others
      .filter((n): n is NodeRecord & { url: string } => n.url !== null)
      .map((n) => ({
        node_id: n.nodeId,
        url: n.url,
        last_seen: Math.floor(n.heartbeatAtMs / 1000),
        latency_ms: null,
        applied_height: n.appliedHeight,
        synced: n.synced,
        software_version: n.softwareVersion,
        started_at: Math.floor(n.startedAtMs / 1000),
      }));
    return {
      mode: 'cluster',
      peers,
      total_nodes: others.length + 1,
      synced,
      height,
      applied_height: applied,
    };
  }

  #live(n: NodeRecord): boolean {
    return n.stoppedAtMs === null && this.o.now() - n.heartbeatAtMs < LIVE_MS;
  }

  #record(p: { applied: number; synced: boolean; stoppedAtMs: number | null }): NodeRecord {
    return {
      nodeId: this.o.nodeId,
      instance: this.instance,
      url: this.#url,
      softwareVersion: this.o.softwareVersion,
      startedAtMs: this.startedAtMs,
      heartbeatAtMs: this.o.now(),
      appliedHeight: p.applied,
      synced: p.synced,
      stoppedAtMs: p.stoppedAtMs,
    };
  }
}
