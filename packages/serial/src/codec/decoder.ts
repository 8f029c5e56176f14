import {
  CRC_BYTES,
  FRAME_VERSION,
  type Frame,
  frameCrc,
  HEADER_BYTES,
  MAGIC_0,
  MAGIC_1,
  MAX_PAYLOAD,
} from './frame.js';

/** What the decoder has seen, cumulative. */
export interface DecoderStats {
  /** Valid frames delivered. */
  frames: number;
  /** Bytes dropped because they were not part of a valid frame (text, noise, bad frames' magic). */
  garbageBytes: number;
  /** Candidate frames whose CRC did not match. */
  crcErrors: number;
  /** Candidate headers with a version other than 1 or a length over 1024. */
  badHeaders: number;
  /** Partial frames discarded because they were older than the partial-frame timeout. */
  staleFragments: number;
}

export interface FrameDecoderOptions {
  /** A partial frame older than this is discarded, ms (default 1000: section 2). */
  readonly partialTimeoutMs?: number;
  /** The clock, ms (tests inject a fake one). */
  readonly now?: () => number;
}

/**
 * The streaming frame decoder of docs/serial-protocol.md section 2: push bytes as they arrive,
 * get the complete valid frames. It resynchronises exactly as the document says: it looks for
 * `A5 5A`, drops what precedes it as garbage, and on a bad header (version, length) or a bad
 * CRC drops only the first byte of that magic and searches again, because the real frame may
 * start inside the bad one. A frame split over several pushes and several frames in one push
 * are handled alike. A partial frame whose first byte arrived more than `partialTimeoutMs` ago
 * is discarded (its first byte dropped and the search repeated) before new bytes join it, so a
 * lost tail never swallows a later frame.
 */
export class FrameDecoder {
  readonly stats: DecoderStats = {
    frames: 0,
    garbageBytes: 0,
    crcErrors: 0,
    badHeaders: 0,
    staleFragments: 0,
  };
  private readonly partialTimeoutMs: number;
  private readonly now: () => number;
  private buf = new Uint8Array(2048);
  private start = 0;
  private end = 0;
  /** Absolute stream offset of buf[start]. */
  private consumed = 0;
  /** Arrival times of the buffered chunks: [absolute end offset, time], oldest first. */
  private chunks: [number, number][] = [];

  constructor(options: FrameDecoderOptions = {}) {
    this.partialTimeoutMs = options.partialTimeoutMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /** Bytes held (the start of a frame not yet complete). */
  get buffered(): number {
    return this.end - this.start;
  }

  /** Feeds received bytes; returns the frames they complete, in order. */
  push(bytes: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    this.expire(frames);
    if (bytes.length > 0) {
      this.append(bytes);
      this.chunks.push([this.consumed + this.buffered, this.now()]);
      this.scan(frames);
    }
    return frames;
  }

  /**
   * Discards a partial frame older than the timeout and returns any frame found behind it.
   * `push` does this itself; a caller may also run it from a timer.
   */
  expire(into: Frame[] = []): Frame[] {
    const now = this.now();
    while (this.buffered > 0 && now - this.headTime() > this.partialTimeoutMs) {
      this.stats.staleFragments++;
      this.drop(1, true);
      this.scan(into);
    }
    return into;
  }

  /** Forgets everything buffered (e.g. after a baud change). Counted as garbage. */
  reset(): void {
    this.drop(this.buffered, true);
  }

  private scan(out: Frame[]): void {
    for (;;) {
      const n = this.buffered;
      if (n === 0) return;
      const b = this.buf;
      const s = this.start;
      // 1. Find the magic; keep a trailing A5 that may be its first half.
      let at = -1;
      for (let i = s; i < this.end - 1; i++) {
        if (b[i] === MAGIC_0 && b[i + 1] === MAGIC_1) {
          at = i;
          break;
        }
      }
      if (at < 0) {
        const keep = b[this.end - 1] === MAGIC_0 ? 1 : 0;
        this.drop(n - keep, true);
        return;
      }
      if (at > s) this.drop(at - s, true);
      // 2. The header.
      if (this.buffered < HEADER_BYTES) return;
      const h = this.start;
      const version = b[h + 2]!;
      const length = b[h + 6]! | (b[h + 7]! << 8);
      if (version !== FRAME_VERSION || length > MAX_PAYLOAD) {
        this.stats.badHeaders++;
        this.drop(1, true);
        continue;
      }
      // 3. The whole frame and its CRC.
      const total = HEADER_BYTES + length + CRC_BYTES;
      if (this.buffered < total) return;
      const crcAt = h + HEADER_BYTES + length;
      const crc = (b[crcAt]! | (b[crcAt + 1]! << 8) | (b[crcAt + 2]! << 16) | (b[crcAt + 3]! << 24)) >>> 0;
      if (crc !== frameCrc(b, length, h)) {
        this.stats.crcErrors++;
        this.drop(1, true);
        continue;
      }
      // 4. Deliver.
      out.push({
        type: b[h + 3]!,
        seq: b[h + 4]! | (b[h + 5]! << 8),
        payload: b.slice(h + HEADER_BYTES, crcAt),
      });
      this.stats.frames++;
      this.drop(total, false);
    }
  }

  private headTime(): number {
    for (const [endAt, time] of this.chunks) if (endAt > this.consumed) return time;
    return this.now();
  }

  private drop(count: number, garbage: boolean): void {
    if (count <= 0) return;
    if (garbage) this.stats.garbageBytes += count;
    this.start += count;
    this.consumed += count;
    while (this.chunks.length > 0 && this.chunks[0]![0] <= this.consumed) this.chunks.shift();
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
    }
  }

  private append(bytes: Uint8Array): void {
    const n = this.buffered;
    if (this.end + bytes.length > this.buf.length) {
      if (n + bytes.length <= this.buf.length && this.start > 0) {
        this.buf.copyWithin(0, this.start, this.end);
      } else {
        const bigger = new Uint8Array(Math.max(this.buf.length * 2, n + bytes.length));
        bigger.set(this.buf.subarray(this.start, this.end));
        this.buf = bigger;
      }
      this.start = 0;
      this.end = n;
    }
    this.buf.set(bytes, this.end);
    this.end += bytes.length;
  }
}
