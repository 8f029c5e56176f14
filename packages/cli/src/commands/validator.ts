import type { Command } from 'commander';
import { aborted, writeLine } from '../io.js';
import type { CommandContext } from '../program.js';

/**
 * `miner validator start`: the reference validator as a local node, exactly as
 * `tensormine-validator start`: its options come from the validator's own SETTINGS table
 * (flags in kebab case, TENSORMINE_* variables, its JSON config file), resolved by its
 * resolveConfig.
 */
export function validatorCommand(
  program: Command,
  ctx: CommandContext,
  table:
    | Pick<typeof import('@tensormine/validator'), 'SETTING_NAMES' | 'SETTINGS' | 'settingFlag'>
    | undefined,
): void {
  const validator = program
    .command('validator')
    .description('run the reference validator as a local node (same options as tensormine-validator)');
  const start = validator
    .command('start')
    .description('start a local validator node (Ctrl+C stops it)')
    .option('--config <file>', 'a JSON file of validator settings (env TENSORMINE_CONFIG)');
  // Loaded (with Fastify) only when `miner validator ...` runs: the other commands start faster.
  if (table === undefined) return;
  const { SETTING_NAMES, SETTINGS, settingFlag } = table;
  for (const name of SETTING_NAMES) {
    const s = SETTINGS[name];
    const def = s.defaultText ?? s.default(ctx.io.env, {});
    start.option(
      `--${settingFlag(name)} <value>`,
      `${s.description} (env ${s.env}${def === undefined ? '' : `; default ${String(def)}`})`,
    );
  }
  start.action(async (options: Record<string, string | undefined>) => {
    const { io } = ctx;
    const flags: Record<string, string> = {};
    for (const name of SETTING_NAMES) {
      const value = options[name];
      if (value !== undefined) flags[name] = value;
    }
    const configFile = options.config ?? io.env.TENSORMINE_CONFIG;
    const { createValidator, startupLines } = await import('@tensormine/validator');
    const node = await createValidator({ ...flags, env: io.env, ...(configFile ? { configFile } : {}) });
    let url: string;
    try {
      url = await node.listen();
    } catch (error) {
      await node.close();
      throw error;
    }
    for (const line of startupLines(node, url)) writeLine(io.stdout, line);
    writeLine(io.stdout, `  mine against it: miner mine --url ${url}`);
    await aborted(io.signal);
    writeLine(io.stdout, 'closing (finishing requests in flight)');
    await node.close();
  });
}
