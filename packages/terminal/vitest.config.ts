import { packageProject } from '../../vitest.shared.ts';

export default packageProject('terminal', { testTimeout: 30_000, hookTimeout: 60_000 });
