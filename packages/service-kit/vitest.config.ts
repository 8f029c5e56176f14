import { packageProject } from '../../vitest.shared.ts';

// Generous bounds: some tests start real processes (a bin through tsx) on a busy machine.
export default packageProject('service-kit', { testTimeout: 120_000 });
