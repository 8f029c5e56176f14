// Imports the built entry points of every workspace package (without the @tensormine/source
// condition), so a build that only works from sources fails CI. Run after `npm run build`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

let failed = 0;
for (const dir of readdirSync('packages')) {
  const pkg = JSON.parse(readFileSync(join('packages', dir, 'package.json'), 'utf8'));
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const file = typeof target === 'object' && target !== null ? target.import : undefined;
    if (typeof file !== 'string' || !file.endsWith('.js')) continue;
    try {
      await import(pathToFileURL(join('packages', dir, file)).href);
      console.log(`ok   ${pkg.name}${subpath === '.' ? '' : subpath.slice(1)}`);
    } catch (error) {
      failed++;
      console.error(`FAIL ${pkg.name}${subpath === '.' ? '' : subpath.slice(1)}: ${error.message}`);
    }
  }
}
process.exit(failed > 0 ? 1 : 0);
