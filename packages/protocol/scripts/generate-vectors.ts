/**
 * Writes the protocol test vectors to packages/protocol/vectors/<area>.vectors.json.
 * Each area's generator lives in scripts/vectors/<area>.ts and exports `generate()`, a pure
 * deterministic function (fixed test keys, fixed timestamps): running this script twice gives
 * identical files. The tests under test/ reproduce every vector from its inputs alone, and the
 * C core in firmware-sim/ reproduces the consensus ones.
 *
 * Usage: npm run vectors            (rewrite all)
 *        npm run vectors -- --check (exit 1 if a committed file differs from a fresh generation)
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, '..', 'vectors');
const check = process.argv.includes('--check');

let differs = 0;
for (const file of readdirSync(join(here, 'vectors'))
  .filter((f) => f.endsWith('.ts') && !f.startsWith('_'))
  .sort()) {
  const area = file.replace(/\.ts$/, '');
  const mod = (await import(join(here, 'vectors', file))) as { generate: () => unknown };
  const text = `${JSON.stringify(mod.generate(), null, 2)}\n`;
  const target = join(outDir, `${area}.vectors.json`);
  if (check) {
    let current = '';
    try {
      current = readFileSync(target, 'utf8');
    } catch {}
    if (current !== text) {
      differs++;
      console.error(`${area}: committed vectors differ from a fresh generation`);
    }
  } else {
    writeFileSync(target, text);
    console.log(`wrote ${target}`);
  }
}
if (differs > 0) process.exit(1);
