/**
 * `npm run bench:start -w @tensormine/cli`: how long `miner --version`, `miner --help` and
 * `miner wallet` take, from the sources through tsx (what every start cost before `npm install`
 * built the miner) against now: the built files (bin/miner.js runs them while they are current;
 * `--version` alone is answered by the bin from package.json), side by side:
 * alternated rounds, medians with their ranges. CPU is the child's user + system time as
 * /usr/bin/time reports it (Linux); wall is the time to its exit. `miner wallet` asks an
 * in-process validator on the loopback for a key's balances, stakes and ledger.
 *
 * Needs a current build (`npm run build`; `npm install` makes one): with TENSORMINE_MINER_SOURCE=0
 * the bin refuses a stale one, so the bench never compares the sources with themselves.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createValidator } from '@tensormine/validator';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const bin = join(import.meta.dirname, '..', 'bin', 'miner.js');
const TIME = '/usr/bin/time';
const PUBKEY = 'ab'.repeat(32);

interface Sample {
  cpuS: number;
  wallS: number;
}

/** Runs the miner once under /usr/bin/time, without blocking this process (its validator answers). */
function run(args: string[], source: boolean): Promise<Sample> {
  const env = { ...process.env, TENSORMINE_MINER_SOURCE: source ? '1' : '0', NO_COLOR: '1' };
  return new Promise((resolve, reject) => {
    execFile(
      TIME,
      ['-f', 'TIME %e %U %S', process.execPath, bin, ...args],
      { env },
      (error, _stdout, stderr) => {
        const line = /TIME (\S+) (\S+) (\S+)\s*$/.exec(stderr);
        if (error || line === null) {
          reject(new Error(`miner ${args.join(' ')} failed: ${stderr.slice(-500)}`));
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
    const samples = new Map<string, { source: Sample[]; built: Sample[] }>();
    for (const c of cases) samples.set(c.name, { source: [], built: [] });
    // One warm-up of each (the page cache, tsx's own cache), then alternated rounds.
    for (const c of cases) {
      await run(c.args, true);
      await run(c.args, false);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of cases) {
        const s = samples.get(c.name)!;
        const sourceFirst = round % 2 === 0;
        if (sourceFirst) s.source.push(await run(c.args, true));
        s.built.push(await run(c.args, false));
        if (!sourceFirst) s.source.push(await run(c.args, true));
      }
    }
    console.log(`${ROUNDS} alternated rounds, Node ${process.versions.node}`);
    console.log(
      '| command | before, from the sources (tsx): CPU | now, built: CPU | CPU, now / before | before: wall | now: wall | wall, now / before |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const c of cases) {
      const s = samples.get(c.name)!;
      const cpu = (xs: Sample[]) => xs.map((x) => x.cpuS);
      const wall = (xs: Sample[]) => xs.map((x) => x.wallS);
      const ratios = (f: (xs: Sample[]) => number[]) =>
        f(s.built).map((b, i) => b / (f(s.source)[i] as number));
      console.log(
        `| \`${c.name}\` | ${median(cpu(s.source)).toFixed(2)} s (${range(cpu(s.source), 2)}) | ` +
          `${median(cpu(s.built)).toFixed(2)} s (${range(cpu(s.built), 2)}) | ` +
          `**${median(ratios(cpu)).toFixed(2)}x** (${range(ratios(cpu), 2)}) | ` +
          `${median(wall(s.source)).toFixed(2)} s | ${median(wall(s.built)).toFixed(2)} s | ` +
          `${median(ratios(wall)).toFixed(2)}x |`,
      );
    }
  } finally {
    await validator.close();
  }
}

await main();
