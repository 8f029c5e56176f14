import type { SessionLine } from './session.js';

/**
 * `new job` lines at several blocks a second would swamp the log: at most one a second is
 * printed, followed by how many were left out (`(+12 more new jobs)`). Other lines pass.
 */
export class JobLineSummary {
  private lastAtMs = Number.NEGATIVE_INFINITY;
  private skipped = 0;
  constructor(
    private readonly everyMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The text to print for this line, or undefined to leave it out. */
  text(line: SessionLine): string | undefined {
    if (line.event?.type !== 'job') return line.text;
    const t = this.now();
    if (t - this.lastAtMs < this.everyMs) {
      this.skipped++;
      return undefined;
    }
    this.lastAtMs = t;
    const more = this.skipped;
    this.skipped = 0;
    return more > 0 ? `${line.text} (+${more} more new job${more === 1 ? '' : 's'})` : line.text;
  }
}
