import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameDecoder } from './decoder.js';
import { encodeFrame, FRAME_OVERHEAD, type Frame, MAX_PAYLOAD } from './frame.js';

const frame = (type: number, seq: number, payload: number[] | Uint8Array): Frame => ({
  type,
  seq,
  payload: Uint8Array.from(payload),
});

const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const ascii = (text: string) => new TextEncoder().encode(text);

describe('encodeFrame', () => {
  it('lays out magic, version, type, seq, length, payload and the CRC of bytes 2..8+N', () => {
    const bytes = encodeFrame(frame(0x42, 0x1234, [1, 2, 3]));
    expect([...bytes.subarray(0, 8)]).toEqual([0xa5, 0x5a, 1, 0x42, 0x34, 0x12, 3, 0]);
    expect([...bytes.subarray(8, 11)]).toEqual([1, 2, 3]);
    const crc = new DataView(bytes.buffer).getUint32(11, true);
    expect(crc).toBe(crc32(bytes.subarray(2, 11)));
    expect(bytes.length).toBe(3 + FRAME_OVERHEAD);
  });

  it('matches the CRC-32 check value of ISO-HDLC', () => {
    expect(crc32(ascii('123456789'))).toBe(0xcbf43926);
  });

  it('rejects a payload over 1024 bytes, a seq over u16 and a type over u8', () => {
    expect(() => encodeFrame(frame(1, 0, new Uint8Array(MAX_PAYLOAD + 1)))).toThrow(
      'payload: expected at most 1024 bytes, got 1025',
    );
    expect(() => encodeFrame(frame(1, 65536, []))).toThrow(
      'seq: expected an integer in [0, 65535], got 65536',
    );
    expect(() => encodeFrame(frame(256, 0, []))).toThrow('type: expected an integer in [0, 255], got 256');
  });
});

describe('FrameDecoder', () => {
  const a = frame(0x42, 7, [9, 8, 7, 6]);
  const b = frame(
    0x43,
    8,
    Array.from({ length: 45 }, (_, i) => i),
  );
  const c = frame(0x7f, 9, []);

  it('decodes a frame delivered byte by byte', () => {
    const d = new FrameDecoder();
    const out: Frame[] = [];
    for (const byte of encodeFrame(b)) out.push(...d.push(Uint8Array.of(byte)));
    expect(out).toEqual([b]);
    expect(d.stats).toMatchObject({ frames: 1, garbageBytes: 0, crcErrors: 0 });
  });

  it('decodes several frames in one read', () => {
    const d = new FrameDecoder();
    expect(d.push(concat(encodeFrame(a), encodeFrame(b), encodeFrame(c)))).toEqual([a, b, c]);
  });

  it('skips text before and between frames and counts it as garbage', () => {
    const d = new FrameDecoder();
    const boot = ascii('ets Jun  8 2016 00:22:57\r\nrst:0x1 (POWERON_RESET)\r\n');
    const log = ascii('I (123) mining: hello\n');
    expect(d.push(concat(boot, encodeFrame(a), log, encodeFrame(c)))).toEqual([a, c]);
    expect(d.stats.garbageBytes).toBe(boot.length + log.length);
  });

  it('drops a frame with a bad CRC and counts it', () => {
    const d = new FrameDecoder();
    const bad = encodeFrame(a);
    bad[9]! ^= 0xff;
    expect(d.push(concat(bad, encodeFrame(b)))).toEqual([b]);
    expect(d.stats.crcErrors).toBe(1);
    expect(d.stats.garbageBytes).toBe(bad.length);
  });

  it('finds a real frame that starts inside a bad one (garbage inside a frame)', () => {
    const d = new FrameDecoder();
    const whole = encodeFrame(b);
    // A frame cut after 20 bytes, then whole frames: the cut one's length swallows the next ones
    // until its CRC fails, and the search resumes one byte after its magic.
    expect(d.push(concat(whole.subarray(0, 20), encodeFrame(a), encodeFrame(c), encodeFrame(b)))).toEqual([
      a,
      c,
      b,
    ]);
    expect(d.stats.crcErrors).toBeGreaterThanOrEqual(1);
  });

  it('drops a header with a bad version or a length over 1024 after one byte', () => {
    const d = new FrameDecoder();
    const v2 = encodeFrame(a);
    v2[2] = 2;
    const long = Uint8Array.of(0xa5, 0x5a, 1, 0x42, 0, 0, 0x01, 0x04); // length 1025
    expect(d.push(concat(v2, long, encodeFrame(c)))).toEqual([c]);
    expect(d.stats.badHeaders).toBe(2);
  });

  it('keeps a trailing A5 that may start a magic', () => {
    const d = new FrameDecoder();
    const whole = encodeFrame(c);
    expect(d.push(concat(ascii('xx'), whole.subarray(0, 1)))).toEqual([]);
    expect(d.buffered).toBe(1);
    expect(d.push(whole.subarray(1))).toEqual([c]);
  });

  it('discards a partial frame older than 1 s so a lost tail never joins a later frame', () => {
    let now = 0;
    const d = new FrameDecoder({ now: () => now });
    const lost = encodeFrame(b);
    expect(d.push(lost.subarray(0, 30))).toEqual([]);
    now = 1500;
    expect(d.push(encodeFrame(a))).toEqual([a]);
    expect(d.stats.staleFragments).toBeGreaterThanOrEqual(1);
    expect(d.buffered).toBe(0);
  });

  it('keeps a partial frame younger than 1 s', () => {
    let now = 0;
    const d = new FrameDecoder({ now: () => now });
    const whole = encodeFrame(b);
    d.push(whole.subarray(0, 30));
    now = 900;
    expect(d.push(whole.subarray(30))).toEqual([b]);
  });

  it('recovers the frames behind a fake length once the fake frame times out', () => {
    let now = 0;
    const d = new FrameDecoder({ now: () => now });
    // Garbage that looks like a header announcing 1000 bytes, then real frames.
    const fake = Uint8Array.of(0xa5, 0x5a, 1, 0x43, 0, 0, 0xe8, 0x03);
    expect(d.push(concat(fake, encodeFrame(a), encodeFrame(c)))).toEqual([]);
    now = 1001;
    expect(d.expire()).toEqual([a, c]);
    expect(d.stats.staleFragments).toBe(1);
  });

  it('delivers every frame whatever the splits and the garbage between frames (property)', () => {
    const payload = fc.uint8Array({ maxLength: 200 });
    const frames = fc.array(
      fc.record({ type: fc.integer({ min: 0, max: 255 }), seq: fc.integer({ min: 0, max: 65535 }), payload }),
      { minLength: 1, maxLength: 12 },
    );
    // Garbage without the magic pair cannot create a frame; it may still contain A5 or 5A alone.
    const garbage = fc.uint8Array({ maxLength: 40 }).map((g) => g.map((x) => (x === 0xa5 ? 0xa4 : x)));
    fc.assert(
      fc.property(
        frames,
        fc.array(garbage, { minLength: 13, maxLength: 13 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (fs, gs, cuts) => {
          const used = [...gs.slice(0, fs.length), gs[12]!];
          const stream = concat(...fs.flatMap((f, i) => [gs[i]!, encodeFrame(f)]), gs[12]!);
          const d = new FrameDecoder();
          const out: Frame[] = [];
          let at = 0;
          for (const cut of [...cuts.map((c) => c % (stream.length + 1))].sort((x, y) => x - y)) {
            out.push(...d.push(stream.subarray(at, Math.max(at, cut))));
            at = Math.max(at, cut);
          }
          out.push(...d.push(stream.subarray(at)));
          expect(out).toEqual(fs.map((f) => ({ ...f, payload: Uint8Array.from(f.payload) })));
          expect(d.stats.garbageBytes).toBe(used.reduce((n, g) => n + g.length, 0));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never crashes on random bytes and still decodes a frame after them (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.nat({ max: 64 }), (noise, split) => {
        let now = 0;
        const d = new FrameDecoder({ now: () => now });
        d.push(noise);
        now += 2000; // anything noise left half-parsed is now stale
        const whole = encodeFrame(a);
        const cut = split % whole.length;
        const out = [...d.push(whole.subarray(0, cut)), ...d.push(whole.subarray(cut))];
        expect(out.at(-1)).toEqual(a);
      }),
      { numRuns: 300 },
    );
  });
});
