import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The order test files start in: the longest first, across all projects, so that the long ones
 * (simulations, real processes one after the other) run beside the many short ones instead of
 * alone at the end. vitest's own order goes project by project (alphabetically: the validator's
 * long files came last), then by the durations of the previous run in its cache.
 *
 * Durations come from vitest's cache (the previous run here) and, for a run without it (a fresh
 * clone, CI), from the hints below: the files that took longest, in seconds on a quiet 2-core
 * machine (only their order matters). A file in neither is sorted among the unknown by size,
 * larger first, after every file with a duration. Failed files of the previous run go first.
 */
const HINTS_S: Readonly<Record<string, number>> = {
  // The whole suite on a fresh clone, quiet 2-core machine (main 3ad08b5, inside .ci/run), except
  // signals.test.ts: estimated since its miners stopped compiling the native kernels on each start;
  // validator-cluster, validator-ha and economy-crash: scaled by the CPU their validator processes
  // saved when they started from the build (0.59x and 0.64x of the files' CPU, docs/benchmarks.md).
  'packages/validator/test/pool-sim.test.ts': 115,
  'packages/cli/test/signals.test.ts': 100,
  'packages/cli/test/docs-chains.test.ts': 77,
  'packages/client/test/validator-ha.test.ts': 72,
  'packages/cli/test/mine.test.ts': 71,
  'packages/terminal/test/oauth-browser.test.ts': 53,
  'packages/cli/test/pty.test.ts': 40,
  'packages/serial/test/e2e.visibility.pty.test.ts': 37,
  'packages/miner/test/native.test.ts': 35,
  'packages/client/test/validator-cluster.test.ts': 34,
  'packages/validator/test/store-postgres.test.ts': 34,
  'packages/cli/test/tui.test.tsx': 33,
  'packages/validator/test/economy-model.test.ts': 30,
  'packages/miner/test/engine.test.ts': 25,
  'packages/serial/test/e2e.pty.test.ts': 24,
  'firmware-sim/test/tm-sim.test.ts': 20,
  'packages/status-proxy/test/dashboard.browser.test.ts': 18,
  'packages/cli/test/serial.pty.test.ts': 15,
  'packages/validator/test/pool-lifecycle.test.ts': 15,
  'packages/validator/test/store-sqlite.test.ts': 15,
  'packages/validator/test/mining.test.ts': 14,
  'packages/validator/test/economy-crash.test.ts': 13,
  'packages/hub/test/hub.test.ts': 13,
  'packages/validator/test/hexchain-persistence.test.ts': 12,
};

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // The base order first (it knows sizes and the cache), then a stable sort by duration.
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const known = (spec: TestSpecification): { failed: boolean; ms: number | undefined } => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec);
      const hint = HINTS_S[relative(root, spec.moduleId).split('\\').join('/')];
      return {
        failed: cached?.failed ?? false,
        ms: cached?.duration ?? (hint === undefined ? undefined : hint * 1000),
      };
    };
    const keys = new Map(base.map((spec) => [spec, known(spec)]));
    return [...base].sort((a, b) => {
      const ka = keys.get(a)!;
      const kb = keys.get(b)!;
      if (ka.failed !== kb.failed) return ka.failed ? -1 : 1;
      if (ka.ms === undefined || kb.ms === undefined) {
        // a known duration before the unknown; among the unknown, the base order (size)
        return ka.ms === undefined ? (kb.ms === undefined ? 0 : 1) : -1;
      }
      return kb.ms - ka.ms;
    });
  }
}
