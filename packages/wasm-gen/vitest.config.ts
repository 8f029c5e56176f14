import { packageProject } from '../../vitest.shared.ts';

export default packageProject('wasm-gen');
