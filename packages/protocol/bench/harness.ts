import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

/**
 * A small side-by-side benchmark harness. Candidates are measured in interleaved rounds
 * (A, B, A, B, ...) so that a noisy neighbour on a shared machine slows all of them alike,
 * and each figure is the median over rounds. Report ratios, not absolute times.
 */
export interface Case {
  readonly name: string;
  /** Runs one operation; returns something so the work cannot be optimised away. */
  readonly run: () => unknown;
}

export interface Measured {
  readonly name: string;
  readonly opsPerSecond: number;
}

export function measure(cases: readonly Case[], { rounds = 7, roundMs = 150 } = {}): Measured[] {
  const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  let sink = 0;
  for (const c of cases) for (let i = 0; i < 3; i++) sink ^= Number(Boolean(c.run())); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      let ops = 0;
      const start = process.hrtime.bigint();
      const deadline = start + BigInt(roundMs) * 1_000_000n;
      let now = start;
      while (now < deadline) {
        for (let i = 0; i < 8; i++) sink ^= Number(Boolean(c.run()));
        ops += 8;
        now = process.hrtime.bigint();
      }
      samples.get(c.name)!.push((ops * 1e9) / Number(now - start));
    }
  }
  if (sink === 42) console.log('');
  return cases.map((c) => {
    const s = samples.get(c.name)!.sort((a, b) => a - b);
    return { name: c.name, opsPerSecond: s[Math.floor(s.length / 2)]! };
  });
}

export function formatRate(opsPerSecond: number): string {
  if (opsPerSecond >= 1e6) return `${(opsPerSecond / 1e6).toFixed(2)} M/s`;
  if (opsPerSecond >= 1e3) return `${(opsPerSecond / 1e3).toFixed(1)} k/s`;
  return `${opsPerSecond.toFixed(1)} /s`;
}

export function machineLine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const [one, five] = loadavg();
  // The machine is shared: how busy it was says how far the absolute figures are from quiet.
  return `${cpu}, ${cpus().length} cores, Node ${process.version}, load average ${one!.toFixed(1)} (1 min) / ${five!.toFixed(1)} (5 min) at the end of the run`;
}

/**
 * Replaces the section between `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->` of
 * docs/benchmarks.md (appending it when absent), so that each bench script owns its section.
 */
export function writeSection(docPath: string, name: string, body: string): void {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  let doc = '';
  try {
    doc = readFileSync(docPath, 'utf8');
  } catch {
    doc = '# Benchmarks\n';
  }
  const block = `${start}\n${body.trim()}\n${end}`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  doc =
    from >= 0 && to > from
      ? doc.slice(0, from) + block + doc.slice(to + end.length)
      : `${doc.trimEnd()}\n\n${block}\n`;
  writeFileSync(docPath, doc);
}
