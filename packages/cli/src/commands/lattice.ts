import { ValidatorError } from '@tensormine/client';
import { formatCoord } from '@tensormine/protocol';
import type { Command } from 'commander';
import { withClient } from '../client.js';
import { CliError } from '../errors.js';
import { writeLine } from '../io.js';
import { shellQuote } from '../paths.js';
import { addSettings, type CommandContext, loadSettings, table, writeJson } from '../program.js';

/** `miner lattice`: the hexchain's status and one page of its blocks (--limit, --cursor). */
export function latticeCommand(program: Command, ctx: CommandContext): void {
  const command = program
    .command('lattice')
    .description('the hexchain: lattice status and a page of blocks')
    .option('--limit <n>', 'blocks per page, 1..500', '20')
    .option('--cursor <cursor>', 'the next_cursor of the previous page')
    .option('--json', 'machine-readable output');
  addSettings(command, ['urls']);
  command.action(async (options: { limit: string; cursor?: string; json?: boolean }, cmd: Command) => {
    const { io } = ctx;
    const { settings } = loadSettings(cmd, io);
    const limit = pageLimit(options.limit);
    const { status, page } = await withClient(
      { ...settings, protocol: 'auto' },
      undefined,
      async (client) => {
        try {
          return {
            status: await client.hexchain.status(),
            page: await client.hexchain.lattice({
              limit,
              ...(options.cursor ? { cursor: options.cursor } : {}),
            }),
          };
        } catch (error) {
          if (error instanceof ValidatorError && error.status === 404 && error.code === 'not_found') {
            throw new CliError(
              'failure',
              `${error.endpoint ?? 'the validator'} does not serve the v4.1 hexchain`,
            );
          }
          throw error;
        }
      },
    );
    if (options.json) {
      writeJson(io, { status, page });
      return;
    }
    writeLine(
      io.stdout,
      `lattice  ${page.total} blocks (${status.occupied} cells with the genesis), max depth ${status.max_depth}, frontier ${status.frontier_size}, difficulty ${status.difficulty}, block interval ${status.block_interval_s} s, retarget in ${status.blocks_until_retarget} blocks`,
    );
    if (page.blocks.length === 0) {
      writeLine(io.stdout, options.cursor ? 'no more blocks' : 'no blocks mined yet');
      return;
    }
    const rows = page.blocks.map((b) => [
      formatCoord(b.coord),
      String(b.depth),
      `${b.miner_pubkey.slice(0, 16)}…`,
      String(b.difficulty),
      new Date(b.timestamp * 1000)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z'),
      `${b.block_hash.slice(0, 16)}…`,
    ]);
    for (const line of table([
      ['coord', 'depth', 'miner', 'difficulty', 'accepted', 'block hash'],
      ...rows,
    ])) {
      writeLine(io.stdout, line);
    }
    writeLine(io.stdout, `${page.blocks.length} of ${page.total} blocks`);
    if (page.next_cursor) {
      writeLine(
        io.stdout,
        `next page: miner lattice --limit ${limit} --cursor ${shellQuote(page.next_cursor)}`,
      );
    }
  });
}

export function pageLimit(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > 500) {
    throw new CliError(
      'usage',
      `option --limit: expected an integer in [1, 500], got ${JSON.stringify(text)}`,
    );
  }
  return n;
}
