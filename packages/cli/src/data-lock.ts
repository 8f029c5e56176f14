import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { processAlive } from '@tensormine/service-kit/npm-signals';
import { CliError } from './errors.js';

/**
 * An advisory lock file (`<what>.lock`: the holder's pid, start time and command line), taken
 * by `miner mine` for its journal and, with --local, for the local validator's data, so that
 * two miners never share them unknowingly (two compactions of one journal lose entries). A
 * lock whose process is gone (a crash, kill -9) is taken over. The second miner stops with an
 * error naming the process that holds the lock.
 */
export interface DataLock {
  readonly path: string;
  release(): Promise<void>;
}

interface Holder {
  readonly pid: number;
  readonly startedAt: string;
  readonly command: string;
}

/**
 * Takes the lock `path`, describing the locked thing as `what` in the error.
 * @throws CliError `usage` when a live process holds it.
 */
export async function takeLock(path: string, what: string, hint: string): Promise<DataLock> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const me: Holder = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    command: ['miner', ...process.argv.slice(2)].join(' '),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const file = await open(path, 'wx', 0o600);
      try {
        await file.writeFile(`${JSON.stringify(me)}\n`);
      } finally {
        await file.close();
      }
      return {
        path,
        async release() {
          // Only our own lock (a lock taken over after we were presumed dead is not ours).
          const holder = await readHolder(path);
          if (holder?.pid === process.pid) await rm(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await readHolder(path);
      if (holder !== undefined && holder.pid !== process.pid && processAlive(holder.pid)) {
        throw new CliError(
          'usage',
          `${what} is in use by another miner: pid ${holder.pid} (${holder.command}), running since ${holder.startedAt}`,
          [hint, `the lock is ${path}`],
        );
      }
      // A stale lock (its process is gone) or an unreadable one: take it over.
      await rm(path, { force: true });
    }
  }
  throw new CliError('failure', `could not take the lock ${path}`);
}

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const value = JSON.parse(await readFile(path, 'utf8')) as Partial<Holder>;
    return typeof value.pid === 'number'
      ? {
          pid: value.pid,
          startedAt: String(value.startedAt ?? '?'),
          command: String(value.command ?? 'miner'),
        }
      : undefined;
  } catch {
    return undefined;
  }
}
