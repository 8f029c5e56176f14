import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../../../test-support/ports.ts';
import { HA_START_TIMEOUT_MS, HA_STEP_TIMEOUT_MS } from '../../../../test-support/timeouts.ts';
import { waitFor } from '../../../../test-support/wait.ts';

/**
 * The highly available topology of docs/cluster.md for tests and benches, started by the very
 * script the document gives operators (`scripts/ha-up.sh`): one etcd, PostgreSQL nodes under
 * Patroni (a primary and a synchronous standby), HAProxy in front of PostgreSQL and of the
 * validator nodes, and the validator nodes. Every port is a free one of 127.0.0.1, every file is
 * in a fresh temporary directory; as root the database servers run as `nobody` (the script's
 * HA_USER). `stop()` ends it all (so does the death of this process: the script stops when its
 * standard input closes) and removes the directory.
 */
export interface HaCluster {
  /** The validators through HAProxy. */
  readonly url: string;
  /** Each validator node, directly. */
  readonly nodeUrls: readonly string[];
  /** The validators' database through HAProxy (the current primary). */
  readonly databaseUrl: string;
  /** PostgreSQL's superuser through HAProxy. */
  readonly superuserUrl: string;
  readonly adminToken: string;
  /** Patroni's REST API of each PostgreSQL node. */
  readonly patroni: readonly string[];
  /** Each PostgreSQL node's data directory. */
  readonly dataDirs: readonly string[];
  readonly dir: string;
  /** The index of the node Patroni runs as the primary (answers 200 on /primary), if any. */
  primary(): Promise<number | undefined>;
  /** Patroni's view of the members (GET /cluster of any node that answers). */
  members(): Promise<PatroniMember[]>;
  /** SIGKILL to the postmaster of node `index` (its PID from postmaster.pid). */
  kill9Postmaster(index: number): number;
  /** Changes Patroni's dynamic configuration (PATCH /config), e.g. `{ synchronous_mode: false }`. */
  patchConfig(patch: Record<string, unknown>): Promise<void>;
  /** The last lines of every server's log, for a failure message. */
  logs(lines?: number): string;
  stop(): Promise<void>;
}

export interface PatroniMember {
  readonly name: string;
  /** leader, sync_standby, replica (Patroni 3.0). */
  readonly role: string;
  /** running, streaming, starting, stopped... */
  readonly state: string;
  readonly timeline?: number;
  readonly lag?: number | string;
}

export interface StartHaOptions {
  /** Variables for the validator nodes (TENSORMINE_*) and the script (HA_*). */
  readonly env?: Readonly<Record<string, string>>;
  readonly pgNodes?: number;
  readonly validators?: number;
  /** HA_SYNC: on (default), strict or off. */
  readonly sync?: 'on' | 'strict' | 'off';
  /** How long the whole topology may take to come up. Default HA_START_TIMEOUT_MS (test-support/timeouts.ts). */
  readonly startTimeoutMs?: number;
}

const SCRIPT = join(import.meta.dirname, '..', '..', '..', '..', 'scripts', 'ha-up.sh');

export async function startHaCluster(options: StartHaOptions = {}): Promise<HaCluster> {
  const pgNodes = options.pgNodes ?? 2;
  const validators = options.validators ?? 2;
  const dir = mkdtempSync(join(tmpdir(), 'tensormine-ha-'));
  chmodSync(dir, 0o755); // the unprivileged servers reach their directories through it
  const ports = await freePorts(5 + 2 * pgNodes + validators);
  const take = (n: number) => ports.splice(0, n).join(' ');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HA_DIR: dir,
    HA_STOP_ON_EOF: '1',
    HA_PG_NODES: String(pgNodes),
    HA_VALIDATORS: String(validators),
    HA_SYNC: options.sync ?? 'on',
    HA_ETCD_PORT: take(1),
    HA_ETCD_PEER_PORT: take(1),
    HA_PG_PROXY_PORT: take(1),
    HA_HTTP_PORT: take(1),
    HA_STATS_PORT: take(1),
    HA_PG_PORTS: take(pgNodes),
    HA_REST_PORTS: take(pgNodes),
    HA_VALIDATOR_PORTS: take(validators),
    TENSORMINE_LOG_LEVEL: 'warn',
    ...options.env,
  };
  const child = spawn('bash', [SCRIPT], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-16_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const logs = (lines = 30) => {
    let text = `scripts/ha-up.sh:\n${out}\n`;
    for (const name of ['etcd', 'haproxy', ...range(pgNodes).map((i) => `patroni-pg${i + 1}`)]) {
      text += `--- ${name}.log\n${tail(join(dir, 'logs', `${name}.log`), lines)}\n`;
    }
    for (const i of range(validators)) {
      text += `--- validator-${i + 1}.log\n${tail(join(dir, 'logs', `validator-${i + 1}.log`), 3 * lines)}\n`;
    }
    return text;
  };
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      child.stdin.end();
      // The script stops the validators, HAProxy, Patroni (and its PostgreSQL), etcd, each
      // within 30 s; past that, it is killed.
      const timer = setTimeout(() => child.kill('SIGKILL'), HA_STEP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timeoutMs = options.startTimeoutMs ?? HA_START_TIMEOUT_MS;
      const timer = setTimeout(() => reject(new Error(`not ready after ${timeoutMs} ms`)), timeoutMs);
      const onData = () => {
        if (/^ha: ready$/m.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`scripts/ha-up.sh exited (${code ?? signal}) before it was ready`));
      });
    });
  } catch (error) {
    const text = logs();
    await stop();
    throw new Error(`${(error as Error).message}\n${text}`);
  }

  const vars = parseEnv(readFileSync(join(dir, 'ha.env'), 'utf8'));
  const list = (name: string) => (vars[name] ?? '').split(' ').filter((s) => s !== '');
  const patroni = list('HA_PATRONI_URLS');
  const dataDirs = list('HA_PG_DATA_DIRS');
  const primary = async () => {
    for (const [i, url] of patroni.entries()) {
      if ((await status(`${url}/primary`)) === 200) return i;
    }
    return undefined;
  };
  return {
    url: vars.HA_URL!,
    nodeUrls: list('HA_VALIDATOR_URLS'),
    databaseUrl: vars.HA_DATABASE_URL!,
    superuserUrl: vars.HA_PG_SUPERUSER_URL!,
    adminToken: vars.HA_ADMIN_TOKEN!,
    patroni,
    dataDirs,
    dir,
    primary,
    async members() {
      for (const url of patroni) {
        try {
          const res = await fetch(`${url}/cluster`, { signal: AbortSignal.timeout(5_000) });
          if (res.ok) return ((await res.json()) as { members: PatroniMember[] }).members;
        } catch {
          // that node's Patroni does not answer: ask the next
        }
      }
      return [];
    },
    kill9Postmaster(index) {
      const file = join(dataDirs[index]!, 'postmaster.pid');
      const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
      if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`${file}: no PID`);
      process.kill(pid, 'SIGKILL');
      return pid;
    },
    async patchConfig(patch) {
      const res = await fetch(`${patroni[(await primary()) ?? 0]}/config`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(patch),
      });
      if (!res.ok) throw new Error(`PATCH /config: ${res.status} ${await res.text()}`);
    },
    logs,
    stop,
  };
}

async function status(url: string): Promise<number | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    await res.body?.cancel();
    return res.status;
  } catch {
    return undefined;
  }
}

function parseEnv(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line);
    if (match) vars[match[1]!] = match[2]!.replace(/^"(.*)"$/, '$1');
  }
  return vars;
}

function tail(file: string, lines: number): string {
  if (!existsSync(file)) return '(none)';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** Waits until `check` holds (test-support's waitFor, polling every 100 ms), or fails after `ms`. */
export function until(what: string, check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  return waitFor(check, what, { timeoutMs: ms, intervalMs: 100 });
}
