import type { Plugin } from 'esbuild';
import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.base.ts';

/**
 * undici is bundled (about 110 CommonJS files otherwise loaded one by one at every start), and
 * only what the client runs: `Agent` and the request API on dispatchers, as undici's own index
 * wires them (`Object.assign(Dispatcher.prototype, api)`), without its fetch, WebSocket, mocks
 * and caches (they cost a started miner about 0.1 s of CPU to load; docs/benchmarks.md). The
 * client imports nothing else of undici at run time (types only); a `dispatcher` of the
 * caller's (a MockAgent, a ProxyAgent) is the caller's own undici.
 */
const undiciAgentOnly: Plugin = {
  name: 'undici-agent-only',
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: 'undici-agent', namespace: 'undici-agent-only' }));
    build.onLoad({ filter: /.*/, namespace: 'undici-agent-only' }, () => ({
      contents: [
        "const Dispatcher = require('undici/lib/dispatcher/dispatcher');",
        "Object.assign(Dispatcher.prototype, require('undici/lib/api'));",
        "module.exports = { Agent: require('undici/lib/dispatcher/agent') };",
      ].join('\n'),
      resolveDir: import.meta.dirname,
      loader: 'js',
    }));
  },
};

export default defineConfig({
  ...packageConfig(
    { index: 'src/index.ts', errors: 'src/errors.ts', signer: 'src/signer.ts' },
    { bundle: ['undici'], bundleCommonJs: true },
  ),
  esbuildPlugins: [undiciAgentOnly],
});
