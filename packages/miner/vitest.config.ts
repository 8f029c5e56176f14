import { packageProject } from '../../vitest.shared.ts';

// test/native-setup.ts builds the native kernels into the user's cache once, before the test
// files (which run in parallel) would each compile them.
// Its test files are independent of each other: they share workers (test-support/cleanup.ts).
// What a file installs in its thread (the native kernels, by selectKernel) is an input the
// tests give explicitly where they check the choice (kernelFor), not a state they assume.
export default packageProject('miner', { isolate: false, globalSetup: ['test/native-setup.ts'] });
