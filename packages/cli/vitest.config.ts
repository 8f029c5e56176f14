import { packageProject } from '../../vitest.shared.ts';

export default packageProject(
  'cli',
  { include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'test/**/*.test.tsx'] },
  { firmware: true },
);
