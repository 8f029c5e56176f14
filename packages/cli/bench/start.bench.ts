/**
 * `npm run bench:start -w @tensormine/cli`: how long `miner --version`, `miner --help` and
 * `miner wallet` take, side by side (alternated rounds, medians with their ranges), started as
 * `npx miner` starts them (bin/miner.js):
 *   - from the sources through tsx (TENSORMINE_MINER_SOURCE=1: what every start cost before
 *     `npm install` built the miner);
 *   - BENCH_BASELINE=<checkout> (optional): another checkout's build, e.g. the previous release's
 *     (`git worktree add ../base <commit>`, `npm ci` there), for a before/after of a change;
 *   - the build without Node's compile cache (NODE_DISABLE_COMPILE_CACHE=1): what bundling
 *     TypeBox and undici gave on its own;
 *   - the build (TENSORMINE_MINER_SOURCE=0), as users run it: with the compile cache, which the
 *     first (warm-up) start fills; the bench gives it a cache directory of its own.
 * CPU is the child's user + system time as /usr/bin/time reports it (Linux); wall is the time to
 * its exit. `miner wallet` asks an in-process validator on the loopback for a key's balances,
 * stakes and ledger. BENCH_ROUNDS (default 7) rounds; about 2 minutes on 2 quiet cores.
 *
 * Needs a current build (`npm run build`; `npm install` makes one): with TENSORMINE_MINER_SOURCE=0
 * the bin refuses a stale one, so the bench never compares the sources with themselves.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createValidator } from '@tensormine/validator';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const bin = join(import.meta.dirname, '..', 'bin', 'miner.js');
const BASELINE = process.env.BENCH_BASELINE;
const cacheHome = mkdtempSync(join(tmpdir(), 'tensormine-start-bench-'));

interface Variant {
  readonly name: string;
  readonly bin: string;
  readonly env: Readonly<Record<string, string>>;
}

const VARIANTS: readonly Variant[] = [
  { name: 'sources (tsx)', bin, env: { TENSORMINE_MINER_SOURCE: '1' } },
  ...(BASELINE === undefined
    ? []
    : [
        {
          name: 'baseline build',
          bin: join(BASELINE, 'packages', 'cli', 'bin', 'miner.js'),
          env: { TENSORMINE_MINER_SOURCE: '0' },
        },
      ]),
  {
    name: 'build, no compile cache',
    bin,
    env: { TENSORMINE_MINER_SOURCE: '0', NODE_DISABLE_COMPILE_CACHE: '1' },
  },
  { name: 'build', bin, env: { TENSORMINE_MINER_SOURCE: '0' } },
];
const TIME = '/usr/bin/time';
const PUBKEY = 'ab'.repeat(32);

interface Sample {
  cpuS: number;
  wallS: number;
}

/** Runs the miner once under /usr/bin/time, without blocking this process (its validator answers). */
function run(args: string[], variant: Variant): Promise<Sample> {
  const { NODE_COMPILE_CACHE: _, ...inherited } = process.env;
  const env = { ...inherited, ...variant.env, XDG_CACHE_HOME: cacheHome, NO_COLOR: '1' };
  return new Promise((resolve, reject) => {
    execFile(
      TIME,
      ['-f', 'TIME %e %U %S', process.execPath, variant.bin, ...args],
      { env },
      (error, _stdout, stderr) => {
        const line = /TIME (\S+) (\S+) (\S+)\s*$/.exec(stderr);
        if (error || line === null) {
          reject(new Error(`${variant.name}: miner ${args.join(' ')} failed: ${stderr.slice(-500)}`));
          return;
        }
        resolve({ wallS: Number(line[1]), cpuS: Number(line[2]) + Number(line[3]) });
      },
    );
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const range = (xs: number[], digits: number) =>
  `${Math.min(...xs).toFixed(digits)} – ${Math.max(...xs).toFixed(digits)}`;

async function main(): Promise<void> {
  if (!existsSync(TIME)) throw new Error(`${TIME} is needed (Debian: apt-get install time)`);
  const validator = await createValidator({ dataDir: ':memory:', logger: false });
  const url = await validator.listen({ host: '127.0.0.1', port: 0 });
  try {
    const cases = [
      { name: 'miner --version', args: ['--version'] },
      { name: 'miner --help', args: ['--help'] },
      { name: 'miner wallet', args: ['wallet', '--pubkey', PUBKEY, '--url', url] },
    ];
    // samples[case][variant]
    const samples = cases.map(() => VARIANTS.map((): Sample[] => []));
    // One warm-up of each (the page cache, tsx's cache, the compile cache), then rounds that
    // alternate the order of the variants.
    for (const c of cases) for (const v of VARIANTS) await run(c.args, v);
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...VARIANTS.keys()];
      if (round % 2 === 1) order.reverse();
      for (const [ci, c] of cases.entries()) {
        for (const vi of order) samples[ci]![vi]!.push(await run(c.args, VARIANTS[vi]!));
      }
    }
    const cpu = (xs: Sample[]) => xs.map((x) => x.cpuS);
    const wall = (xs: Sample[]) => xs.map((x) => x.wallS);
    const cell = (xs: number[]) => `${median(xs).toFixed(2)} s (${range(xs, 2)})`;
    console.log(
      `${ROUNDS} alternated rounds, Node ${process.versions.node}, load ${loadavg()[0]!.toFixed(1)}`,
    );
    // The build against the sources, and against the baseline build when there is one.
    const built = VARIANTS.length - 1;
    const versus = BASELINE === undefined ? [0] : [0, 1];
    console.log(
      `| command | ${VARIANTS.map((v) => `${v.name}: CPU`).join(' | ')} | ${versus.map((i) => `build / ${VARIANTS[i]!.name}: CPU`).join(' | ')} | ${VARIANTS.map((v) => `${v.name}: wall`).join(' | ')} |`,
    );
    console.log(`|---|${'---|'.repeat(2 * VARIANTS.length + versus.length)}`);
    for (const [ci, c] of cases.entries()) {
      const s = samples[ci]!;
      const ratio = (i: number) => {
        const rs = cpu(s[built]!).map((b, k) => b / cpu(s[i]!)[k]!);
        return `**${median(rs).toFixed(2)}x** (${range(rs, 2)})`;
      };
      console.log(
        `| \`${c.name}\` | ${s.map((x) => cell(cpu(x))).join(' | ')} | ${versus.map(ratio).join(' | ')} | ${s.map((x) => `${median(wall(x)).toFixed(2)} s`).join(' | ')} |`,
      );
    }
  } finally {
    await validator.close();
    rmSync(cacheHome, { recursive: true, force: true });
  }
}

await main();
