/**
 * Pinning the scaling bench's hashing threads to CPUs (scaling.ts), so that in every window the
 * engine's workers and the bare threads run on the same CPUs: Linux's sched_setaffinity on a
 * thread id, called through koffi (the FFI the native kernels already load), and the thread
 * ids of this process by name from /proc/self/task.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The thread ids of this process whose name (/proc/self/task/TID/comm) starts with `prefix`. */
export function threadIds(prefix: string): number[] {
  const tids: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').startsWith(prefix)) tids.push(Number(tid));
    } catch {
      // the thread ended in between
    }
  }
  return tids.sort((a, b) => a - b);
}

/** The CPUs this process may run on (/proc/self/status `Cpus_allowed_list`, e.g. `0-1,4`). */
export function allowedCpus(): number[] {
  const line = readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Cpus_allowed_list:'));
  if (line === undefined) return [];
  const cpus: number[] = [];
  for (const part of line
    .slice(line.indexOf(':') + 1)
    .trim()
    .split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a!; c <= (b ?? a!); c++) cpus.push(c);
  }
  return cpus;
}

export interface Affinity {
  /** Runs thread `tid` on `cpu` only. */
  pin(tid: number, cpu: number): void;
}

interface Koffi {
  load(path: string): { func(definition: string): unknown };
}

/** sched_setaffinity through koffi, or why it cannot be used here. */
export function threadAffinity(): Affinity | { readonly unavailable: string } {
  if (process.platform !== 'linux')
    return { unavailable: `sched_setaffinity is Linux's (${process.platform})` };
  try {
    const koffi = createRequire(import.meta.url)('koffi') as Koffi;
    const setAffinity = koffi
      .load('libc.so.6')
      .func('int sched_setaffinity(int pid, size_t size, const uint8_t *mask)') as (
      pid: number,
      size: number,
      mask: Uint8Array,
    ) => number;
    return {
      pin(tid, cpu) {
        const mask = new Uint8Array(128); // a cpu_set_t: 1024 CPUs
        mask[cpu >> 3] = 1 << (cpu & 7);
        if (setAffinity(tid, mask.length, mask) !== 0) {
          throw new Error(`sched_setaffinity: thread ${tid} to CPU ${cpu} failed`);
        }
      },
    };
  } catch (error) {
    return { unavailable: `sched_setaffinity: ${(error as Error).message}` };
  }
}
