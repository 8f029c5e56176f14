import { SETTING_NAMES, SETTINGS } from './settings.js';

/** The settings table of docs/cli.md (between its `settings` markers), from SETTINGS. */
export function settingsTable(): string {
  const rows = SETTING_NAMES.map((name) => {
    const s = SETTINGS[name];
    const flag = `\`${s.flag}\``;
    const cell = (text: string) => text.replaceAll('|', '\\|');
    return `| ${cell(flag)} | \`${s.env}\` | \`${name}\` | ${cell(s.defaultText)} | ${cell(s.description)}${s.repeatable ? ' (file: an array)' : ''} |`;
  });
  return [
    '| flag | environment | config file key | default | meaning |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

export const SETTINGS_START = '<!-- settings:start -->';
export const SETTINGS_END = '<!-- settings:end -->';

/** `text` with the table between the markers replaced. */
export function withSettingsTable(text: string): string {
  const from = text.indexOf(SETTINGS_START);
  const to = text.indexOf(SETTINGS_END);
  if (from < 0 || to < from) throw new Error(`expected ${SETTINGS_START} ... ${SETTINGS_END} in docs/cli.md`);
  return `${text.slice(0, from + SETTINGS_START.length)}\n${settingsTable()}\n${text.slice(to)}`;
}
