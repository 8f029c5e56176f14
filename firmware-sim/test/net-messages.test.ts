/**
 * The network board's building blocks in C, through build/tm-vectors: its signed requests, block
 * submissions and callback checks against the protocol's vectors (bit for bit), its JSON reader
 * against JSON.parse on generated and broken documents, and its HTTP date parser.
 */
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCore, runVector, runVectors } from './driver.ts';

const require = createRequire(import.meta.url);
const signedRequests = require('@tensormine/protocol/vectors/signed-requests.vectors.json') as {
  requests: {
    name: string;
    secret_key: string;
    method: string;
    path: string;
    body_hex: string;
    timestamp: number;
    nonce: string;
    headers: Record<string, string>;
  }[];
};
const hexchain = require('@tensormine/protocol/vectors/hexchain.vectors.json') as {
  submissions: { message: string; miner_secret_key_test_only: string; signature: string }[];
};
const callbacks = require('@tensormine/protocol/vectors/device-callbacks.vectors.json') as {
  verification: { name: string; body_hex: string; signature: string; key: string; valid: boolean }[];
};

const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

beforeAll(() => buildCore());

describe('the board’s signed messages', () => {
  it('signs every signed-request vector exactly: the same four x-tm-* headers', () => {
    const cases = signedRequests.requests; // a body, a query without a body, a lowercase method
    expect(cases.length).toBeGreaterThanOrEqual(3);
    const out = runVectors(
      cases.map(
        (r) =>
          `request_sign ${r.secret_key} ${r.method} ${r.path} ${r.body_hex === '' ? '-' : r.body_hex} ${r.timestamp} ${r.nonce}`,
      ),
    );
    cases.forEach((r, i) => {
      const h = r.headers;
      expect(out[i], r.name).toBe(
        `x-tm-pubkey: ${h['x-tm-pubkey']};x-tm-timestamp: ${h['x-tm-timestamp']};x-tm-nonce: ${h['x-tm-nonce']};x-tm-signature: ${h['x-tm-signature']};`,
      );
    });
  });

  it('signs every v4.1 submission vector exactly', () => {
    const out = runVectors(
      hexchain.submissions.map((s) => {
        const bytes = Buffer.from(s.message, 'hex');
        const id = bytes.subarray(15, 15 + bytes.readUInt16LE(13)).toString('utf8');
        return `submission_sign ${s.miner_secret_key_test_only} ${id} ${s.message.slice(-176)}`;
      }),
    );
    hexchain.submissions.forEach((s, i) => {
      expect(out[i]).toBe(s.signature);
    });
  });

  it('decides every device-callback verification case as the vectors do', () => {
    const out = runVectors(
      callbacks.verification.map((c) => `notify_verify ${c.key} ${c.signature} ${c.body_hex}`),
    );
    callbacks.verification.forEach((c, i) => {
      expect(out[i], c.name).toBe(c.valid ? '1' : '0');
    });
  });
});

/** A deterministic generator of JSON values (no duplicate keys, no '.' in keys). */
function* documents(count: number): Generator<unknown> {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  const strings = [
    '',
    'a',
    'h-0123',
    'quote " inside',
    'back\\slash',
    'tab\there',
    'ünïcödé ✓',
    '\u0001ctl',
    'x'.repeat(40),
  ];
  const numbers = [0, 1, -1, 47, 2 ** 53 - 1, -(2 ** 31), 1.5, -0.25, 1e21, 6.02e-23];
  const value = (depth: number): unknown => {
    const kind = rand(depth > 5 ? 5 : 7);
    if (kind === 0) return strings[rand(strings.length)];
    if (kind === 1) return numbers[rand(numbers.length)];
    if (kind === 2) return [true, false, null][rand(3)];
    if (kind === 3 || kind === 4) return strings[rand(strings.length)]!.length;
    if (kind === 5) return Array.from({ length: rand(4) }, () => value(depth + 1));
    const obj: Record<string, unknown> = {};
    for (let i = rand(5); i > 0; i--) obj[`k${rand(20)}`] = value(depth + 1);
    return obj;
  };
  for (let i = 0; i < count; i++) yield value(0);
}

/** Every path of member names in a value. */
function paths(v: unknown, prefix: string[] = []): string[][] {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return [prefix];
  return [prefix, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...prefix, k]))];
}

describe('the board’s JSON reader', () => {
  it('finds every member of generated documents, with the value JSON.parse gives', () => {
    const lines: string[] = [];
    const expected: unknown[] = [];
    for (const doc of documents(150)) {
      const text = JSON.stringify(
        doc,
        null,
        doc && typeof doc === 'object' && lines.length % 2 ? 1 : undefined,
      );
      for (const p of paths(doc)) {
        lines.push(`json ${p.length === 0 ? '.' : p.join('.')} ${hex(text)}`);
        expected.push(p.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], doc));
      }
      lines.push(`json missing ${hex(text)}`);
      expected.push(undefined);
    }
    const out = runVectors(lines);
    out.forEach((answer, i) => {
      const [type, valueHex] = answer.split(' ');
      if (expected[i] === undefined) {
        expect(type, lines[i]).toBe('0');
      } else {
        expect(Number(type), lines[i]).toBeGreaterThan(0);
        expect(JSON.parse(Buffer.from(valueHex!, 'hex').toString('utf8')), lines[i]).toEqual(expected[i]);
      }
    });
  });

  it('refuses every text JSON.parse refuses: truncations, junk, bad numbers, strings and escapes', () => {
    const broken = [
      ' ', // (an empty text cannot be written on the driver's command line)
      '{',
      '{"a":1',
      '{"a":1,}',
      '{"a" 1}',
      '{a:1}',
      '[1,2',
      '[1,]',
      '01',
      '1.',
      '-',
      '+1',
      '.5',
      '1e',
      'tru',
      'nul',
      '"unterminated',
      '"bad \\x escape"',
      '"ctl \u0001 char"',
      '"\\u12g4"',
      '{"a":1} trailing',
      '{"a":1}{"b":2}',
      "{'a':1}",
    ];
    const refusedByJson = (t: string) => {
      try {
        JSON.parse(t);
        return false;
      } catch {
        return true;
      }
    };
    expect(broken.filter(refusedByJson)).toEqual(broken);
    for (const doc of documents(40)) {
      const text = JSON.stringify(doc);
      if (text.length > 1) broken.push(text.slice(0, Math.floor(text.length / 2)));
    }
    const refused = broken.filter(refusedByJson); // a truncated number may still be JSON
    const out = runVectors(refused.map((t) => `json . ${hex(t)}`));
    out.forEach((answer, i) => {
      expect(answer, JSON.stringify(refused[i])).toBe('-1');
    });
  });

  it('refuses nesting deeper than 16 and takes 16', () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(runVector(`json . ${hex(deep(16))}`)).toMatch(/^4 /);
    expect(runVector(`json . ${hex(deep(17))}`)).toBe('-1');
    expect(runVector(`json . ${hex(deep(100_000).slice(0, 20_000))}`)).toBe('-1');
  });

  it('answers the first of duplicate members and still checks the rest of the object', () => {
    expect(runVector(`json a ${hex('{"a":1,"a":2}')}`)).toBe(`2 ${hex('1')}`);
    expect(runVector(`json a ${hex('{"a":1,"b":[}')}`)).toBe('-1');
  });
});

describe('the board’s HTTP date', () => {
  it('reads IMF-fixdate as Unix seconds, and 0 for anything else', () => {
    const times = [0, 951_782_400, 1_700_000_000, 4_102_444_799, 1_709_164_800 /* 29 Feb 2024 */];
    for (let i = 0; i < 200; i++) times.push(Math.floor(((i * 2_654_435_761) % 4_000_000_000) / 1));
    const out = runVectors(times.map((t) => `http_date ${hex(new Date(t * 1000).toUTCString())}`));
    times.forEach((t, i) => {
      expect(out[i], new Date(t * 1000).toUTCString()).toBe(String(t));
    });
    for (const bad of [
      'Sun, 06 Nov 1994 08:49:37 UTC',
      'Sunday, 06-Nov-94 08:49:37 GMT',
      'Sun, 32 Nov 1994 08:49:37 GMT',
      'x',
    ]) {
      expect(runVector(`http_date ${hex(bad)}`), bad).toBe('0');
    }
  });
});
