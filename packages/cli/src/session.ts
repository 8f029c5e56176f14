import { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createClient, type Signer, type TensormineClient } from '@tensormine/client';
import {
  type ControlApi,
  type DeviceBackend,
  type DeviceNoticeKind,
  formatLogEvent,
  Miner,
  type MinerLogEvent,
  MiningEngine,
  selectKernel,
  startControlApi,
} from '@tensormine/miner';
import { formatCoord } from '@tensormine/protocol';
import type { StatusProxy } from '@tensormine/status-proxy';
import { compactCounters } from './board-counters.js';
import { type DataLock, takeLock } from './data-lock.js';
import { CliError, describeError, failureReason, isUnreachable } from './errors.js';
import { loadOrCreateSigner, loadSigner } from './key-file.js';
import type { LocalValidator } from './local-validator.js';
import { shellQuote } from './paths.js';
import type { DeviceRow, Snapshot } from './reports.js';
import type { SerialBoards } from './serial-boards.js';
import type { MinerSettings } from './settings.js';
import { ClientWorkSource, type PoolEvent } from './work-source.js';

/**
 * One mining run (`miner mine`): the key, the client on the validators (or a validator started
 * in process with --local), the CPU engine and the serial boards, the Miner with its journal,
 * and the control API. The TUI and the plain-line mode both drive it: `lines` to print,
 * `snapshot()` to show, `pause`/`resume`, and `close()` for a clean shutdown (workers
 * stopped, the journal flushed, the local validator closed).
 */
export type LineTone = 'info' | 'good' | 'bad' | 'warn';

export interface SessionLine {
  readonly text: string;
  readonly tone: LineTone;
  /** The miner or pool event it reports, if any (for `--json`). */
  readonly event?: MinerLogEvent | PoolEvent;
}

export interface SessionEvents {
  line: [line: SessionLine];
}

/** What `--json`'s start event says (json-events.ts). */
export interface StartInfo {
  readonly version: string;
  readonly key: string;
  readonly validators: readonly string[];
  readonly local: boolean;
  readonly protocol: string;
  readonly threads: number | null;
  readonly intensity: number | null;
  readonly devices: readonly string[];
  readonly journal: string;
  readonly journalPending: number;
  readonly apiUrl: string | null;
}

/** What the TUI and the plain mode need from a session. */
export interface SessionView extends EventEmitter<SessionEvents> {
  readonly banner: readonly string[];
  /** For `--json`'s start event. */
  startInfo?(): StartInfo;
  readonly paused: boolean;
  snapshot(): Snapshot;
  pause(): void;
  resume(): void;
  /** Stops mining and releases everything (idempotent). */
  close(): Promise<void>;
}

export interface SessionOptions {
  readonly settings: MinerSettings;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly version: string;
  /** Tests: engine options (batch and sampling intervals). */
  readonly engine?: { readonly batchMs?: number; readonly sampleIntervalMs?: number };
  /** Tests: the Miner's retry delays. */
  readonly retryDelayMs?: number;
}

const TONES: Partial<Record<MinerLogEvent['type'], LineTone>> = {
  accepted: 'good',
  rejected: 'bad',
  journaled: 'warn',
  expired: 'warn',
  'shares-dropped': 'warn',
  'connection-lost': 'warn',
  'connection-restored': 'good',
  'device-error': 'warn',
  error: 'bad',
  paused: 'warn',
};

const NOTICE_TONES: Record<DeviceNoticeKind, LineTone> = {
  attached: 'good',
  back: 'good',
  lost: 'bad',
  rebooted: 'warn',
  'self-test-failed': 'bad',
  'link-degraded': 'warn',
};

const QUIET_STATES = new Set(['ok', 'idle', 'starting', 'paused', 'stopped']);

export class MiningSession extends EventEmitter<SessionEvents> implements SessionView {
  readonly settings: MinerSettings;
  readonly signer: Signer;
  readonly client: TensormineClient;
  readonly source: ClientWorkSource;
  readonly miner: Miner;
  readonly engine: MiningEngine | undefined;
  readonly boards: SerialBoards | undefined;
  readonly local: LocalValidator | undefined;
  readonly version: string;
  /** What `mine` prints before the first event (xmrig's start-up summary). */
  readonly banner: string[];
  api: ControlApi | undefined;
  /** The status proxy serving the dashboard (--dashboard). */
  dashboard: StatusProxy | undefined;
  dashboardUrl: string | undefined;
  private readonly lastFound = new Map<string, number>();
  private readonly locks: DataLock[];
  private backlog: SessionLine[] = [];
  private started = false;
  private closing: Promise<void> | undefined;

  private constructor(parts: {
    settings: MinerSettings;
    signer: Signer;
    client: TensormineClient;
    source: ClientWorkSource;
    miner: Miner;
    engine: MiningEngine | undefined;
    boards: SerialBoards | undefined;
    local: LocalValidator | undefined;
    version: string;
    banner: string[];
    locks: DataLock[];
  }) {
    super();
    this.locks = parts.locks;
    this.settings = parts.settings;
    this.signer = parts.signer;
    this.client = parts.client;
    this.source = parts.source;
    this.miner = parts.miner;
    this.engine = parts.engine;
    this.boards = parts.boards;
    this.local = parts.local;
    this.version = parts.version;
    this.banner = parts.banner;
    // Lines from before anyone listens (during start) wait for the first listener.
    (this as EventEmitter).on('newListener', (event: string | symbol) => {
      if (event === 'line') queueMicrotask(() => this.drainBacklog());
    });
  }

  /**
   * Sets everything up without mining yet: checks the options, loads (or with --local creates
   * and registers) the key, starts the local validator, checks that the key is registered on a
   * remote validator, and builds the backends and the Miner.
   * @throws CliError for every problem the user can fix (exit codes in errors.ts).
   */
  static async open(options: SessionOptions): Promise<MiningSession> {
    const { settings, env, version } = options;
    if (!settings.cpu && settings.devices.length === 0) {
      throw new CliError('usage', 'nothing to mine with: --no-cpu and no --device', [
        'add --device auto (ESP32 boards on USB) or leave out --no-cpu',
      ]);
    }
    if (settings.apiPort !== undefined && settings.apiToken === undefined) {
      throw new CliError(
        'usage',
        '--api-port needs a token: --api-token or MINER_API_TOKEN (16 characters or more)',
        ['e.g. MINER_API_TOKEN=$(openssl rand -hex 16) miner mine --api-port 4048'],
      );
    }
    const cleanup: (() => Promise<unknown>)[] = [];
    const locks: DataLock[] = [];
    try {
      const banner: string[] = [`tensormine miner ${version} (node ${process.versions.node})`];
      let signer: Signer;
      let local: LocalValidator | undefined;
      let urls = settings.urls;
      if (settings.local) {
        const key = await loadOrCreateSigner(settings.key);
        signer = key.signer;
        banner.push(
          ` * key        ${signer.publicKeyHex} (${key.created ? 'new key written to ' : ''}${settings.key})`,
        );
        const { startLocalValidator } = await import('./local-validator.js');
        const dataLock = await takeLock(
          `${settings.dataDir}/local-validator.lock`,
          `the data directory ${settings.dataDir} (its --local validator)`,
          'stop that miner first, or give this one another --data-dir',
        );
        cleanup.push(() => dataLock.release());
        locks.push(dataLock);
        // --local --pool: the local validator runs its pool (PPLNS) unless told otherwise.
        local = await startLocalValidator(
          settings.dataDir,
          settings.pool && !env.TENSORMINE_POOL_STRATEGY
            ? { ...env, TENSORMINE_POOL_STRATEGY: 'pplns' }
            : env,
        );
        const started = local;
        cleanup.push(() => started.validator.close());
        urls = [local.url];
        banner.push(` * validator  ${local.url} (local, in this process; data in ${local.dataDir})`);
      } else {
        signer = await loadSigner(settings.key);
        banner.push(` * key        ${signer.publicKeyHex} (${settings.key})`);
        banner.push(` * validator  ${urls.join(', ')}${urls.length > 1 ? ' (failover in this order)' : ''}`);
      }
      const client = createClient({ urls: [...urls], signer, protocol: settings.protocol });
      cleanup.push(() => client.close());
      const registerCommand = (to: readonly string[]) =>
        `miner register ${to.map((u) => `--url ${shellQuote(u)}`).join(' ')} --key ${shellQuote(settings.key)}${settings.deviceType === 'native' ? '' : ` --device-type ${settings.deviceType}`}`;
      const source = new ClientWorkSource({
        client,
        signer,
        urls,
        deviceType: settings.deviceType,
        registerCommand,
        pool: settings.pool,
      });
      cleanup.push(async () => source.close());
      if (local) {
        await client.miners.register({ device_type: settings.deviceType });
      } else {
        banner.push(...(await checkRegistered(client, source, signer, urls, registerCommand)));
      }

      if (settings.pool) banner.push(await ensurePoolMember(client, signer, settings, urls));

      await mkdir(dirname(settings.journal), { recursive: true, mode: 0o700 });
      const journalLock = await takeLock(
        `${settings.journal}.lock`,
        `the journal ${settings.journal}`,
        'stop that miner first, or give this one another --journal (or --data-dir)',
      );
      cleanup.push(() => journalLock.release());
      locks.push(journalLock);
      const backends: DeviceBackend[] = [];
      let engine: MiningEngine | undefined;
      if (settings.cpu) {
        engine = new MiningEngine({
          threads: settings.threads,
          kernel: settings.kernel,
          intensity: settings.intensity,
          ...(options.engine?.batchMs === undefined ? {} : { batchMs: options.engine.batchMs }),
          ...(options.engine?.sampleIntervalMs === undefined
            ? {}
            : { sampleIntervalMs: options.engine.sampleIntervalMs }),
        });
        backends.push(engine);
        // Builds (first use) and checks the native kernels now; the engine's start reuses it.
        const { kernel, notice } = await selectKernel(settings.kernel);
        banner.push(
          ` * cpu        ${settings.threads} thread${settings.threads === 1 ? '' : 's'}, intensity ${settings.intensity}, kernel ${kernel}`,
        );
        if (notice !== undefined) banner.push(` * ${notice}`);
      }
      let boards: SerialBoards | undefined;
      let miner: Miner | undefined;
      if (settings.devices.length > 0) {
        const { openSerialBoards } = await import('./serial-boards.js');
        boards = await openSerialBoards({ devices: settings.devices, journal: () => miner?.journal });
        backends.push(boards);
        banner.push(` * boards     ${settings.devices.join(', ')}`);
      }
      miner = new Miner({
        source,
        backends,
        journal: settings.journal,
        ...(options.retryDelayMs === undefined ? {} : { retryDelayMs: options.retryDelayMs }),
      });
      banner.push(` * journal    ${settings.journal}`);
      return new MiningSession({
        settings,
        signer,
        client,
        source,
        miner,
        engine,
        boards,
        local,
        version,
        banner,
        locks,
      });
    } catch (error) {
      for (const c of cleanup.reverse()) await c().catch(() => {});
      throw error;
    }
  }

  get paused(): boolean {
    return this.miner.paused;
  }

  startInfo(): StartInfo {
    const s = this.settings;
    return {
      version: this.version,
      key: this.signer.publicKeyHex,
      validators: this.local ? [this.local.url] : [...s.urls],
      local: this.local !== undefined,
      protocol: s.protocol,
      threads: s.cpu ? s.threads : null,
      intensity: s.cpu ? s.intensity : null,
      devices: [...s.devices],
      journal: s.journal,
      journalPending: this.miner.journal?.size ?? 0,
      apiUrl: this.api?.url ?? null,
    };
  }

  /** Starts mining (the workers, the boards, the journal's resubmissions) and the control API. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.miner.on('log', (event) => this.onLog(event));
    this.source.on('pool', (event) => this.send(poolLine(event)));
    try {
      await this.miner.start();
    } catch (error) {
      throw new CliError('failure', `the miner could not start: ${describeError(error)}`, [], {
        cause: error,
      });
    }
    const journal = this.miner.journal;
    if (journal && journal.skippedLines > 0) {
      this.line(
        `journal ${journal.path}: ${journal.skippedLines} unreadable line${journal.skippedLines === 1 ? '' : 's'} (a crash during a write?) set aside in ${journal.damagedPath}; the file was repaired`,
        'warn',
      );
    }
    if (this.boards) {
      // --device auto found nothing: say what it looked for and how to fix permissions.
      for (const help of await this.boards.noBoardsHelp()) this.line(help, 'warn');
    }
    const pending = this.miner.journal?.size ?? 0;
    if (pending > 0)
      this.line(`journal holds ${pending} result${pending === 1 ? '' : 's'} from an earlier run`, 'info');
    const { apiPort, apiToken } = this.settings;
    if (apiPort !== undefined && apiToken !== undefined) {
      try {
        this.api = await startControlApi({
          target: this.miner,
          token: apiToken,
          port: apiPort,
          version: this.version,
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        throw new CliError(
          code === 'EADDRINUSE' ? 'usage' : 'failure',
          code === 'EADDRINUSE'
            ? `the control API port ${apiPort} is in use; pick another with --api-port (0: any free port)`
            : `the control API could not start: ${describeError(error)}`,
          [],
          { cause: error },
        );
      }
      this.line(`control API on ${this.api.url} (Authorization: Bearer <token>)`, 'info');
    }
    if (this.settings.dashboard) {
      const { createStatusProxy } = await import('@tensormine/status-proxy');
      const validators = this.client.endpoints().map((e) => e.url);
      this.dashboard = await createStatusProxy({ validators, logger: false });
      this.dashboardUrl = `${await this.dashboard.listen({ host: '127.0.0.1', port: 0 })}/`;
      this.line(`dashboard on ${this.dashboardUrl} (live lattice of ${validators.join(', ')})`, 'info');
    }
  }

  pause(): void {
    this.miner.pause();
  }

  resume(): void {
    this.miner.resume();
  }

  /** Stops everything, once: the miner (workers, boards; the journal flushed), the API, the client, the local validator. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.miner.stop();
      await this.api?.close();
      await this.dashboard?.close();
      this.source.close();
      await this.client.close();
      await this.local?.validator.close();
      for (const lock of this.locks) await lock.release().catch(() => {});
    })();
    return this.closing;
  }

  snapshot(): Snapshot {
    const nowMs = Date.now();
    const stats = this.miner.stats();
    const rows: DeviceRow[] = [];
    for (const d of stats.devices) {
      if (d.id === this.boards?.id) continue;
      rows.push({
        name: d.id,
        level: 'device',
        state: d.state,
        rate10s: d.hashrate.total['10s'] ?? d.hashrate.total.warmup,
        rate60s: d.hashrate.total['60s'],
        lastValidWorkAtMs: d.lastFoundAtMs,
      });
      if (this.engine && d.id === this.engine.id) {
        const states = this.engine.workerStates();
        d.hashrate.workers.forEach((w, i) => {
          rows.push({
            name: `${d.id}#${i}`,
            level: 'worker',
            state: states[i] ?? 'unknown',
            rate10s: w['10s'] ?? w.warmup,
            rate60s: w['60s'],
            lastValidWorkAtMs: this.lastFound.get(`${d.id}#${i}`),
          });
        });
      }
    }
    if (this.boards) {
      const units = new Map(
        stats.devices.find((d) => d.id === this.boards?.id)?.units?.map((u) => [u.id, u]),
      );
      for (const b of this.boards.rows()) {
        rows.push({
          name: b.id,
          level: 'device',
          state: b.state,
          rate10s: b.rate,
          rate60s: undefined,
          lastValidWorkAtMs: b.lastValidWorkAtMs,
          detail: `${b.port ?? 'unplugged'}, ${b.board} fw ${b.firmware} · ${compactCounters(b.counters, units.get(b.id))}`,
        });
      }
      for (const p of this.boards.emptyPorts()) {
        rows.push({
          name: p.path,
          level: 'device',
          state: p.state,
          rate10s: undefined,
          rate60s: undefined,
          lastValidWorkAtMs: undefined,
          ...(p.lastError ? { detail: p.lastError } : {}),
        });
      }
      if (this.boards.rows().length === 0 && this.boards.emptyPorts().length === 0) {
        rows.push({
          name: 'serial',
          level: 'device',
          state: 'no device',
          rate10s: undefined,
          rate60s: undefined,
          lastValidWorkAtMs: undefined,
          detail: `waiting for ${this.settings.devices.join(', ')}`,
        });
      }
    }
    const job = this.miner.currentJob;
    return {
      stats,
      rows,
      connection: {
        url: this.source.url,
        endpoints: this.client.endpoints(),
        protocol: stats.job?.protocolVersion ?? this.source.lastVersion,
        connected: stats.connected,
        latencyMs: stats.lastLatencyMs,
        averageLatencyMs: stats.averageLatencyMs,
        local: this.local !== undefined,
        apiUrl: this.api?.url,
      },
      jobLabel:
        job === undefined ? undefined : job.kind === 'hexchain' ? formatCoord(job.coord) : job.challengeId,
      pool: this.source.pool(),
      nowMs,
    };
  }

  private onLog(event: MinerLogEvent): void {
    if (event.type === 'found') {
      const { device, worker } = event.found;
      this.lastFound.set(worker === undefined ? device : `${device}#${worker}`, event.found.foundAtMs);
      return; // its accepted / rejected line follows
    }
    if (event.type === 'device-notice') {
      this.send({ text: formatLogEvent(event), tone: NOTICE_TONES[event.kind], event });
      return;
    }
    // The boards' own notices say what happens to each; the fleet's aggregate state
    // (no device while one reconnects) would only repeat them.
    if (event.type === 'device-state' && event.device === this.boards?.id) return;
    // A device going between ok and idle at every job is routine (the rows show states).
    if (event.type === 'device-state' && QUIET_STATES.has(event.state)) return;
    this.send({ text: formatLogEvent(event), tone: TONES[event.type] ?? 'info', event });
  }

  private line(text: string, tone: LineTone): void {
    this.send({ text, tone });
  }

  private send(line: SessionLine): void {
    if (this.listenerCount('line') === 0) {
      this.backlog.push(line);
      if (this.backlog.length > 1000) this.backlog.shift();
    } else this.emit('line', line);
  }

  private drainBacklog(): void {
    if (this.listenerCount('line') === 0) return;
    const lines = this.backlog;
    this.backlog = [];
    for (const line of lines) this.emit('line', line);
  }
}

/**
 * Before mining on remote validators: is the key registered on every one of them? Failover
 * needs the key on each (the SDK moves to the next validator, which refuses an unknown key).
 *   - registered nowhere: an error with the exact `miner register` command (exit 4);
 *   - registered on some: the key is registered on the others too, with the device type it has
 *     where it is registered, and a banner line says so;
 *   - a validator that does not answer: a note; the work source registers the key there when
 *     it answers and refuses the key (see ClientWorkSource's `autoRegister`).
 */
async function checkRegistered(
  client: TensormineClient,
  source: ClientWorkSource,
  signer: Signer,
  urls: readonly string[],
  registerCommand: (urls: readonly string[]) => string,
): Promise<string[]> {
  const checks = await Promise.all(
    urls.map(async (url) => {
      try {
        const account = await client.miners.get(signer.publicKeyHex, { endpoint: url, retries: 0 });
        return { url, account, reason: undefined };
      } catch (error) {
        if (isUnreachable(error)) return { url, account: undefined, reason: failureReason(error) };
        throw error;
      }
    }),
  );
  const registered = checks.filter((c) => c.account?.registered === true);
  const missing = checks.filter((c) => c.account !== undefined && !c.account.registered);
  const unreachable = checks.filter((c) => c.account === undefined);
  if (registered.length === 0 && missing.length > 0) {
    const where = missing.map((c) => c.url);
    throw new CliError(
      'not_registered',
      `key ${signer.publicKeyHex} is not registered on ${where.join(', ')}`,
      [`register it with: ${registerCommand(urls)}`],
    );
  }
  if (unreachable.length === urls.length) {
    const tried = await source.probe();
    return [
      ` * note       no validator answers yet (tried ${tried.map((t) => `${t.url} (${t.reason})`).join(', ')}); mining starts when one does`,
    ];
  }
  const notes: string[] = [];
  const reference = registered[0];
  const deviceType = reference?.account?.device_type ?? undefined;
  if (deviceType) source.autoRegister = deviceType;
  for (const m of missing) {
    await client.miners.register(deviceType ? { device_type: deviceType } : {}, { endpoint: m.url });
    notes.push(
      ` * register   the key was registered on ${reference!.url} only: registered it on ${m.url} too (failover needs it on every validator)`,
    );
  }
  if (unreachable.length > 0) {
    notes.push(
      ` * note       could not check the key on ${unreachable.map((c) => `${c.url} (${c.reason})`).join(', ')}; it is registered there when that validator answers`,
    );
  }
  return notes;
}

/**
 * `mine --pool`: the key must be a member of the validator's pool. A member goes on; a key that
 * is not joins with --stake; without --stake the user is told how.
 */
async function ensurePoolMember(
  client: TensormineClient,
  signer: Signer,
  settings: MinerSettings,
  urls: readonly string[],
): Promise<string> {
  const url = client.endpoints().find((e) => e.active)?.url ?? urls[0]!;
  try {
    const info = await client.pool.info();
    if (info.type === 'solo') {
      throw new CliError('usage', `${url} runs no pool (pool_strategy solo)`, [
        'mine solo: leave out --pool',
        'or, as its operator: POST /admin/config {"pool_strategy": "pplns"}',
      ]);
    }
    const member = await client.pool.member(signer.publicKeyHex);
    const terms = `fee ${(info.fee_bps / 100).toFixed(2)} %, PPLNS window ${info.pplns_window_factor} x D`;
    if (member.member) {
      return ` * pool       member of ${info.type} pool on ${url} (stake ${member.stake} PTM, paid ${member.paid_total} PTM; ${terms})`;
    }
    if (settings.stake === undefined) {
      throw new CliError('usage', `key ${signer.publicKeyHex} is not a member of the pool on ${url}`, [
        `join with a stake: miner mine --pool --stake <ptm> (minimum_stake ${info.minimum_stake} PTM)`,
      ]);
    }
    const joined = await client.pool.join({ stake_amount: settings.stake });
    return ` * pool       joined the ${info.type} pool on ${url} with stake ${joined.stake_amount} PTM (${terms})`;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError('failure', `could not join the pool on ${url}: ${describeError(error)}`, [], {
      cause: error,
    });
  }
}

/** A pool event as a line: a pool block, a payout. */
function poolLine(event: PoolEvent): SessionLine {
  if (event.type === 'payout') {
    return {
      text: `pool payout ${event.amount} PTM (paid ${event.paidTotal} PTM in all)`,
      tone: 'good',
      event,
    };
  }
  return {
    text: `pool block ${event.height} ${event.blockHash.slice(0, 16)}${event.mine ? ' (yours)' : ''}: reward ${event.reward} PTM, fee ${event.fee} PTM`,
    tone: event.mine ? 'good' : 'info',
    event,
  };
}
