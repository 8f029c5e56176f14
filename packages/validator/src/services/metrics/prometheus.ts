import type { SseHub } from '@tensormine/protocol';
import type { ServiceMetrics } from '@tensormine/service-kit';
import type { ValidatorContext } from '../../context.js';
import type { Storage } from '../../store/types.js';
import type { Cluster } from '../cluster.js';
import type { ResultKind } from '../metrics.js';

/**
 * The validator's own Prometheus series (docs/metrics.md), beside the kit's HTTP histogram,
 * rate-limit refusals and process metrics. Counters count what THIS node did since it started
 * (the persisted counters of GET /admin/metrics are the network's totals in a cluster); gauges
 * are read from memory at scrape time. Nothing here runs on a request's path but the storage
 * timing, and only while the metrics are served.
 */
export interface ValidatorSeries {
  readonly ctx: ValidatorContext;
  readonly hexchain: { info(): { difficulty: bigint; occupied: number } };
  readonly events: SseHub;
  readonly cluster: Cluster;
}

const KINDS: readonly ResultKind[] = ['proof', 'block', 'share'];

export function registerValidatorSeries(metrics: ServiceMetrics, deps: ValidatorSeries): void {
  const { ctx, hexchain, events, cluster } = deps;
  const counts = () => ctx.metrics.processCounts();
  metrics.gaugeFrom(
    'tensormine_validator_node_info',
    'This node: always 1, labelled with its node id and whether it shares its database with other nodes',
    () => [[{ node_id: ctx.nodeId, mode: cluster.enabled ? 'cluster' : 'single' }, 1]],
    ['node_id', 'mode'],
  );
  metrics.counterFrom(
    'tensormine_validator_accepted_total',
    'Results this node accepted, by kind: proof (v4.0), block (v4.1 hexchain), share (pool)',
    () => KINDS.map((kind) => [{ kind }, counts().accepted[kind]] as const),
    ['kind'],
  );
  metrics.counterFrom(
    'tensormine_validator_rejected_total',
    'Results this node refused, by kind and reason (the error code of docs/errors.md; share_stale for stale shares)',
    () =>
      [...counts().rejected].map(([key, n]) => {
        const [kind, reason] = key.split(' ') as [string, string];
        return [{ kind, reason }, n] as const;
      }),
    ['kind', 'reason'],
  );
  metrics.counterFrom(
    'tensormine_validator_challenges_issued_total',
    'Challenges this node issued, by kind: tensor (v4.0) or hexchain (v4.1)',
    () => Object.entries(counts().challengesIssued).map(([kind, n]) => [{ kind }, n] as const),
    ['kind'],
  );
  metrics.gaugeFrom(
    'tensormine_validator_hexchain_difficulty_hashes',
    'The hexchain difficulty in force: expected hashes per block',
    () => Number(hexchain.info().difficulty),
  );
  metrics.gaugeFrom(
    'tensormine_validator_tensor_difficulty_level',
    'The v4.0 difficulty level of new challenges',
    () => ctx.runtime.difficulty,
  );
  metrics.gaugeFrom(
    'tensormine_validator_hexchain_blocks',
    'Blocks in the lattice (occupied cells, the genesis cell included)',
    () => hexchain.info().occupied,
  );
  metrics.gaugeFrom(
    'tensormine_validator_event_stream_readers',
    'Open GET /api/hexchain/events streams',
    () => events.stats().subscribers,
  );
  metrics.counterFrom(
    'tensormine_validator_event_stream_dropped_readers_total',
    'Event-stream readers dropped for reading too slowly',
    () => events.stats().dropped,
  );
  metrics.counterFrom(
    'tensormine_validator_event_stream_events_total',
    'Events published on the event stream',
    () => events.stats().published,
  );
}

/**
 * The storage with its transactions counted and timed (`tensormine_validator_storage_*`): a
 * PostgreSQL transaction that lost a serialization conflict runs its callback again, and each
 * extra run is a re-run. Every other member is the storage's own.
 */
export function instrumentStorage(storage: Storage, metrics: ServiceMetrics): Storage {
  const total = metrics.counter({
    name: 'tensormine_validator_storage_transactions_total',
    help: 'Storage transactions, by kind (write: transaction, read: consistent read) and outcome (committed, failed)',
    labelNames: ['kind', 'outcome'],
  });
  const reruns = metrics.counter({
    name: 'tensormine_validator_storage_transaction_reruns_total',
    help: 'Extra runs of transaction callbacks after a serialization conflict or a connection lost before COMMIT (PostgreSQL)',
  });
  const duration = metrics.histogram({
    name: 'tensormine_validator_storage_transaction_duration_seconds',
    help: 'Time from the start of a storage transaction to its outcome, re-runs and waits for a connection included, by kind',
    labelNames: ['kind'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  for (const kind of ['write', 'read']) {
    for (const outcome of ['committed', 'failed']) total.inc({ kind, outcome }, 0);
  }
  const outcomes = {
    write: { committed: total.labels('write', 'committed'), failed: total.labels('write', 'failed') },
    read: { committed: total.labels('read', 'committed'), failed: total.labels('read', 'failed') },
  };
  const timers = { write: duration.labels('write'), read: duration.labels('read') };
  const run = async <T>(
    kind: 'write' | 'read',
    call: (fn: Parameters<Storage['transaction']>[0]) => Promise<T>,
    fn: Parameters<Storage['transaction']>[0],
  ): Promise<T> => {
    const start = process.hrtime.bigint();
    let runs = 0;
    try {
      const value = await call((tx) => {
        runs++;
        return fn(tx);
      });
      outcomes[kind].committed.inc();
      return value;
    } catch (error) {
      outcomes[kind].failed.inc();
      throw error;
    } finally {
      if (runs > 1) reruns.inc(runs - 1);
      timers[kind].observe(Number(process.hrtime.bigint() - start) / 1e9);
    }
  };
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'transaction') {
        return <T>(fn: Parameters<Storage['transaction']>[0]) =>
          run<T>('write', (f) => target.transaction(f) as Promise<T>, fn);
      }
      if (property === 'read') {
        return <T>(fn: Parameters<Storage['read']>[0]) =>
          run<T>('read', (f) => target.read(f) as Promise<T>, fn);
      }
      const value = Reflect.get(target, property, target);
      // Methods run on the storage itself (its private fields are not the proxy's).
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
