import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { withClient } from '../client.js';
import { failureReason, toCliError } from '../errors.js';
import { writeLine } from '../io.js';
import { loadSigner } from '../key-file.js';
import { addSettings, type CommandContext, loadSettings, table, writeJson } from '../program.js';
import { formatDuration } from '../reports.js';

/**
 * `miner status`: each validator's /health (so a failover list shows which are up), then the
 * /status of the one in use and the account of the miner's key (when there is a key file).
 */
export function statusCommand(program: Command, ctx: CommandContext): void {
  const command = program
    .command('status')
    .description("the validators' health, the status of the one in use and the miner account of the key")
    .option('--json', 'machine-readable output');
  addSettings(command, ['urls', 'key']);
  command.action(async (options: { json?: boolean }, cmd: Command) => {
    const { io } = ctx;
    const { settings } = loadSettings(cmd, io);
    const signer = existsSync(settings.key) ? await loadSigner(settings.key) : undefined;
    const report = await withClient(settings, undefined, async (client) => {
      const health = await Promise.all(
        settings.urls.map(async (url) => {
          const started = performance.now();
          try {
            const h = await client.node.health({ endpoint: url, retries: 0 });
            return { url, up: true as const, latencyMs: Math.round(performance.now() - started), health: h };
          } catch (error) {
            return { url, up: false as const, reason: failureReason(error), error };
          }
        }),
      );
      const first = health.find((h) => h.up);
      if (!first) throw toCliError(health[0]!.up ? undefined : health[0]!.error);
      const status = await client.node.status({ endpoint: first.url });
      const account = signer
        ? await client.miners.get(signer.publicKeyHex, { endpoint: first.url })
        : undefined;
      return { health, url: first.url, status, account };
    });
    if (options.json) {
      writeJson(io, {
        validators: report.health.map((h) =>
          h.up
            ? { url: h.url, up: true, latency_ms: h.latencyMs, ...h.health }
            : { url: h.url, up: false, reason: h.reason },
        ),
        url: report.url,
        status: report.status,
        miner: report.account ?? null,
      });
      return;
    }
    for (const h of report.health) {
      writeLine(
        io.stdout,
        h.up
          ? `validator  ${h.url}  ${h.health.status}, ${h.health.service} ${h.health.software_version}, protocols ${h.health.protocols.join(' ')}, up ${formatDuration(h.health.uptime_s)}, ${h.latencyMs} ms`
          : `validator  ${h.url}  unreachable (${h.reason})`,
      );
    }
    const s = report.status;
    const lines = table([
      ['node', `${s.node_id} (v${s.version}, ${s.peer_network_mode}, pool ${s.pool_strategy})`],
      [
        'v4.0',
        `difficulty ${s.difficulty}, tensors up to ${s.max_tensor_dim}, proofs ${s.stats.total_proofs_valid} valid / ${s.stats.total_proofs_rejected} rejected`,
      ],
      [
        'v4.1',
        s.hexchain.enabled
          ? `hexchain difficulty ${s.hexchain.difficulty}, ${s.hexchain.occupied} cells occupied, ${s.stats.total_blocks_accepted} blocks accepted`
          : 'hexchain off',
      ],
    ]);
    for (const line of lines) writeLine(io.stdout, line);
    if (!signer) {
      writeLine(io.stdout, `miner      no key file at ${settings.key} (miner keys generate)`);
      return;
    }
    const a = report.account!;
    const balances = a.balances.map((b) => `${b.amount} ${b.token}`).join(', ') || 'none';
    writeLine(
      io.stdout,
      a.registered
        ? `miner      ${a.pubkey} registered as ${a.device_type}, blocks ${a.blocks_accepted}, proofs ${a.proofs_accepted} accepted / ${a.proofs_rejected} rejected, rewards ${a.rewards_total} PTM, balances ${balances}`
        : `miner      ${a.pubkey} not registered on ${report.url} (miner register --url ${report.url})`,
    );
  });
}
