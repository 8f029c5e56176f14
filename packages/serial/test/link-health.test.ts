import { describe, expect, it } from 'vitest';
import { noBoardsHelp } from '../src/discovery.js';
import { LinkHealth } from '../src/link-health.js';
import type { SessionStats } from '../src/session.js';

function stats(crc: number, badHeaders: number, retransmits: number, duplicateResults = 0): SessionStats {
  return {
    framesIn: 0,
    framesOut: 0,
    retransmits,
    acksSent: 0,
    duplicateResults,
    malformedFrames: 0,
    connects: 1,
    linkLosses: 0,
    decoder: { frames: 0, garbageBytes: 0, crcErrors: crc, badHeaders, staleFragments: 0 },
    bytesIn: 0,
    bytesOut: 0,
  };
}

describe('LinkHealth', () => {
  it('adds the counts of every session, counting a re-attached session from where it was', () => {
    const h = new LinkHealth();
    h.attach(stats(0, 0, 0));
    expect(h.totals(stats(2, 1, 3, 1))).toEqual({ crcErrors: 2, resyncs: 1, retransmissions: 4 });
    h.detach(stats(2, 1, 3, 1));
    expect(h.totals(undefined)).toEqual({ crcErrors: 2, resyncs: 1, retransmissions: 4 });
    // The same session (an explicit port) attached again: only what happens from now counts.
    h.attach(stats(2, 1, 3, 1));
    expect(h.totals(stats(5, 1, 3, 1))).toEqual({ crcErrors: 5, resyncs: 1, retransmissions: 4 });
  });

  it('says degraded once at 3 troubles within 10 s, again only after 30 s without trouble', () => {
    const h = new LinkHealth();
    h.attach(stats(0, 0, 0));
    expect(h.watch(0, stats(0, 0, 0))).toBeUndefined();
    expect(h.watch(1000, stats(1, 0, 0))).toBeUndefined();
    expect(h.watch(2000, stats(2, 0, 1))).toBe(
      '3 link errors in 2 s (total 2 CRC errors, 1 retransmissions)',
    );
    expect(h.watch(3000, stats(4, 1, 1))).toBeUndefined(); // still degraded
    for (let t = 4000; t < 40_000; t += 1000) expect(h.watch(t, stats(4, 1, 1))).toBeUndefined();
    expect(h.watch(40_000, stats(7, 1, 1))).toBe(
      '3 link errors in 10 s (total 7 CRC errors, 1 resyncs, 1 retransmissions)',
    );
  });

  it('does not call sparse errors degraded', () => {
    const h = new LinkHealth();
    h.attach(stats(0, 0, 0));
    let crc = 0;
    for (let t = 0; t < 120_000; t += 1000) {
      if (t % 6000 === 0) crc++; // one CRC error every 6 s: at most 2 in any 10 s
      expect(h.watch(t, stats(crc, 0, 0))).toBeUndefined();
    }
  });
});

describe('noBoardsHelp', () => {
  it('names the chips, the ports seen, those that cannot be opened, and the fixes', async () => {
    const lines = await noBoardsHelp(
      [
        { path: '/dev/ttyUSB0', vendorId: '2341', productId: '0043', manufacturer: 'Arduino' },
        { path: '/dev/ttyS0', vendorId: undefined, productId: undefined },
      ] as never,
      undefined,
      async (path) => path !== '/dev/ttyUSB0',
    );
    expect(lines[0]).toMatch(
      /^no ESP32 board found: --device auto looks for USB serial bridges Silicon Labs CP210x \(10c4:ea60\); WCH CH340 \/ CH341 \(1a86:7523\); .*FTDI FT232R \(0403:6001\).*Espressif USB-Serial\/JTAG \(native USB\) \(303a:1001\)/,
    );
    expect(lines[1]).toBe(
      'USB serial ports present, none of them a known bridge: /dev/ttyUSB0 (2341:0043 Arduino); name one with --device <path>',
    );
    expect(lines[2]).toBe('you may not open /dev/ttyUSB0: permission denied');
    if (process.platform === 'linux') {
      expect(lines[3]).toContain('sudo usermod -aG dialout $USER');
      expect(lines[3]).toContain('sudo cp docs/udev/99-tensormine.rules /etc/udev/rules.d/');
    }
  });

  it('says when no USB serial port is present at all', async () => {
    const lines = await noBoardsHelp([]);
    expect(lines[1]).toMatch(/^no USB serial port is present: check the cable/);
  });
});
