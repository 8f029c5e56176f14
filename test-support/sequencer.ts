import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order test files start in: the files known to be long (LONG_MS or more) first, longest
 * first across all projects, so that they run beside the many short ones instead of alone at the
 * end; then the rest project by project (the project with the most time left first; in a project,
 * the longest first, then the unknown, larger first), so that the projects whose files share
 * workers (`isolate: false`) really share them. vitest keeps a finished worker for the next file
 * only when the next file in its queue is of the same project: with the files of all projects
 * interleaved by duration, about four in five files started a worker of their own (a new process,
 * every module loaded again); project by project, a worker runs file after file of its project.
 * vitest's own order goes project by project (alphabetically: the validator's long files came
 * last), then by the durations of the previous run in its cache.
 *
 * Durations come from vitest's cache (the previous run here) and, for a run without it (a fresh
 * clone, CI), from test-support/test-durations.json: every file's duration in a whole run on a
 * quiet 2-core machine (a fresh clone's first `npm test`), in seconds, written by `npm run
 * test:durations` (scripts/test-durations.mjs) from such a run's cache. Only their order matters;
 * a file missing there (new since) starts after the known long ones, in its project. Failed files
 * of the previous run go first.
 */
const RECORDED_S: Readonly<Record<string, number>> = JSON.parse(
  readFileSync(join(import.meta.dirname, 'test-durations.json'), 'utf8'),
);

/** A file known to take this long starts before the short files, whatever its project. */
export const LONG_MS = 15_000;

interface Known {
  readonly failed: boolean;
  readonly ms: number | undefined;
}

/** Longest first; a known duration before the unknown; among the unknown, the given order. */
function byDuration(keys: Map<TestSpecification, Known>) {
  return (a: TestSpecification, b: TestSpecification): number => {
    const ma = keys.get(a)!.ms;
    const mb = keys.get(b)!.ms;
    if (ma === undefined || mb === undefined) return ma === undefined ? (mb === undefined ? 0 : 1) : -1;
    return mb - ma;
  };
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // The base order first (it knows sizes and the cache), then stable sorts by duration.
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const known = (spec: TestSpecification): Known => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      const recorded = RECORDED_S[relative(root, spec.moduleId).split('\\').join('/')];
      return {
        failed: cached?.failed ?? false,
        ms: cached?.duration ?? (recorded === undefined ? undefined : recorded * 1000),
      };
    };
    const keys = new Map(base.map((spec) => [spec, known(spec)]));
    return orderFiles(base, keys);
  }
}

/** The order above, of `base` (vitest's order) with what is known of each file. */
function orderFiles(
  base: readonly TestSpecification[],
  keys: Map<TestSpecification, Known>,
): TestSpecification[] {
  const longest = byDuration(keys);
  const first = base.filter((spec) => {
    const { failed, ms } = keys.get(spec)!;
    return failed || (ms !== undefined && ms >= LONG_MS);
  });
  const failedFirst = (a: TestSpecification, b: TestSpecification) =>
    Number(keys.get(b)!.failed) - Number(keys.get(a)!.failed);
  first.sort((a, b) => failedFirst(a, b) || longest(a, b));
  const head = new Set(first);
  const projects = new Map<string, TestSpecification[]>();
  for (const spec of base) {
    if (head.has(spec)) continue;
    const name = spec.project.name;
    const group = projects.get(name) ?? [];
    projects.set(name, group);
    group.push(spec);
  }
  const total = (group: readonly TestSpecification[]) =>
    group.reduce((sum, spec) => sum + (keys.get(spec)!.ms ?? 0), 0);
  const groups = [...projects.values()].map((group) => group.sort(longest));
  groups.sort((a, b) => total(b) - total(a) || b.length - a.length);
  return [...first, ...groups.flat()];
}
