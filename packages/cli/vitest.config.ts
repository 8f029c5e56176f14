import { packageProject } from '../../vitest.shared.ts';

// The miner's global setup builds the native kernels into the user's cache once, before the
// test files start: the miners these tests start (in process, or as processes whose
// XDG_CACHE_HOME is that cache, test/helpers.ts) then load them instead of each compiling them.
// Its test files are independent of each other: they share workers (test-support/cleanup.ts).
export default packageProject(
  'cli',
  {
    isolate: false,
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
    globalSetup: ['../miner/test/native-setup.ts'],
  },
  // the miners they start run the CLI's build, made once if it is missing or stale
  { firmware: true, build: true },
);
