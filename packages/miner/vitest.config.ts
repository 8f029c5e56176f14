import { packageProject } from '../../vitest.shared.ts';

// test/native-setup.ts builds the native kernels into the user's cache once, before the test
// files (which run in parallel) would each compile them.
export default packageProject('miner', { globalSetup: ['test/native-setup.ts'] });
