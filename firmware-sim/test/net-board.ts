import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { WAIT_TIMEOUT_MS } from '../../test-support/timeouts.ts';
import { buildDir } from './driver.ts';

/**
 * A `tm-sim --net` board run by a test: its log lines as they come (each with the time it was
 * read), waits for a line, and its callback port.
 */
export class NetBoard {
  readonly lines: { at: number; text: string }[] = [];
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  #waiters: { re: RegExp; from: number; resolve: (m: RegExpExecArray) => void }[] = [];
  #partial = '';

  constructor(args: readonly string[]) {
    this.process = spawn(join(buildDir, 'tm-sim'), args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.process.stderr!.setEncoding('utf8');
    this.process.stderr!.on('data', (chunk: string) => {
      this.#partial += chunk;
      const parts = this.#partial.split('\n');
      this.#partial = parts.pop()!;
      for (const text of parts) this.#line(text);
    });
    this.exited = new Promise((resolve) => this.process.on('exit', (code) => resolve(code)));
  }

  #line(text: string): void {
    this.lines.push({ at: performance.now(), text });
    const index = this.lines.length - 1;
    this.#waiters = this.#waiters.filter((w) => {
      if (index < w.from) return true;
      const m = w.re.exec(text);
      if (m) w.resolve(m);
      return !m;
    });
  }

  /**
   * The first line matching `re` from line `from` on (0: any so far), within the tests' bound
   * of a wait (test-support/timeouts.ts; a bench gives its own).
   */
  waitFor(re: RegExp, from = 0, timeoutMs = WAIT_TIMEOUT_MS): Promise<RegExpExecArray> {
    for (let i = from; i < this.lines.length; i++) {
      const m = re.exec(this.lines[i]!.text);
      if (m) return Promise.resolve(m);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no line matching ${re} in ${timeoutMs} ms; the board said:\n${this.log(40)}`));
      }, timeoutMs);
      this.#waiters.push({
        re,
        from,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  /** Lines matching `re` so far (from line `from` on). */
  count(re: RegExp, from = 0): number {
    return this.lines.slice(from).filter((l) => re.test(l.text)).length;
  }

  /** The id of the job it works on now (its last `job … at` line), if any. */
  currentJob(): string | undefined {
    for (let i = this.lines.length - 1; i >= 0; i--) {
      const text = this.lines[i]!.text;
      const m = /job (h-\S+) at /.exec(text);
      if (m) return m[1];
      if (/ dropped: |block accepted: /.test(text)) return undefined;
    }
    return undefined;
  }

  /** The last `n` lines. */
  log(n = 20): string {
    return this.lines
      .slice(-n)
      .map((l) => l.text)
      .join('\n');
  }

  /** The callback port it listens on (from its first line). */
  async port(): Promise<number> {
    return Number((await this.waitFor(/callback port (\d+)/))[1]);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill(signal);
    return this.exited;
  }
}
