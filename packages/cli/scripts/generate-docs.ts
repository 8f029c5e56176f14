/**
 * Writes the settings table of docs/cli.md (between its `settings` markers) from SETTINGS, and
 * the table of `miner mine --json` events (between its `json-events` markers) from their schemas.
 * With --check it writes nothing and fails when the committed page is out of date.
 *   npm run generate -w @tensormine/cli
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withJsonEventsTable } from '../src/json-events.js';
import { withSettingsTable } from '../src/settings-table.js';

const path = fileURLToPath(new URL('../../../docs/cli.md', import.meta.url));
const current = readFileSync(path, 'utf8');
const next = withJsonEventsTable(withSettingsTable(current));
if (process.argv.includes('--check')) {
  if (next !== current) {
    console.error(`${path} is out of date: run npm run generate`);
    process.exit(1);
  }
} else if (next !== current) {
  writeFileSync(path, next);
  console.log(`wrote ${path}`);
}
