import type * as Http from 'node:http';
import { createRequire } from 'node:module';

/**
 * node:http, loaded with `require`. Node's ESM view of a built-in module reads every export
 * once, and node:http's `WebSocket`, `CloseEvent` and `MessageEvent` are getters that load
 * Node's fetch (undici) with them: about 50 ms of CPU of every start of a service, and of
 * `miner mine --local` (docs/benchmarks.md, the miner's start). So the services take node:http
 * from here, never with `import ... from 'node:http'` (`import type` is fine).
 */
export const nodeHttp = createRequire(import.meta.url)('node:http') as typeof Http;
