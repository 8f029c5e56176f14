import type { Command } from 'commander';
import { saveConfigFile } from '../config-file.js';
import { CliError } from '../errors.js';
import { writeLine } from '../io.js';
import { runPlain } from '../plain.js';
import { addSettings, type CommandContext, loadSettings } from '../program.js';
import { flagName, type SettingName } from '../settings.js';

const MINE_SETTINGS: readonly SettingName[] = [
  'urls',
  'local',
  'pool',
  'stake',
  'protocol',
  'key',
  'deviceType',
  'threads',
  'kernel',
  'intensity',
  'cpu',
  'devices',
  'dataDir',
  'journal',
  'apiPort',
  'apiHost',
  'apiToken',
  'dashboard',
  'tui',
  'logFile',
];

const EXAMPLES = `
Examples:
  miner mine --local                                   a validator in this process, the CPU, the TUI
  miner mine --local --dashboard                       ... and the live lattice dashboard (URL printed)
  miner mine --url http://a:8420 --url http://b:8420   two validators, failover in this order
  miner mine --url http://a:8420 --url http://b:8420 --save   ... and remember them
  miner mine --device auto --no-cpu                    ESP32 boards on USB only
  miner mine --url http://a:8420 --pool --stake 1      pooled: join with 1 PTM, send shares
  MINER_API_TOKEN=... miner mine --api-port 4048       with the local control API

Keys (TUI, or plain mode with stdin a terminal): h hashrate, p pause, r resume,
s results, c connection, q quit.`;

/**
 * `miner mine`: the mining loop (the Miner over the client's getWork/submitWork) with the CPU
 * engine and serial boards, shown in the TUI when stdout is a terminal, else as plain lines.
 */
export function mineCommand(program: Command, ctx: CommandContext): void {
  const command = program
    .command('mine')
    .description('mine: against validators (--url, failover in order) or a local one (--local)')
    .option('--save', 'remember the settings given as flags (e.g. the --url list) in the config file')
    .option('--json', 'one JSON object per event instead of log lines (never the TUI)');
  addSettings(command, MINE_SETTINGS);
  command.addHelpText('after', EXAMPLES);
  command.action(async (options: { save?: boolean; json?: boolean }, cmd: Command) => {
    const { io } = ctx;
    const loaded = loadSettings(cmd, io, { allowMissingConfig: options.save === true });
    const { settings, sources } = loaded;
    if (settings.local && sources.urls === 'flag') {
      throw new CliError('usage', '--local mines against a validator in this process: leave out --url', [
        'or leave out --local to mine against the --url validators',
      ]);
    }
    if (options.save) {
      const names = Object.keys(loaded.flags) as SettingName[];
      if (names.length === 0) {
        throw new CliError('usage', '--save: no settings given as flags to save', [
          'e.g. miner mine --url http://a:8420 --url http://b:8420 --save',
        ]);
      }
      await saveConfigFile(loaded.file, loaded.flags);
      writeLine(io.stderr, `saved ${names.map(flagName).join(', ')} to ${loaded.file.path}`);
    }
    const { MiningSession } = await import('../session.js');
    const session = await MiningSession.open({
      settings,
      env: io.env,
      version: ctx.version,
      // The native kernels' first compile takes seconds: say so while it runs (stderr).
      onProgress: (line) => writeLine(io.stderr, line),
      ...ctx.options.session,
    });
    ctx.options.onSession?.(session);
    let closeLog: (() => Promise<void>) | undefined;
    try {
      if (settings.logFile !== undefined) {
        const { startLogFile } = await import('../log-file.js');
        closeLog = await startLogFile(settings.logFile, session, io);
      }
      await session.start();
      const tui = settings.tui && options.json !== true && io.stdout.isTTY === true;
      if (tui) {
        const { runTui } = await import('../tui/run.js');
        await runTui(session, io, {
          ...(ctx.options.tuiRefreshMs ? { refreshMs: ctx.options.tuiRefreshMs } : {}),
        });
      } else {
        await runPlain(session, io, {
          json: options.json === true,
          ...(ctx.options.reportIntervalMs ? { reportIntervalMs: ctx.options.reportIntervalMs } : {}),
        });
      }
    } finally {
      await session.close();
      await closeLog?.();
    }
  });
}
