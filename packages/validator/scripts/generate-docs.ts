/**
 * Writes the validator's generated documentation:
 *   docs/openapi.json   the OpenAPI 3.1 document a validator serves at /openapi.json (from ROUTES)
 *   docs/validator.md   the settings table between its `settings` markers (from SETTINGS)
 * CI runs it with --check and fails when a committed file is out of date.
 *   npm run generate -w @tensormine/validator
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createValidator } from '../src/app.js';
import { SETTING_NAMES, SETTINGS, settingFlag } from '../src/config.js';

const docs = join(dirname(fileURLToPath(import.meta.url)), '../../../docs');
const check = process.argv.includes('--check');
let stale = 0;

function write(path: string, text: string): void {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {}
  if (check) {
    if (current !== text) {
      console.error(`${path} is out of date: run npm run generate`);
      stale++;
    }
  } else if (current !== text) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}

const validator = await createValidator({ dataDir: ':memory:', logger: false });
await validator.app.ready();
write(join(docs, 'openapi.json'), `${JSON.stringify(validator.app.swagger(), null, 2)}\n`);
await validator.close();

const rows = SETTING_NAMES.map((name) => {
  const s = SETTINGS[name];
  const value =
    name === 'dataDir'
      ? '`$XDG_DATA_HOME/tensormine/validator` (else `~/.local/share/...`)'
      : (s.defaultText ?? `\`${String(s.default({}, {}))}\``);
  return `| \`--${settingFlag(name)}\` | \`${s.env}\` | \`${name}\` | ${value} | ${s.description} |`;
});
const table = [
  '| flag | environment | config file key | default | meaning |',
  '|---|---|---|---|---|',
  ...rows,
].join('\n');
const guidePath = join(docs, 'validator.md');
const guide = readFileSync(guidePath, 'utf8');
const start = '<!-- settings:start -->';
const end = '<!-- settings:end -->';
const from = guide.indexOf(start);
const to = guide.indexOf(end);
if (from < 0 || to < from) throw new Error(`${guidePath} has no ${start} ... ${end} markers`);
write(guidePath, `${guide.slice(0, from + start.length)}\n${table}\n${guide.slice(to)}`);
if (stale > 0) process.exit(1);
