import { packageProject } from '../vitest.shared.ts';

export default packageProject('firmware-sim', { hookTimeout: 120_000, testTimeout: 120_000 });
