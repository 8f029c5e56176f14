import type { NodeRecord, NodeRepo } from '../types.js';
import type { Row } from './executor.js';
import type { Scope } from './scope.js';
import { int, nullableInt, nullableText, text } from './values.js';

const COLUMNS =
  'node_id, instance, url, software_version, started_at_ms, heartbeat_at_ms, applied_height, synced, stopped_at_ms';

/** Table `cluster_nodes` (migration step "cluster nodes"), in the SQL both engines accept. */
export class SqlNodeRepo implements NodeRepo {
  constructor(private readonly scope: Scope) {}

  async put(n: NodeRecord): Promise<void> {
    await this.scope
      .write('nodes.put')
      .prepare(
        `INSERT INTO cluster_nodes (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ` +
          'ON CONFLICT (node_id) DO UPDATE SET instance = excluded.instance, url = excluded.url, ' +
          'software_version = excluded.software_version, started_at_ms = excluded.started_at_ms, ' +
          'heartbeat_at_ms = excluded.heartbeat_at_ms, applied_height = excluded.applied_height, ' +
          'synced = excluded.synced, stopped_at_ms = excluded.stopped_at_ms',
      )
      .run(
        n.nodeId,
        n.instance,
        n.url,
        n.softwareVersion,
        n.startedAtMs,
        n.heartbeatAtMs,
        n.appliedHeight,
        n.synced ? 1 : 0,
        n.stoppedAtMs,
      );
  }

  async get(nodeId: string): Promise<NodeRecord | undefined> {
    const row = await this.scope
      .read()
      .prepare(`SELECT ${COLUMNS} FROM cluster_nodes WHERE node_id = ?`)
      .get(nodeId);
    return row === undefined ? undefined : toNode(row);
  }

  async list(): Promise<NodeRecord[]> {
    const rows = await this.scope
      .read()
      .prepare(`SELECT ${COLUMNS} FROM cluster_nodes ORDER BY node_id`)
      .all();
    return rows.map(toNode);
  }

  async forget(beforeMs: number): Promise<number> {
    const result = await this.scope
      .write('nodes.forget')
      .prepare('DELETE FROM cluster_nodes WHERE heartbeat_at_ms < ?')
      .run(beforeMs);
    return Number(result.changes);
  }
}

function toNode(row: Row): NodeRecord {
  return {
    nodeId: text(row, 'node_id'),
    instance: text(row, 'instance'),
    url: nullableText(row, 'url'),
    softwareVersion: text(row, 'software_version'),
    startedAtMs: int(row, 'started_at_ms'),
    heartbeatAtMs: int(row, 'heartbeat_at_ms'),
    appliedHeight: int(row, 'applied_height'),
    synced: int(row, 'synced') === 1,
    stoppedAtMs: nullableInt(row, 'stopped_at_ms'),
  };
}
