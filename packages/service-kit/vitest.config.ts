import { packageProject } from '../../vitest.shared.ts';

export default packageProject('service-kit');
