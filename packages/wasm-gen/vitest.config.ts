import { packageProject } from '../../vitest.shared.ts';

// Its test files are independent of each other: they share workers (test-support/cleanup.ts).
export default packageProject('wasm-gen', { isolate: false });
