// Starts the TypeScript worker entry from source (tests under vitest, scripts under tsx).
// Node strips the types itself; this hook maps the `.js` specifier of a relative import made
// from a `.ts` file to the `.ts` file next to it, as TypeScript's NodeNext resolution does.
// The build (dist/worker.js) needs none of this. Type stripping takes erasable syntax only
// (no enums, namespaces or parameter properties) in the files a worker loads: src/worker,
// src/kernels, src/errors.ts; every engine test runs them this way.
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import { workerData } from 'node:worker_threads';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (
      (specifier.startsWith('./') || specifier.startsWith('../')) &&
      specifier.endsWith('.js') &&
      context.parentURL?.endsWith('.ts')
    ) {
      const ts = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
      if (existsSync(fileURLToPath(ts))) return nextResolve(ts.href, context);
    }
    return nextResolve(specifier, context);
  },
});

await import(workerData.entry);
