import { packageProject } from '../vitest.shared.ts';

/** The examples that are tests (`*.test.ts`) run with `npm test`; the scripts run with `npm run examples`. */
// Its test files are independent of each other: they share workers (test-support/cleanup.ts).
export default packageProject('examples', { include: ['*.test.ts'], isolate: false });
