// Starts the TypeScript worker entry from source (tests under vitest, scripts under tsx).
// Node transforms the types itself (the pool starts the worker with
// --experimental-transform-types: the protocol's sources, which a worker loads for the
// reference check of a tensor solution, use parameter properties); this hook maps the `.js`
// specifier of a relative import made from a `.ts` file to the `.ts` file next to it, as
// TypeScript's NodeNext resolution does, and resolves the workspace packages to their sources
// (the `@tensormine/source` condition, as tsx and vitest do in the parent). The build
// (dist/worker.js) needs none of this; every engine test runs the worker this way.
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
    if (specifier.startsWith('@tensormine/')) {
      return nextResolve(specifier, {
        ...context,
        conditions: ['@tensormine/source', ...context.conditions],
      });
    }
    return nextResolve(specifier, context);
  },
});

await import(workerData.entry);
