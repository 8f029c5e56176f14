import type { Command } from 'commander';
import { withClient } from '../client.js';
import { EXIT, toCliError } from '../errors.js';
import { writeLine } from '../io.js';
import { loadSigner } from '../key-file.js';
import { addSettings, type CommandContext, loadSettings, writeJson } from '../program.js';

/**
 * `miner register`: registers the key on every validator of --url (failover needs the key on
 * each), as --device-type. Registering again updates the type; the device id stays.
 */
export function registerCommand(program: Command, ctx: CommandContext): void {
  const command = program
    .command('register')
    .description('register the key on the validators (every --url), as a device type')
    .option('--json', 'machine-readable output');
  addSettings(command, ['urls', 'key', 'deviceType']);
  command.action(async (options: { json?: boolean }, cmd: Command) => {
    const { io } = ctx;
    const { settings } = loadSettings(cmd, io);
    const signer = await loadSigner(settings.key);
    const results = await withClient(settings, signer, (client) =>
      Promise.all(
        settings.urls.map(async (url) => {
          try {
            const r = await client.miners.register({ device_type: settings.deviceType }, { endpoint: url });
            return { url, ok: true as const, result: r };
          } catch (error) {
            return { url, ok: false as const, error: toCliError(error) };
          }
        }),
      ),
    );
    const failures = results.flatMap((r) => (r.ok ? [] : [r.error]));
    if (results.length === 1 && failures[0]) throw failures[0];
    if (options.json) {
      writeJson(
        io,
        results.map((r) =>
          r.ok ? { url: r.url, ...r.result } : { url: r.url, error: r.error.code, message: r.error.message },
        ),
      );
    }
    for (const r of results) {
      if (r.ok && !options.json) {
        writeLine(
          io.stdout,
          `registered ${r.result.pubkey} as ${r.result.device_type} on ${r.url} (device ${r.result.device_id})`,
        );
      } else if (!r.ok) {
        writeLine(io.stderr, `miner: ${r.url}: ${r.error.message}`);
      }
    }
    if (failures.length === 0) return;
    writeLine(
      io.stderr,
      `miner: registered on ${results.length - failures.length} of ${results.length} validators`,
    );
    ctx.setExit(failures.every((f) => f.code === 'unreachable') ? EXIT.unreachable : EXIT.failure);
  });
}
