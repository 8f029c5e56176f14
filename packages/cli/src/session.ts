import { EventEmitter } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Signer, TensormineClient } from '@tensormine/client';
import {
  applyCpuChange,
  ControlRefusal,
  type ControlTarget,
  type DeviceBackend,
  type DeviceNoticeKind,
  formatLogEvent,
  Miner,
  type MinerLogEvent,
  MiningEngine,
  selectKernel,
} from '@tensormine/miner';
import type { ControlApi } from '@tensormine/miner/control-api';
import type { MinerConfig, MinerConfigChange, MinerConfigResult } from '@tensormine/protocol';
import { formatAmount, formatCoord, parseAmount } from '@tensormine/protocol';
import type { StatusProxy } from '@tensormine/status-proxy';
import { boardDetail } from './board-counters.js';
import { connect } from './connection.js';
import { type DataLock, takeLock } from './data-lock.js';
import { CliError, describeError } from './errors.js';
import { loadOrCreateSigner, loadSigner } from './key-file.js';
import type { LocalValidator } from './local-validator.js';
import type { DeviceRow, Snapshot, SoloWallet } from './reports.js';
import type { SerialBoards } from './serial-boards.js';
import type { MinerSettings } from './settings.js';
import type { ClientWorkSource, PoolEvent } from './work-source.js';

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
  /** Lines to show at once while the session opens (the native kernels' first compile). */
  readonly onProgress?: (line: string) => void;
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

export class MiningSession extends EventEmitter<SessionEvents> implements SessionView, ControlTarget {
  /** The settings in force: as started, then as the control API changed them. */
  settings: MinerSettings;
  readonly signer: Signer;
  /** The network side and the Miner of the current mining run (a restart replaces them). */
  client: TensormineClient;
  source: ClientWorkSource;
  miner: Miner;
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
  private readonly backends: readonly DeviceBackend[];
  private readonly retryDelayMs: number | undefined;
  private detachRun: (() => void) | undefined;
  /** Solo mining: the key's PTM balance, read every WALLET_REFRESH_MS (not per block). */
  private wallet: SoloWallet | undefined;
  private walletBaseline: bigint | undefined;
  private walletTimer: NodeJS.Timeout | undefined;
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
    backends: readonly DeviceBackend[];
    retryDelayMs: number | undefined;
  }) {
    super();
    this.locks = parts.locks;
    this.backends = parts.backends;
    this.retryDelayMs = parts.retryDelayMs;
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
        if (local.note !== undefined) banner.push(` * difficulty ${local.note}`);
      } else {
        signer = await loadSigner(settings.key);
        banner.push(` * key        ${signer.publicKeyHex} (${settings.key})`);
        banner.push(` * validator  ${urls.join(', ')}${urls.length > 1 ? ' (failover in this order)' : ''}`);
      }
      const connection = await connect(settings, signer, urls, local !== undefined);
      const { client, source } = connection;
      cleanup.push(() => client.close());
      cleanup.push(async () => source.close());
      banner.push(...connection.notes);

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
        const { kernel, notice } = await selectKernel(
          settings.kernel,
          options.onProgress === undefined ? {} : { onProgress: options.onProgress },
        );
        banner.push(
          ` * cpu        ${settings.threads} thread${settings.threads === 1 ? '' : 's'}, intensity ${settings.intensity}, kernel ${kernel}`,
        );
        if (notice !== undefined) banner.push(` * ${notice}`);
      }
      let boards: SerialBoards | undefined;
      let session: MiningSession | undefined;
      if (settings.devices.length > 0) {
        const { openSerialBoards } = await import('./serial-boards.js');
        // The journal of the current mining run (a restart replaces the Miner).
        boards = await openSerialBoards({ devices: settings.devices, journal: () => session?.miner.journal });
        backends.push(boards);
        banner.push(` * boards     ${settings.devices.join(', ')}`);
      }
      const miner = newMiner(source, backends, settings, options.retryDelayMs, false);
      banner.push(` * journal    ${settings.journal}`);
      session = new MiningSession({
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
        backends,
        retryDelayMs: options.retryDelayMs,
      });
      return session;
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
    this.attachRun();
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
    const { apiPort, apiToken, apiHost } = this.settings;
    if (apiPort !== undefined && apiToken !== undefined) {
      try {
        const { startControlApi } = await import('@tensormine/miner/control-api');
        this.api = await startControlApi({
          target: this,
          token: apiToken,
          host: apiHost,
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
      this.line(
        `control API and page on ${this.api.url}/ (GET /metrics for Prometheus; changes need the token)`,
        'info',
      );
    }
    if (this.settings.dashboard) {
      const { createStatusProxy } = await import('@tensormine/status-proxy');
      const validators = this.client.endpoints().map((e) => e.url);
      this.dashboard = await createStatusProxy({ validators, logger: false });
      this.dashboardUrl = `${await this.dashboard.listen({ host: '127.0.0.1', port: 0 })}/`;
      this.line(`dashboard on ${this.dashboardUrl} (live lattice of ${validators.join(', ')})`, 'info');
    }
    this.watchWallet();
  }

  pause(): void {
    this.miner.pause();
  }

  resume(): void {
    this.miner.resume();
  }

  /**
   * Solo mining: reads the key's PTM balance now and every WALLET_REFRESH_MS; the first reading
   * is the baseline of what this run earned. A failed read keeps the last one.
   */
  private watchWallet(): void {
    if (this.settings.pool || this.walletTimer !== undefined) return;
    const read = async () => {
      if (this.settings.pool) return;
      try {
        const { balances } = await this.client.economy.balances(this.signer.publicKeyHex, { retries: 0 });
        const ptm = balances.find((b) => b.token === 'PTM');
        if (ptm === undefined) return;
        const total = parseAmount(ptm.total, 'PTM');
        this.walletBaseline ??= total;
        this.wallet = {
          balance: ptm.total,
          earned: formatAmount(total - this.walletBaseline, 'PTM'),
          checkedAtMs: Date.now(),
        };
      } catch {
        // the validator is busy or away: the last reading stays on screen with its age
      }
    };
    void read();
    this.walletTimer = setInterval(() => void read(), WALLET_REFRESH_MS);
    this.walletTimer.unref();
  }

  /** The control API's view of the miner (ControlTarget). */
  stats() {
    return this.miner.stats();
  }

  /** The settings in force (GET /api/config). */
  config(): MinerConfig {
    const s = this.settings;
    return {
      cpu: s.cpu,
      threads: this.engine?.threads ?? s.threads,
      intensity: this.engine?.intensity ?? s.intensity,
      kernel: this.engine?.kernelChoice ?? s.kernel,
      kernelInUse: this.engine === undefined ? null : this.engine.kernel,
      validators: this.local ? [this.local.url] : [...s.urls],
      local: this.local !== undefined,
      pool: s.pool,
      protocol: s.protocol,
      devices: [...s.devices],
      paused: this.miner.paused,
    };
  }

  /**
   * POST /api/config: threads, intensity and kernel on the CPU engine; validators and pool
   * membership by a new mining run (rerun). In memory: the next start reads the settings again.
   */
  async configure(change: MinerConfigChange): Promise<MinerConfigResult> {
    const s = this.settings;
    if (change.validators !== undefined && this.local) {
      throw new ControlRefusal(
        'validators: this miner mines against its --local validator (start it without --local)',
      );
    }
    const cpuChange =
      change.threads !== undefined || change.intensity !== undefined || change.kernel !== undefined;
    if (cpuChange && this.engine === undefined) {
      throw new ControlRefusal('threads, intensity, kernel: this miner does not mine on the CPU (--no-cpu)');
    }
    const validators = change.validators === undefined ? undefined : normalizeUrls(change.validators);
    const network =
      (validators !== undefined && validators.join(' ') !== s.urls.join(' ')) ||
      (change.pool !== undefined && change.pool !== s.pool);
    const before = this.config();
    let result: MinerConfigResult = { config: before, applied: [], restarted: 'none' };
    if (network) {
      await this.rerun({
        ...s,
        ...(validators === undefined ? {} : { urls: validators }),
        ...(change.pool === undefined ? {} : { pool: change.pool }),
        ...(change.stake === undefined ? {} : { stake: change.stake }),
      });
    }
    if (cpuChange && this.engine !== undefined) {
      result = await applyCpuChange(this.engine, change, () => this.config());
      this.settings = {
        ...this.settings,
        threads: this.engine.threads,
        intensity: this.engine.intensity,
        kernel: this.engine.kernelChoice,
      };
      const notice = this.engine.kernelSelection?.notice;
      if (notice !== undefined && change.kernel !== undefined) this.line(notice, 'warn');
    }
    const applied = [
      ...(network && validators !== undefined ? ['validators'] : []),
      ...(network && change.pool !== undefined && change.pool !== s.pool ? ['pool'] : []),
      ...result.applied,
    ];
    const after = this.config();
    if (applied.length > 0) {
      const shown = (name: string) => {
        const v = (c: MinerConfig) =>
          name === 'validators' ? c.validators.join(', ') : String(c[name as keyof MinerConfig]);
        return `${name} ${v(before)} -> ${v(after)}`;
      };
      this.line(
        `control API: ${applied.map(shown).join(', ')}${network ? ' (new mining run)' : result.restarted === 'workers' ? ' (workers restarted)' : ''}`,
        'info',
      );
    }
    return { config: after, applied, restarted: network ? 'run' : result.restarted };
  }

  /** POST /api/system/restart: a new mining run with the settings in force. */
  async restart(): Promise<void> {
    await this.rerun(this.settings);
    this.line('control API: mining run restarted', 'info');
  }

  /**
   * Stops the mining run and starts a new one with `next` (the devices, the journal, the control
   * API and a --local validator are kept). The new connection is made first: when it fails (a
   * validator that refuses the key, a pool that cannot be joined) the run in progress goes on
   * and the change is refused.
   */
  private async rerun(next: MinerSettings): Promise<void> {
    let connection: Awaited<ReturnType<typeof connect>>;
    try {
      connection = await connect(
        next,
        this.signer,
        this.local ? [this.local.url] : next.urls,
        this.local !== undefined,
        true,
      );
    } catch (error) {
      throw new ControlRefusal(describeError(error));
    }
    const paused = this.miner.paused;
    this.detachRun?.();
    await this.miner.stop();
    this.source.close();
    await this.client.close();
    this.client = connection.client;
    this.source = connection.source;
    this.miner = newMiner(connection.source, this.backends, next, this.retryDelayMs, paused);
    this.settings = next;
    // Other validators hold another ledger: what the run earned starts again from there.
    this.wallet = undefined;
    this.walletBaseline = undefined;
    this.attachRun();
    for (const note of connection.notes) this.line(note.replace(/^ \* +/, ''), 'info');
    await this.miner.start();
    this.watchWallet();
  }

  /** Listens to the current run's Miner and WorkSource (lines and pool events). */
  private attachRun(): void {
    const onLog = (event: MinerLogEvent) => this.onLog(event);
    const onPool = (event: PoolEvent) => this.send(poolLine(event));
    const { miner, source } = this;
    miner.on('log', onLog);
    source.on('pool', onPool);
    this.detachRun = () => {
      miner.off('log', onLog);
      source.off('pool', onPool);
    };
  }

  /** Stops everything, once: the miner (workers, boards; the journal flushed), the API, the client, the local validator. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.walletTimer);
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
          detail: boardDetail(b, units.get(b.id), nowMs),
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
      wallet: this.wallet,
      dashboardUrl: this.dashboardUrl,
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

/** How often solo mining reads the key's balance for the screen. */
const WALLET_REFRESH_MS = 30_000;

/** The Miner of a mining run over these backends. */
function newMiner(
  source: ClientWorkSource,
  backends: readonly DeviceBackend[],
  settings: MinerSettings,
  retryDelayMs: number | undefined,
  paused: boolean,
): Miner {
  return new Miner({
    source,
    backends,
    journal: settings.journal,
    paused,
    ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
  });
}

/** Validator URLs as the settings keep them (no trailing slash). */
function normalizeUrls(urls: readonly string[]): string[] {
  return urls.map((u) => u.replace(/\/+$/, ''));
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
