import { packageProject } from '../vitest.shared.ts';

export default packageProject('firmware-sim', {}, { firmware: true });
