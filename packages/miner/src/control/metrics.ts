import type { MinerConfig } from '@tensormine/protocol';
import type { ServiceMetrics } from '@tensormine/service-kit/metrics';
import { STALE_CODES } from '../miner/stats.js';
import type { MinerStats } from '../miner.js';
import type { ControlTarget } from './target.js';

/**
 * The miner's Prometheus series on its control API (GET /metrics; docs/metrics.md): read from
 * one snapshot of the miner per scrape, nothing on the mining path. Counters count the current
 * mining run (a restart starts them anew, which Prometheus' rate() and increase() handle).
 */
export function registerMinerSeries(metrics: ServiceMetrics, target: ControlTarget): void {
  let stats: MinerStats = target.stats();
  let config: MinerConfig = target.config();
  metrics.beforeScrape(() => {
    stats = target.stats();
    config = target.config();
  });
  const boards = () => stats.devices.flatMap((d) => d.units ?? []);
  const flag = (on: boolean) => (on ? 1 : 0);

  metrics.gaugeFrom(
    'tensormine_miner_hashrate_hashes_per_second',
    'Hashes per second (nonce iterations for v4.0) of each device over a window: 10s, 60s or 15m (absent until the window has data)',
    () =>
      stats.devices.flatMap((d) =>
        (['10s', '60s', '15m'] as const).flatMap((window) => {
          const v = d.hashrate.total[window];
          return v === undefined ? [] : [[{ device: d.id, window }, v] as const];
        }),
      ),
    ['device', 'window'],
  );
  metrics.counterFrom(
    'tensormine_miner_hashes_total',
    'Hashes each device computed in this mining run',
    () => stats.devices.map((d) => [{ device: d.id }, d.totalHashes] as const),
    ['device'],
  );
  metrics.counterFrom(
    'tensormine_miner_results_total',
    'Results of this mining run by outcome: accepted, rejected (for another reason than lateness), stale (too late: share_stale, challenge_expired, coordinate_occupied, or expired in the journal)',
    () => {
      const staleRejections = stats.rejectedReasons
        .filter((r) => STALE_CODES.has(r.code))
        .reduce((sum, r) => sum + r.count, 0);
      return [
        [{ outcome: 'accepted' }, stats.accepted],
        [{ outcome: 'rejected' }, stats.rejected - staleRejections],
        [{ outcome: 'stale' }, stats.stale],
      ];
    },
    ['outcome'],
  );
  metrics.counterFrom(
    'tensormine_miner_rejected_results_total',
    "Results the validators refused, by reason (the validator's error code, docs/errors.md)",
    () => stats.rejectedReasons.map((r) => [{ reason: r.code }, r.count] as const),
    ['reason'],
  );
  metrics.counterFrom(
    'tensormine_miner_device_results_total',
    'Results of each device in this mining run, by outcome: accepted or rejected',
    () =>
      stats.devices.flatMap((d) => [
        [{ device: d.id, outcome: 'accepted' }, d.accepted] as const,
        [{ device: d.id, outcome: 'rejected' }, d.rejected] as const,
      ]),
    ['device', 'outcome'],
  );
  metrics.gaugeFrom(
    'tensormine_miner_job_difficulty_hashes',
    'Expected hashes per result of the job being mined (a pooled job: per share); absent between jobs',
    () => (stats.job === undefined ? [] : [[{}, stats.job.difficulty]]),
  );
  metrics.gaugeFrom(
    'tensormine_miner_pool_share_difficulty_hashes',
    'Pooled mining: the share difficulty of the job being mined (expected hashes per share); absent when solo',
    () => (config.pool && stats.job !== undefined ? [[{}, stats.job.difficulty]] : []),
  );
  metrics.gaugeFrom(
    'tensormine_miner_best_difficulty',
    'The highest difficulty a result met in this run',
    () => (stats.bestDifficulty === undefined ? [] : [[{}, stats.bestDifficulty]]),
  );
  metrics.gaugeFrom('tensormine_miner_paused', '1 while mining is paused', () => flag(stats.paused));
  metrics.gaugeFrom('tensormine_miner_connected', '1 while work comes and the validator in use answers', () =>
    flag(stats.connected),
  );
  metrics.gaugeFrom(
    'tensormine_miner_journal_pending_results',
    'Results waiting in the journal for a validator',
    () => stats.journalSize,
  );
  metrics.gaugeFrom(
    'tensormine_miner_submission_latency_seconds',
    'Submission round trips: the last one and the average of this run',
    () => [
      ...(stats.lastLatencyMs === undefined ? [] : [[{ stat: 'last' }, stats.lastLatencyMs / 1000] as const]),
      ...(stats.averageLatencyMs === undefined
        ? []
        : [[{ stat: 'average' }, stats.averageLatencyMs / 1000] as const]),
    ],
    ['stat'],
  );
  metrics.gaugeFrom(
    'tensormine_miner_run_uptime_seconds',
    'Seconds since the mining run started',
    () => stats.uptimeSeconds,
  );
  metrics.gaugeFrom('tensormine_miner_cpu_threads', 'CPU worker threads (0 without the CPU)', () =>
    config.cpu ? config.threads : 0,
  );
  metrics.gaugeFrom(
    'tensormine_miner_cpu_intensity_ratio',
    'CPU duty cycle, in (0, 1]',
    () => config.intensity,
  );
  metrics.gaugeFrom(
    'tensormine_miner_cpu_kernel_info',
    'The CPU kernel: always 1, labelled with the setting and the kernel the workers run',
    () => (config.cpu ? [[{ setting: config.kernel, kernel: config.kernelInUse ?? 'none' }, 1]] : []),
    ['setting', 'kernel'],
  );
  // Board health (the serial fleet).
  metrics.gaugeFrom(
    'tensormine_miner_board_state',
    'Each board known to the fleet: 1 for its state (ok, idle, paused, no device, self-test failed, self-test, starting, stopped)',
    () => boards().map((b) => [{ board: b.id, state: b.state }, 1] as const),
    ['board', 'state'],
  );
  metrics.gaugeFrom(
    'tensormine_miner_board_hashrate_hashes_per_second',
    'Hashes per second of each board over 60 s (absent until it has data)',
    () =>
      boards().flatMap((b) => {
        const v = b.hashrate['60s'];
        return v === undefined ? [] : [[{ board: b.id }, v] as const];
      }),
    ['board'],
  );
  metrics.counterFrom(
    'tensormine_miner_board_results_total',
    'Results of each board, by outcome: accepted or rejected',
    () =>
      boards().flatMap((b) => [
        [{ board: b.id, outcome: 'accepted' }, b.accepted] as const,
        [{ board: b.id, outcome: 'rejected' }, b.rejected] as const,
      ]),
    ['board', 'outcome'],
  );
  const COUNTERS = [
    [
      'hardware_errors',
      'hardwareErrors',
      'Results the reference verifier rejected: the board computed wrongly',
    ],
    ['crc_errors', 'crcErrors', 'Frames dropped for a bad CRC'],
    ['resyncs', 'resyncs', 'Receiver resynchronisations'],
    ['retransmissions', 'retransmissions', 'Frames sent again (host and board)'],
    ['reboots', 'reboots', 'Board reboots seen'],
    ['link_losses', 'linkLosses', 'Times the link to the board was lost'],
  ] as const;
  for (const [name, field, help] of COUNTERS) {
    metrics.counterFrom(
      `tensormine_miner_board_${name}_total`,
      `${help}, per board`,
      () => boards().map((b) => [{ board: b.id }, b.counters[field]] as const),
      ['board'],
    );
  }
}
