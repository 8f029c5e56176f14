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
  'packages/validator/test/pool-sim.test.ts': 90,
  // Not yet measured on a quiet machine: a Patroni cluster started, its primary killed twice.
  'packages/client/test/validator-ha.test.ts': 60,
  // Estimated: at a load of 40 it took as long as economy-model.test.ts (335 s against 317 s).
  'packages/miner/test/native.test.ts': 40,
  'packages/cli/test/signals.test.ts': 70,
  'packages/client/test/validator-cluster.test.ts': 60,
  'packages/validator/test/economy-model.test.ts': 40,
  'packages/miner/test/engine.test.ts': 35,
  'packages/serial/test/e2e.visibility.pty.test.ts': 35,
  'packages/validator/test/economy-crash.test.ts': 30,
  'packages/status-proxy/test/dashboard.browser.test.ts': 28,
  'packages/serial/test/e2e.pty.test.ts': 22,
  'firmware-sim/test/tm-sim.test.ts': 21,
  'firmware-sim/test/cross.test.ts': 18,
  'packages/miner/src/kernels/wasm.test.ts': 17,
  'packages/cli/test/serial.pty.test.ts': 16,
  'packages/validator/test/cluster-inprocess.test.ts': 15,
  'packages/validator/test/docs-walkthrough.test.ts': 15,
  'packages/validator/test/store-postgres.test.ts': 15,
  'packages/miner/test/miner.test.ts': 15,
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
