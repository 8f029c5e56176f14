import { formatHashrate } from '@tensormine/miner';
import type { MinerBoard } from '@tensormine/protocol';
import type { Command } from 'commander';
import { withClient } from '../client.js';
import { CliError, toCliError } from '../errors.js';
import { type CliIo, writeLine } from '../io.js';
import { addSettings, type CommandContext, loadSettings, table, writeJson } from '../program.js';
import { formatAgo, formatBoardState } from '../reports.js';
import type { BoardRow, PortRow } from '../serial-boards.js';
import { pageLimit } from './lattice.js';

/**
 * `miner devices`: the devices registered on the validator (a page of GET /devices), and with
 * --local-boards the serial boards attached to this machine: their state, rate, firmware,
 * chip id and port (boards are opened, self-tested and closed again; a running `miner mine`
 * that holds the ports keeps them).
 */
export function devicesCommand(program: Command, ctx: CommandContext): void {
  const command = program
    .command('devices')
    .description('registered devices on the validator; --local-boards: the serial boards attached here')
    .option('--local-boards', 'also list the serial boards attached to this machine (--device, default auto)')
    .option('--wait <ms>', 'how long to wait for boards to connect and self-test', '8000')
    .option('--limit <n>', 'registered devices per page, 1..500', '50')
    .option('--cursor <cursor>', 'the next_cursor of the previous page')
    .option('--json', 'machine-readable output');
  addSettings(command, ['urls', 'devices', 'apiPort', 'apiToken']);
  command.action(
    async (
      options: { localBoards?: boolean; wait: string; limit: string; cursor?: string; json?: boolean },
      cmd: Command,
    ) => {
      const { io } = ctx;
      const { settings } = loadSettings(cmd, io);
      const limit = pageLimit(options.limit);
      const wait = waitMs(options.wait);
      const registered = withClient({ ...settings, protocol: 'auto' }, undefined, (client) =>
        client.miners.devices({ limit, ...(options.cursor ? { cursor: options.cursor } : {}) }),
      ).then(
        (page) => ({ ok: true as const, page }),
        (error: unknown) => ({ ok: false as const, error: toCliError(error) }),
      );
      // A running `miner mine` holds the ports: with its control API (--api-port) its boards are
      // read from there, with their accepted and rejected results.
      const running =
        options.localBoards && settings.apiPort !== undefined
          ? await minerBoards(settings.apiPort, settings.apiToken)
          : undefined;
      const boards = !options.localBoards
        ? undefined
        : (running ?? (await localBoards(settings.devices.length > 0 ? settings.devices : ['auto'], wait)));
      const validator = await registered;
      if (options.json) {
        writeJson(io, {
          registered: validator.ok
            ? validator.page
            : { error: validator.error.code, message: validator.error.message },
          ...(boards ? { boards: boards.boards, ports: boards.ports, help: boards.help } : {}),
        });
      } else {
        if (validator.ok) printRegistered(io, validator.page, limit);
        if (boards) printBoards(io, boards.boards, boards.ports, boards.help, boards.from);
      }
      if (!validator.ok) {
        if (!boards) throw validator.error;
        writeLine(io.stderr, `miner: ${validator.error.message}`);
        ctx.setExit(validator.error.exitCode);
      }
    },
  );
}

type DevicesPage = Awaited<ReturnType<import('@tensormine/client').TensormineClient['miners']['devices']>>;

function printRegistered(io: CliIo, page: DevicesPage, limit: number): void {
  const t = page.by_type;
  writeLine(
    io.stdout,
    `registered devices: ${page.total} (native ${t.native}, esp32 ${t.esp32}, esp8266 ${t.esp8266})`,
  );
  if (page.devices.length > 0) {
    const now = Date.now();
    const rows = page.devices.map((d) => [
      d.device_id,
      d.pubkey,
      d.device_type,
      d.port === null ? '-' : String(d.port),
      formatAgo(d.last_seen === null ? undefined : d.last_seen * 1000, now),
      deviceRate(d),
      deviceWork(d),
      deviceCallback(d, now),
    ]);
    for (const line of table([
      ['device', 'public key', 'type', 'port', 'last seen', 'rate', 'work', 'callback'],
      ...rows,
    ])) {
      writeLine(io.stdout, line);
    }
  }
  if (page.next_cursor)
    writeLine(io.stdout, `next page: miner devices --limit ${limit} --cursor ${page.next_cursor}`);
}

type ListedDevice = DevicesPage['devices'][number];

/** Its blocks of the last hour as a rate, else the rate it reported, else '-'. */
function deviceRate(d: ListedDevice): string {
  if (d.hashrate_1h !== null) return `${formatHashrate(d.hashrate_1h)} (${d.blocks_1h} blocks/h)`;
  return d.hashrate_reported === null ? '-' : `${formatHashrate(d.hashrate_reported)} (reported)`;
}

/** Its current v4.1 work as the answering node issued it: cell, difficulty, stale or not. */
function deviceWork(d: ListedDevice): string {
  if (d.work === null) return '-';
  const { q, r, s } = d.work.coord;
  return `(${q},${r},${s}) d=${d.work.difficulty}${d.work.stale ? ' stale' : ''}`;
}

/** Its callbacks: the state, and what was delivered or failed. */
function deviceCallback(d: ListedDevice, now: number): string {
  const c = d.callback;
  if (c.state === 'none' || c.state === 'relayed' || c.state === 'off') return c.state;
  const counts = `${c.delivered}/${c.sent} delivered`;
  if (c.state === 'failing') {
    const retry = c.retry_at === null ? '' : `, retry in ${Math.max(0, Math.ceil(c.retry_at - now / 1000))}s`;
    return `failing (${counts}${retry}: ${c.last_error ?? 'no answer'})`;
  }
  if (c.state === 'refused') return `refused (${counts}: ${c.last_error ?? 'error'})`;
  return c.state === 'idle' ? 'idle' : `ok (${counts})`;
}

function printBoards(
  io: CliIo,
  boards: readonly BoardRow[],
  ports: readonly PortRow[],
  help: readonly string[],
  from?: string,
): void {
  writeLine(io.stdout, `serial boards here: ${boards.length}${from ? ` (${from})` : ''}`);
  for (const line of boardTable(boards, Date.now())) writeLine(io.stdout, line);
  for (const p of ports) {
    writeLine(io.stdout, `port ${p.path}: ${p.state}${p.lastError ? ` (${p.lastError})` : ''}`);
  }
  for (const line of help) writeLine(io.stdout, line);
}

/** The table of boards `miner devices --local-boards` prints (none: no lines). */
export function boardTable(boards: readonly BoardRow[], now: number): string[] {
  if (boards.length === 0) return [];
  const rows = boards.map((b) => [
    b.id,
    formatBoardState(b.state, b.selfTest, now),
    b.rate === undefined ? `${formatHashrate(b.announcedRate)} (announced)` : formatHashrate(b.rate),
    b.firmware,
    b.chipId,
    b.port ?? 'unplugged',
    formatAgo(b.lastValidWorkAtMs, now),
    ...(b.outcomes
      ? [
          String(b.outcomes.accepted),
          `${b.outcomes.rejected}${b.outcomes.rejectedReasons.length > 0 ? ` (${b.outcomes.rejectedReasons.map((r) => `${r.code} ${r.count}`).join(', ')})` : ''}`,
        ]
      : []),
    String(b.counters.found),
    String(b.counters.hardwareErrors),
    String(b.counters.crcErrors),
    String(b.counters.resyncs),
    String(b.counters.retransmissions),
    String(b.counters.reboots),
    String(b.counters.linkLosses),
  ]);
  const outcomes = boards.some((b) => b.outcomes) ? ['accepted', 'rejected'] : [];
  return table([
    [
      'board',
      'state',
      'rate',
      'firmware',
      'chip id',
      'port',
      'last valid work',
      ...outcomes,
      'found',
      'hw err',
      'crc',
      'resync',
      'retx',
      'reboots',
      'lost',
    ],
    ...rows,
  ]);
}

/** Opens the boards, waits for them to connect and self-test, lists them, closes them. */
async function localBoards(
  devices: readonly string[],
  waitMs: number,
): Promise<{ boards: BoardRow[]; ports: PortRow[]; help: string[]; from?: string }> {
  const { openSerialBoards } = await import('../serial-boards.js');
  const fleet = await openSerialBoards({ devices });
  fleet.on('error', () => {}); // a board's failure shows in its state
  try {
    await fleet.start();
    await fleet.settled(waitMs);
    return { boards: fleet.rows(), ports: fleet.emptyPorts(), help: await fleet.noBoardsHelp() };
  } finally {
    await fleet.stop();
  }
}

/**
 * The boards of a `miner mine` running here, from its control API (GET /api/system/info on
 * 127.0.0.1); undefined when nothing answers there (then the ports are opened instead).
 * @throws CliError when the API answers with an error (a wrong token).
 */
async function minerBoards(
  port: number,
  token: string | undefined,
): Promise<{ boards: BoardRow[]; ports: PortRow[]; help: string[]; from: string } | undefined> {
  const url = `http://127.0.0.1:${port}/api/system/info`;
  let res: Response;
  try {
    // Reads are open on the loopback; a token is sent when there is one.
    res = await fetch(url, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(3000),
    });
  } catch {
    return undefined;
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    throw new CliError(
      'failure',
      `the running miner's control API at ${url} answered ${res.status}: ${String(body.message ?? '')}`,
      ['check --api-token (or MINER_API_TOKEN): it must be the one the miner was started with'],
    );
  }
  const devices = (body.devices ?? []) as { boards?: MinerBoard[] }[];
  const boards = devices.flatMap((d) => d.boards ?? []).map(boardFromApi);
  return { boards, ports: [], help: [], from: `the running miner, control API 127.0.0.1:${port}` };
}

/** A board of a running miner's control API (GET /api/system/info) as a row of the table. */
export function boardFromApi(b: MinerBoard): BoardRow {
  return {
    id: b.id,
    chipId: b.chipId ?? '',
    port: b.port ?? undefined,
    state: b.state,
    ...(b.selfTest
      ? {
          selfTest: {
            reason: b.selfTest.reason,
            ...(b.selfTest.retryAt === null ? {} : { retryAtMs: Date.parse(b.selfTest.retryAt) }),
          },
        }
      : {}),
    firmware: b.firmware ?? '',
    board: b.board ?? '',
    rate: b.hashesPerSecond['10s'] ?? undefined,
    announcedRate: 0,
    lastValidWorkAtMs: b.lastFoundAt === null ? undefined : Date.parse(b.lastFoundAt),
    counters: {
      found: b.found,
      hardwareErrors: b.hardwareErrors,
      crcErrors: b.crcErrors,
      resyncs: b.resyncs,
      retransmissions: b.retransmissions,
      reboots: b.reboots,
      linkLosses: b.linkLosses,
    },
    outcomes: {
      accepted: b.sharesAccepted,
      rejected: b.sharesRejected,
      rejectedReasons: b.sharesRejectedReasons.map((r) => ({ code: r.message, count: r.count })),
    },
  };
}

function waitMs(text: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n > 600_000) {
    throw new CliError(
      'usage',
      `option --wait: expected milliseconds in [0, 600000], got ${JSON.stringify(text)}`,
    );
  }
  return n;
}
