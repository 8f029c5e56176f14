/**
 * Status proxy benchmarks, side by side in one run:
 * 1. cached GET /api/hexchain/status through the proxy against the validator directly
 *    (each in its own child process, autocannon here), A B five times;
 * 2. the dashboard's time to first render of a 10,000-block lattice in Debian's Chromium, and
 *    the time of one full redraw (a zoom step) at that size.
 *
 *   npm run bench -w @tensormine/status-proxy      (writes its section of docs/benchmarks.md)
 */
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyPairFromSecret, taggedHash, utf8 } from '@tensormine/protocol';
import { createValidator } from '@tensormine/validator';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { buildLattice, httpCall, type JsonCall } from '../../validator/bench/lattice.js';
import {
  alternateReads,
  fmt,
  median,
  type ReadTarget,
  readTable,
  runBench,
  startChild,
  stopAll,
  table,
} from '../../validator/bench/support.js';
import { launchChromium } from '../test/browser.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const COMMAND = 'npm run bench -w @tensormine/status-proxy';
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
const MINER = keyPairFromSecret(taggedHash('bench/status-proxy', utf8('miner')));
const UNLIMITED = ['--rate-limit-per-second', '1000000', '--rate-limit-burst', '1000000'];
const PROXY = '../status-proxy/src/bin.ts'; // relative to packages/validator (startChild's cwd)
/** The bench's load comes from one address: the proxy's per-address limits are lifted. */
const PROXY_UNLIMITED = ['--rate-limit-per-second', '1000000', '--rate-limit-burst', '1000000'];
const LATTICE_BLOCKS = 10_000;

async function proxiedStatus(): Promise<string> {
  const validator = await startChild(
    'validator',
    'src/bin.ts',
    ['start', '--data-dir', ':memory:', '--port', '0', '--log-level', 'silent', ...UNLIMITED],
    { TENSORMINE_ADMIN_TOKEN: ADMIN_TOKEN },
  );
  await buildLattice(httpCall(validator.url), MINER, 300, ADMIN_TOKEN);
  const proxy = await startChild('status proxy', PROXY, [
    ...PROXY_UNLIMITED,
    '--validator',
    validator.url,
    '--port',
    '0',
    '--cache-ms',
    '1000',
  ]);
  const targets: ReadTarget[] = [
    {
      name: 'status proxy GET /api/hexchain/status (cache 1 s)',
      child: proxy,
      path: '/api/hexchain/status',
      versus: 1,
    },
    { name: 'validator GET /api/hexchain/status', child: validator, path: '/api/hexchain/status' },
  ];
  const samples = await alternateReads(targets, {
    rounds: 5,
    seconds: 3,
    connections: 100,
    warmupSeconds: 3,
  });
  await stopAll();
  return readTable(targets, samples);
}

async function firstRender(): Promise<{ table: string; buildS: number }> {
  const validator = await createValidator({
    dataDir: ':memory:',
    adminToken: ADMIN_TOKEN,
    rateLimitPerSecond: 1_000_000,
    rateLimitBurst: 1_000_000,
    keyRateLimitPerSecond: 1_000_000,
    keyRateLimitBurst: 1_000_000,
    logger: false,
  });
  try {
    const call: JsonCall = async (method, url, body, headers = {}) => {
      const res = await validator.inject({
        method,
        url,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { payload: body }),
      });
      return { status: res.statusCode, body: res.json() };
    };
    const started = performance.now();
    await buildLattice(call, MINER, LATTICE_BLOCKS, ADMIN_TOKEN);
    const buildS = (performance.now() - started) / 1000;
    console.log(`  built ${LATTICE_BLOCKS} blocks in ${fmt(buildS, 1)} s`);
    const url = await validator.listen({ host: '127.0.0.1', port: 0 });
    const proxy = await startChild('status proxy', PROXY, [
      ...PROXY_UNLIMITED,
      '--validator',
      url,
      '--port',
      '0',
    ]);
    // The proxy has loaded the lattice once /api/dashboard/blocks answers.
    const total = (
      (await (await fetch(`${proxy.url}/api/dashboard/blocks?after=${LATTICE_BLOCKS}`)).json()) as {
        total: number;
      }
    ).total;
    if (total !== LATTICE_BLOCKS)
      throw new Error(`the proxy holds ${total} blocks, expected ${LATTICE_BLOCKS}`);
    const browser = await launchChromium();
    const rows: number[][] = [];
    try {
      for (let run = 0; run < 3; run++) {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        await page.goto(proxy.url);
        await page.waitForFunction(
          (n) =>
            window.tensormineDashboard?.cells() === n &&
            window.tensormineDashboard.metrics().firstRenderMs !== null,
          LATTICE_BLOCKS + 1,
          { timeout: 60_000 },
        );
        // No named functions inside: tsx would wrap them in a helper the page does not have.
        const m = await page.evaluate(() => {
          const d = window.tensormineDashboard;
          // Canvas 2D rasterizes lazily: reading a pixel back makes each frame complete.
          const ctx = (document.getElementById('lattice') as HTMLCanvasElement).getContext('2d')!;
          const frames: number[] = [];
          const renders: number[] = [];
          for (let i = 0; i < 25; i++) {
            const t0 = performance.now();
            d.zoom(i % 2 === 0 ? 1.25 : 0.8);
            if (i >= 20) {
              // The gesture ends: the full render.
              const t1 = performance.now();
              d.settle();
              ctx.getImageData(0, 0, 1, 1);
              renders.push(performance.now() - t1);
            } else {
              ctx.getImageData(0, 0, 1, 1);
              frames.push(performance.now() - t0);
            }
          }
          frames.sort((a, b) => a - b);
          renders.sort((a, b) => a - b);
          const metrics = d.metrics();
          return [
            metrics.snapshotMs ?? Number.NaN,
            metrics.firstRenderMs ?? Number.NaN,
            frames[10] ?? Number.NaN,
            renders[2] ?? Number.NaN,
          ];
        });
        rows.push(m);
        console.log(
          `  run ${run + 1}: snapshot ${fmt(m[0]!)} ms, first render ${fmt(m[1]!)} ms, zoom frame ${fmt(m[2]!, 1)} ms, full render ${fmt(m[3]!, 1)} ms`,
        );
        await page.close();
      }
    } finally {
      await browser.close();
      await stopAll();
    }
    const col = (i: number) => rows.map((r) => r[i]!);
    return {
      buildS,
      table: table(
        [
          'lattice',
          'columns loaded (ms after navigation)',
          'first render (ms after navigation)',
          'frame while zooming (ms)',
          'full render after the gesture (ms)',
          'runs: first render (ms)',
        ],
        [
          [
            `${fmt(LATTICE_BLOCKS)} blocks + genesis`,
            fmt(median(col(0))),
            `**${fmt(median(col(1)))}**`,
            fmt(median(col(2)), 1),
            fmt(median(col(3)), 1),
            col(1)
              .map((x) => fmt(x))
              .join(', '),
          ],
        ],
      ),
    };
  } finally {
    await validator.close();
  }
}

async function main(): Promise<void> {
  const startedAt = performance.now();
  const loadBefore = loadavg()[0]!.toFixed(1);
  console.log(`status proxy bench on ${machineLine()}`);
  console.log('1. cached GET /api/hexchain/status: proxy vs validator (100 connections, 3 s runs, A B x5)');
  const proxied = await proxiedStatus();
  console.log(proxied);
  console.log(`2. first render of a ${LATTICE_BLOCKS}-block lattice in Chromium`);
  const render = await firstRender();
  console.log(render.table);
  const seconds = (performance.now() - startedAt) / 1000;
  writeSection(
    DOC_PATH,
    'status-proxy',
    `## Status proxy and dashboard

Command: \`${COMMAND}\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${fmt(seconds)} s; load average ${loadBefore} at the start, ${loadavg()[0]!.toFixed(1)} at the end: other processes shared the 2 cores).

### 1. Cached GET /api/hexchain/status through the proxy

The validator (in memory, a lattice of 300 blocks) and the status proxy in front of it
(\`status-proxy --validator URL --cache-ms 1000\`) each run in a child process; autocannon (100
connections, 3 s runs after a 3 s warm-up each, alternated A B, B A, ... five times, medians; in
parentheses the lowest and highest ratio of a round) here. The proxy answers from its cache (the exact bytes, refreshed at most once a second or on a new block,
concurrent misses sharing one upstream request), so a thousand dashboards cost the validator
about one status request per second.

${proxied}

### 2. Dashboard: first render of a ${fmt(LATTICE_BLOCKS)}-block lattice

A validator in the bench process with ${fmt(LATTICE_BLOCKS)} mined blocks (built in ${fmt(render.buildS)} s), the proxy in a
child process, the page opened 3 times in Debian's Chromium (headless, no GPU: software
rendering, 1280x900). "Columns loaded" is when GET /api/dashboard/blocks (every block in
columns) is parsed, "first render" when every cell is on the canvas, both in ms after the
navigation started (the animation frame after the draw). While the user pans or zooms, a frame
only moves and scales the rendered layer (one image copy, whatever the number of cells): "frame
while zooming" is one wheel step, median of 20; 150 ms after the gesture the lattice is
rendered again sharp from the cached Path2D per colour: "full render", median of 5. Both are
rasterized before the clock stops (a one-pixel read-back forces it); software rendering
(no GPU) is the worst case.

${render.table}
`,
  );
  console.log(`wrote the status-proxy section of ${DOC_PATH}`);
}

runBench(main);
