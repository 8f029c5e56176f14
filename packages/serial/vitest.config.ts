import { packageProject } from '../../vitest.shared.ts';

export default packageProject('serial', { testTimeout: 30_000 });
