import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { buildFirmware, TM_SIM } from '../../../test-support/firmware.ts';
import { WAIT_TIMEOUT_MS } from '../../../test-support/timeouts.ts';
import { waitFor } from '../../../test-support/wait.ts';

/**
 * End-to-end helpers: a socat pseudo-terminal pair (one end for the host, one for the board)
 * and the simulated board `firmware-sim/build/tm-sim` on it. Both are optional on a developer
 * machine (the tests that need them are skipped with a message); CI has both.
 */
export { TM_SIM };

export function hasSocat(): boolean {
  return spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;
}

/**
 * Whether tm-sim is built: the run's global set-up built it (test-support/firmware.ts); `make`
 * here finds it up to date, or rebuilds it after a change to the C sources.
 */
export function hasTmSim(): boolean {
  try {
    buildFirmware();
  } catch {
    return false;
  }
  return existsSync(TM_SIM);
}

/** Why the end-to-end tests cannot run here, or undefined when they can. */
export function e2eUnavailable(): string | undefined {
  if (!hasSocat()) return 'socat is not installed (apt-get install socat): skipping the pty end-to-end tests';
  if (!hasTmSim()) return `${TM_SIM} is missing and could not be built (make -C firmware-sim): skipping`;
  return undefined;
}

/**
 * A test that fails when the end-to-end tests cannot run, so that `npm test` never passes
 * silently without them; `TENSORMINE_SKIP_PTY=1` skips them knowingly (the reason is printed).
 */
export function requirePty(
  unavailable: string | undefined,
  test: (name: string, fn: () => void) => void,
): void {
  if (unavailable === undefined) return;
  if (process.env.TENSORMINE_SKIP_PTY === '1') {
    console.warn(`${unavailable} (TENSORMINE_SKIP_PTY=1)`);
    return;
  }
  test('the pty end-to-end tests can run here (socat, firmware-sim/build/tm-sim)', () => {
    throw new Error(
      `${unavailable}; install it (apt-get install socat make gcc zlib1g-dev), or set TENSORMINE_SKIP_PTY=1 to skip these tests knowingly`,
    );
  });
}

export interface PtyPair {
  /** The end the host opens. */
  readonly host: string;
  /** The end tm-sim opens. */
  readonly device: string;
  close(): Promise<void>;
}

const children = new Set<ChildProcess>();

/** Starts `socat -d -d pty,raw,echo=0 pty,raw,echo=0` and reads the two paths it prints. */
export function ptyPair(): Promise<PtyPair> {
  const socat = spawn('socat', ['-d', '-d', 'pty,raw,echo=0', 'pty,raw,echo=0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(socat);
  return new Promise((resolve, reject) => {
    const paths: string[] = [];
    let text = '';
    const timer = setTimeout(() => reject(new Error(`socat printed no ptys: ${text}`)), WAIT_TIMEOUT_MS);
    socat.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      for (const m of text.matchAll(/PTY is (\S+)/g)) if (!paths.includes(m[1]!)) paths.push(m[1]!);
      if (paths.length === 2 && text.includes('starting data transfer loop')) {
        clearTimeout(timer);
        resolve({ host: paths[0]!, device: paths[1]!, close: () => stop(socat) });
      }
    });
    socat.on('exit', () => reject(new Error(`socat exited: ${text}`)));
  });
}

export interface Sim {
  readonly process: ChildProcess;
  /** Everything tm-sim logged so far. */
  log(): string;
  /** Nonces of every RESULT frame tm-sim sent (retransmissions included). */
  resultNonces(): number[];
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts tm-sim on `port` with extra arguments. */
export function startSim(port: string, args: readonly string[] = []): Sim {
  const child = spawn(TM_SIM, ['--port', port, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let text = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return {
    process: child,
    log: () => text,
    resultNonces: () => [...text.matchAll(/-> RESULT seq \d+ job \d+ nonce (\d+)/g)].map((m) => Number(m[1])),
    waitForLog: (pattern, timeoutMs) =>
      waitFor(() => pattern.test(text), `tm-sim to log ${pattern}`, {
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        context: () => text,
      }),
    stop: () => stop(child),
  };
}

function stop(child: ChildProcess): Promise<void> {
  children.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Stops every socat and tm-sim these helpers started. */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((c) => stop(c)));
}
