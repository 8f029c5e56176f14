/**
 * A real Prometheus (Debian's, started here on a free port with a generated configuration)
 * scrapes a validator (its /metrics behind a token) and a running `miner mine` (its control
 * API's /metrics, open on the loopback) while blocks are mined. Then the miner is paused, and
 * the series Prometheus stored are the values the services report: the blocks the validator
 * accepted, the miner's accepted results and hashes (counters that hold still once paused,
 * compared exactly), and its hash rate, a gauge that moves with time: the miner is scraped
 * through a relay that keeps every answer, and each sample Prometheus stored is the value the
 * miner answered to that very scrape. Every exposition passes
 * `promtool check metrics`. The test waits for conditions (a scrape with the values), never
 * for a time.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  expectPromtoolClean,
  isSubsequence,
  recordingRelay,
  exposedValue as reported,
  startPrometheus,
} from '../../../test-support/prometheus.ts';
import { SLOW_TEST_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { waitFor as waitUntil } from '../../../test-support/wait.ts';
import { run } from '../src/index.js';
import { cleanup, tempHome, testIo, testKey, testValidator, waitFor } from './helpers.js';

const METRICS_TOKEN = 'prometheus-scrape-token-000001';
const API_TOKEN = 'miner-control-token-0000000001';

describe('Prometheus scrapes a validator and a miner', () => {
  test('finds the blocks accepted and the hash rate the services reported', {
    timeout: SLOW_TEST_TIMEOUT_MS,
  }, async () => {
    const { url } = await testValidator({ hexDifficulty: 4096n, metricsToken: METRICS_TOKEN });
    const { env } = await tempHome();
    await testKey(join(env.XDG_CONFIG_HOME!, 'tensormine', 'miner.key'), [url]);
    const io = testIo({ ...env, MINER_API_TOKEN: API_TOKEN });
    const done = run(['mine', '--threads', '1', '--url', url, '--api-port', '0'], io, {
      session: { retryDelayMs: 50 },
    });
    cleanup(async () => {
      io.controller.abort();
      await done;
    });
    const line = /control API and page on (http:\S+)\//;
    await waitFor(
      () => line.test(io.stdout.text),
      'the control API line',
      undefined,
      () => io.stdout.text + io.stderr.text,
    );
    const api = line.exec(io.stdout.text)![1]!;

    const scrapeValidator = async () => {
      const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(res.status).toBe(200);
      return res.text();
    };
    const scrapeMiner = async () => {
      const res = await fetch(`${api}/metrics`);
      expect(res.status).toBe(200);
      return res.text();
    };

    // The miner is scraped through a relay that keeps each answer it passed on.
    const relay = await recordingRelay(api);
    cleanup(() => relay.close());
    const prometheus = await startPrometheus([
      { job: 'validator', address: new URL(url).host, bearerToken: METRICS_TOKEN },
      { job: 'miner', address: relay.address },
    ]);
    cleanup(() => prometheus.close());

    // While blocks are mined: Prometheus has scraped both, and holds accepted blocks and a rate.
    const blocks = 'tensormine_validator_accepted_total{kind="block"}';
    const accepted = 'tensormine_miner_results_total{outcome="accepted"}';
    const rate = 'tensormine_miner_hashrate_hashes_per_second{device="cpu",window="10s"}';
    await waitUntil(async () => {
      const [b, a, r] = await Promise.all([
        prometheus.value(blocks),
        prometheus.value(accepted),
        prometheus.value(rate),
      ]);
      return (b ?? 0) > 0 && (a ?? 0) > 0 && (r ?? 0) > 0;
    }, 'accepted blocks and a hash rate in Prometheus');
    expect(await prometheus.health()).toEqual({ validator: 'up', miner: 'up' });

    // Paused, the counters hold still: Prometheus' latest samples are what the services say.
    const paused = await fetch(`${api}/api/pause`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_TOKEN}` },
    });
    expect(paused.status).toBe(200);
    const hashes = 'tensormine_miner_hashes_total{device="cpu"}';
    let last: Record<string, number | undefined> = {};
    await waitUntil(async () => {
      const [v, m] = await Promise.all([scrapeValidator(), scrapeMiner()]);
      const direct = {
        blocks: reported(v, blocks),
        accepted: reported(m, accepted),
        hashes: reported(m, hashes),
      };
      const stored = {
        blocks: await prometheus.value(blocks),
        accepted: await prometheus.value(accepted),
        hashes: await prometheus.value(hashes),
      };
      last = {
        ...direct,
        ...Object.fromEntries(Object.entries(stored).map(([k, x]) => [`prometheus ${k}`, x])),
      };
      // A block submitted just before the pause may be counted by the validator while its
      // answer is still on the way to the miner: wait for the miner to have every answer.
      return (
        direct.blocks !== undefined &&
        direct.accepted === direct.blocks &&
        direct.blocks === stored.blocks &&
        direct.accepted === stored.accepted &&
        direct.hashes === stored.hashes
      );
    }, 'the paused values in Prometheus', { context: () => JSON.stringify(last) });
    expect(last.blocks).toBeGreaterThan(0);
    // Every block this miner found was accepted by this validator, and nobody else mines there.
    expect(last.accepted).toBe(last.blocks);
    expect(last.hashes).toBeGreaterThan(0);
    // The hash rate moves with time: every sample Prometheus stored is the value the miner
    // answered to that scrape (the relay's record), in the same order, and mining showed a rate.
    const stored = await prometheus.samples(`${rate}[10m]`);
    const answered = relay.expositions
      .map((text) => reported(text, rate))
      .filter((v): v is number => v !== undefined);
    expect(stored.length).toBeGreaterThan(0);
    expect(Math.max(...stored)).toBeGreaterThan(0);
    expect(
      isSubsequence(stored, answered),
      `stored ${stored.join(', ')}; answered ${answered.join(', ')}`,
    ).toBe(true);

    // The Grafana dashboard's queries: Prometheus accepts each; those on what ran here find series.
    const dashboard = JSON.parse(
      await readFile(new URL('../../../contrib/grafana/tensormine.json', import.meta.url), 'utf8'),
    ) as { panels: { title: string; targets?: { expr: string }[] }[] };
    const queries = dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })),
    );
    expect(queries.length).toBeGreaterThan(15);
    const found: Record<string, number> = {};
    for (const { title, expr } of queries) {
      const query = expr
        .replaceAll('$job', '.*')
        .replaceAll('$instance', '.*')
        .replaceAll('$__rate_interval', '1m');
      found[title] = (found[title] ?? 0) + (await prometheus.count(query));
    }
    for (const title of [
      'Results accepted per second',
      'Hexchain difficulty',
      'Lattice size',
      'Requests per second, by route and status',
      'Hash rate per device',
      'Results per second',
      'Job and share difficulty',
    ]) {
      expect(found[title], title).toBeGreaterThan(0);
    }

    // What every endpoint exposes passes promtool's checks.
    await expectPromtoolClean(await scrapeValidator());
    await expectPromtoolClean(await scrapeMiner());

    io.controller.abort('test');
    expect(await done).toBe(0);
  });
});
