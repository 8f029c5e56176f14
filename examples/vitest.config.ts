import { packageProject } from '../vitest.shared.ts';

/** The examples that are tests (`*.test.ts`) run with `npm test`; the scripts run with `npm run examples`. */
export default packageProject('examples', { include: ['*.test.ts'] });
