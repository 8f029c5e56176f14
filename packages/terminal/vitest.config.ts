import { packageProject } from '../../vitest.shared.ts';

// Its test files are independent of each other: they share workers (test-support/cleanup.ts).
// docs-trial.test.ts runs the doc's `npx miner` commands: the CLI's build is made once if stale.
export default packageProject('terminal', { isolate: false }, { build: true });
