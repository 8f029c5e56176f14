import { packageProject } from '../../vitest.shared.ts';

// Its test files are independent of each other: they share workers (test-support/cleanup.ts).
export default packageProject('service-kit', { isolate: false });
