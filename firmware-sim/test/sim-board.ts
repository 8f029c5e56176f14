/**
 * Runs build/tm-sim on one end of a socat pseudo-terminal pair and talks to it from the other
 * end, as a host bridge would (test-only helper).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReadStream } from 'node:tty';
import { WAIT_TIMEOUT_MS } from '../../test-support/timeouts.ts';
import { waitFor, waitForValue, within } from '../../test-support/wait.ts';
import { buildDir } from './driver.ts';
import { encodeFrame, type Frame, FrameDecoder, MSG } from './frame-codec.ts';

/** True when socat is on the PATH. */
export const hasSocat: boolean = spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;

export class SimBoard {
  /** Every frame received from the board, in order. */
  readonly frames: Frame[] = [];
  readonly decoder = new FrameDecoder();
  stderr = '';
  exitCode: number | null = null;
  private seq = 0;
  private cursor = 0;
  private sim?: ChildProcess;
  private exited?: Promise<number | null>;

  private constructor(
    private readonly dir: string,
    private readonly socat: ChildProcess,
    private readonly fd: number,
    private readonly stream: ReadStream,
    readonly devicePath: string,
  ) {
    stream.on('data', (chunk: Buffer) => {
      this.frames.push(...this.decoder.push(chunk));
    });
    stream.on('error', () => {});
  }

  /** Creates the pty pair, opens the host end, then starts tm-sim on the device end. */
  static async start(args: readonly string[] = []): Promise<SimBoard> {
    const dir = mkdtempSync(join(tmpdir(), 'tm-sim-'));
    const devicePath = join(dir, 'device');
    const hostPath = join(dir, 'host');
    const socat = spawn('socat', [`pty,raw,echo=0,link=${devicePath}`, `pty,raw,echo=0,link=${hostPath}`], {
      stdio: 'ignore',
    });
    await waitFor(() => existsSync(devicePath) && existsSync(hostPath), 'socat to create the pty pair', {
      intervalMs: 10,
    });
    const fd = openSync(hostPath, 'r+');
    const board = new SimBoard(dir, socat, fd, new ReadStream(fd), devicePath);
    board.launch(args);
    return board;
  }

  /** Starts (or restarts) tm-sim on the device end. */
  launch(args: readonly string[]): void {
    const sim = spawn(join(buildDir, 'tm-sim'), ['--port', this.devicePath, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.sim = sim;
    this.exitCode = null;
    sim.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString('utf8');
    });
    this.exited = new Promise((resolve) => {
      sim.on('exit', (code) => {
        this.exitCode = code;
        resolve(code);
      });
    });
  }

  /** Resolves with tm-sim's exit code (rejects after `timeoutMs`, default: the suite's wait bound). */
  waitForExit(timeoutMs: number = WAIT_TIMEOUT_MS): Promise<number | null> {
    return within(this.exited ?? Promise.resolve(null), 'tm-sim to exit', timeoutMs);
  }

  /** Sends a frame with the next host seq; returns the seq. */
  send(type: number, payload?: Uint8Array): number {
    const seq = this.seq++ & 0xffff;
    this.write(encodeFrame(type, seq, payload));
    return seq;
  }

  /** Sends a frame with a chosen seq (a retransmission, or a deliberately reused seq). */
  sendWithSeq(type: number, seq: number, payload?: Uint8Array): void {
    this.write(encodeFrame(type, seq, payload));
  }

  write(bytes: Uint8Array): void {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(this.fd, bytes, offset);
  }

  /** Frames received after the mark (see mark()). */
  since(mark = this.cursor): Frame[] {
    return this.frames.slice(mark);
  }

  /** Remembers the current position: later waits only see newer frames. */
  mark(): number {
    this.cursor = this.frames.length;
    return this.cursor;
  }

  /**
   * The first frame after the mark that matches, waiting for it (up to `timeoutMs`, default:
   * the suite's wait bound, test-support/timeouts.ts).
   */
  next(match: (f: Frame) => boolean, timeoutMs?: number, what = 'a frame'): Promise<Frame> {
    return waitForValue(() => this.frames.slice(this.cursor).find(match), what, {
      intervalMs: 10,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      context: () =>
        `received since the mark: ${this.describe(this.since())}; tm-sim stderr:\n${this.stderr}`,
    });
  }

  /** The next frame of a type after the mark. */
  nextOfType(type: number, timeoutMs?: number): Promise<Frame> {
    return this.next((f) => f.type === type, timeoutMs, `a frame of type 0x${type.toString(16)}`);
  }

  /** Waits for BOOT and HELLO after a (re)start. */
  async booted(timeoutMs?: number): Promise<{ boot: Frame; hello: Frame }> {
    const boot = await this.nextOfType(MSG.BOOT, timeoutMs);
    const hello = await this.next(
      (f) => f.type === MSG.HELLO && f.at >= boot.at,
      timeoutMs,
      'HELLO after BOOT',
    );
    return { boot, hello };
  }

  describe(frames: readonly Frame[]): string {
    return frames.map((f) => `0x${f.type.toString(16)}#${f.seq}`).join(' ') || 'nothing';
  }

  async stop(): Promise<void> {
    if (this.sim && this.exitCode === null) {
      this.sim.kill('SIGTERM');
      await this.waitForExit().catch(() => this.sim?.kill('SIGKILL'));
    }
    this.stream.destroy();
    try {
      closeSync(this.fd);
    } catch {
      // already closed with the stream
    }
    this.socat.kill('SIGTERM');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export { MSG };
