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
 * stakes and ledger. `miner mine --local --threads 1` runs on a new HOME each time (a new key and
 * data directory, as the CLI's tests start it) until its first accepted result, then gets
 * SIGTERM: its CPU is the start of a miner with its validator in process (the native kernels
 * built once, by the warm-up, in the bench's cache). BENCH_ROUNDS (default 7) rounds; about 4
 * minutes on 2 quiet cores.
 *
 * Needs a current build (`npm run build`; `npm install` makes one): with TENSORMINE_MINER_SOURCE=0
 * the bin refuses a stale one, so the bench never compares the sources with themselves.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
/** The `mine --local` case's arguments (runMine starts it). */
const MINE = ['mine', '--local', '--threads', '1'];

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

const FIRST_RESULT = /accepted \(1\/0\)/;
const MINE_TIMEOUT_MS = 120_000;

/**
 * `miner mine --local --threads 1` under /usr/bin/time on a new HOME until its first accepted
 * result, then SIGTERM to the miner (time's child): CPU and wall to its clean exit.
 */
function runMine(variant: Variant): Promise<Sample> {
  const { NODE_COMPILE_CACHE: _, ...inherited } = process.env;
  const home = mkdtempSync(join(tmpdir(), 'tensormine-start-bench-home-'));
  const env = {
    ...inherited,
    ...variant.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: cacheHome,
    NO_COLOR: '1',
  };
  const args = [variant.bin, 'mine', '--local', '--threads', '1'];
  return new Promise((resolve, reject) => {
    const child = spawn(TIME, ['-f', 'TIME %e %U %S', process.execPath, ...args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      // The miner is time's only child.
      const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/);
      for (const pid of kids.filter(Boolean)) process.kill(Number(pid), 'SIGTERM');
    };
    const timer = setTimeout(() => child.kill('SIGKILL'), MINE_TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (FIRST_RESULT.test(stdout)) stop();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('close', () => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      const line = /TIME (\S+) (\S+) (\S+)\s*$/.exec(stderr);
      if (!stopped || line === null) {
        reject(new Error(`${variant.name}: miner mine --local gave no result: ${stderr.slice(-500)}`));
        return;
      }
      resolve({ wallS: Number(line[1]), cpuS: Number(line[2]) + Number(line[3]) });
    });
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
      { name: 'miner mine --local --threads 1 (to its first accepted result)', args: MINE },
    ];
    const once = (args: string[], variant: Variant) =>
      args === MINE ? runMine(variant) : run(args, variant);
    // samples[case][variant]
    const samples = cases.map(() => VARIANTS.map((): Sample[] => []));
    // One warm-up of each (the page cache, tsx's cache, the compile cache), then rounds that
    // alternate the order of the variants.
    for (const c of cases) for (const v of VARIANTS) await once(c.args, v);
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...VARIANTS.keys()];
      if (round % 2 === 1) order.reverse();
      for (const [ci, c] of cases.entries()) {
        for (const vi of order) samples[ci]![vi]!.push(await once(c.args, VARIANTS[vi]!));
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
