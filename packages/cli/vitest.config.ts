import { packageProject } from '../../vitest.shared.ts';

export default packageProject('cli', {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
  testTimeout: 60_000,
  hookTimeout: 30_000,
});
