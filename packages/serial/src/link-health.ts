import type { SessionStats } from './session.js';

/** Link trouble (CRC errors + resyncs + retransmissions) within LINK_WINDOW_MS that makes a link `degraded`. */
export const LINK_DEGRADED_EVENTS = 3;
const LINK_WINDOW_MS = 10_000;
/** A degraded link is reported again only after this long without trouble. */
const LINK_CLEAN_MS = 30_000;

export interface LinkCounts {
  /** Frames dropped for a bad CRC. */
  crcErrors: number;
  /** Times the receiver resynchronised: a false start (bad header) or a stale partial frame dropped. */
  resyncs: number;
  /** Frames sent again: by the host (no ACK in time) and RESULTs the board sent again. */
  retransmissions: number;
}

function counts(s: SessionStats | undefined): LinkCounts {
  if (!s) return { crcErrors: 0, resyncs: 0, retransmissions: 0 };
  return {
    crcErrors: s.decoder.crcErrors,
    resyncs: s.decoder.badHeaders + s.decoder.staleFragments,
    retransmissions: s.retransmits + s.duplicateResults,
  };
}

/**
 * A board's link counters over all its sessions (a replug opens a new session on another port,
 * an explicit port keeps one session across reconnects), and the watch that says when the link
 * is degraded: LINK_DEGRADED_EVENTS or more troubles within 10 s, reported once, again only
 * after 30 s without trouble.
 */
export class LinkHealth {
  /** Counts of sessions no longer attached. */
  private readonly base: LinkCounts = { crcErrors: 0, resyncs: 0, retransmissions: 0 };
  /** The attached session's counts when it was attached. */
  private atAttach: LinkCounts = { crcErrors: 0, resyncs: 0, retransmissions: 0 };
  private attached = false;
  private readonly samples: { atMs: number; total: number }[] = [];
  private degradedUntilMs: number | undefined;

  attach(stats: SessionStats): void {
    this.atAttach = counts(stats);
    this.attached = true;
  }

  detach(stats: SessionStats): void {
    const now = counts(stats);
    this.base.crcErrors += now.crcErrors - this.atAttach.crcErrors;
    this.base.resyncs += now.resyncs - this.atAttach.resyncs;
    this.base.retransmissions += now.retransmissions - this.atAttach.retransmissions;
    this.attached = false;
  }

  /** The totals, given the attached session's stats (undefined: none attached). */
  totals(stats: SessionStats | undefined): LinkCounts {
    if (!this.attached || stats === undefined) return { ...this.base };
    const now = counts(stats);
    return {
      crcErrors: this.base.crcErrors + now.crcErrors - this.atAttach.crcErrors,
      resyncs: this.base.resyncs + now.resyncs - this.atAttach.resyncs,
      retransmissions: this.base.retransmissions + now.retransmissions - this.atAttach.retransmissions,
    };
  }

  /** Called about once a second: the `link-degraded` message when the link just became degraded. */
  watch(nowMs: number, stats: SessionStats | undefined): string | undefined {
    const t = this.totals(stats);
    const total = t.crcErrors + t.resyncs + t.retransmissions;
    this.samples.push({ atMs: nowMs, total });
    while (this.samples.length > 1 && this.samples[0]!.atMs < nowMs - LINK_WINDOW_MS) this.samples.shift();
    const first = this.samples[0]!;
    const recent = total - first.total;
    if (this.degradedUntilMs !== undefined) {
      // Degraded already: stays so while trouble goes on, reported again after a clean spell.
      if (recent > 0) this.degradedUntilMs = Math.max(this.degradedUntilMs, nowMs + LINK_WINDOW_MS);
      else if (nowMs >= this.degradedUntilMs) this.degradedUntilMs = undefined;
      return undefined;
    }
    if (recent < LINK_DEGRADED_EVENTS) return undefined;
    this.degradedUntilMs = nowMs + LINK_CLEAN_MS;
    const seconds = Math.round((nowMs - first.atMs) / 1000);
    const parts = [
      ...(t.crcErrors > 0 ? [`${t.crcErrors} CRC errors`] : []),
      ...(t.resyncs > 0 ? [`${t.resyncs} resyncs`] : []),
      ...(t.retransmissions > 0 ? [`${t.retransmissions} retransmissions`] : []),
    ];
    return `${recent} link errors in ${seconds} s (total ${parts.join(', ')})`;
  }
}
