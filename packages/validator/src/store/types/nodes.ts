// Validator nodes (a cluster on PostgreSQL): part of the storage interface (../types.ts).

/**
 * The validator nodes sharing one database (a cluster on PostgreSQL): one row per node, written
 * by its heartbeats (services/cluster.ts). A node is live while its heartbeat is recent.
 */

export interface NodeRecord {
  /** The node's identifier (`--node-id`, or generated once per data directory). */
  readonly nodeId: string;
  /** Random per process start: tells a restarted node, or a second process using the same id. */
  readonly instance: string;
  /** The base URL the node serves at; null before it listens. */
  readonly url: string | null;
  readonly softwareVersion: string;
  /** Unix ms when this process started. */
  readonly startedAtMs: number;
  /** Unix ms of the last heartbeat (the node's clock). */
  readonly heartbeatAtMs: number;
  /** Height of the newest block its in-memory lattice has applied. */
  readonly appliedHeight: number;
  /** Whether the lattice had applied every committed block at that heartbeat. */
  readonly synced: boolean;
  /** Unix ms when the process stopped cleanly; null while it runs (or after a crash). */
  readonly stoppedAtMs: number | null;
}

export interface NodeRepo {
  /** Writes the node's row (insert, or replace its fields). */
  put(node: NodeRecord): Promise<void>;
  get(nodeId: string): Promise<NodeRecord | undefined>;
  /** Every row, by node id. */
  list(): Promise<NodeRecord[]>;
  /** Deletes rows whose last heartbeat is older than `beforeMs`; returns how many. */
  forget(beforeMs: number): Promise<number>;
}
