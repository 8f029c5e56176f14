import type { Command } from 'commander';
import { writeLine } from '../io.js';
import { addSettings, type CommandContext, loadSettings, table, writeJson } from '../program.js';
import { displayValue, flagName, jsonValue, SETTING_NAMES, SETTINGS } from '../settings.js';

/** `miner config`: every setting's effective value and where it came from. */
export function configCommand(program: Command, ctx: CommandContext): void {
  const command = program
    .command('config')
    .description(
      'print the effective configuration and where each value came from (flag, env, file, default)',
    )
    .option('--json', 'machine-readable output');
  addSettings(command, SETTING_NAMES);
  command.action(async (options: { json?: boolean }, cmd: Command) => {
    const { io } = ctx;
    const { settings, sources, file } = loadSettings(cmd, io);
    if (options.json) {
      writeJson(io, {
        configFile: { path: file.path, exists: file.exists },
        settings: SETTING_NAMES.map((name) => ({
          name,
          value: jsonValue(name, settings[name]),
          source: sources[name],
          flag: flagName(name),
          env: SETTINGS[name].env,
        })),
      });
      return;
    }
    writeLine(io.stdout, `config file ${file.path}${file.exists ? '' : ' (does not exist)'}`);
    const rows = SETTING_NAMES.map((name) => [name, displayValue(name, settings[name]), sources[name]]);
    for (const line of table([['setting', 'value', 'source'], ...rows])) writeLine(io.stdout, line);
  });
}
