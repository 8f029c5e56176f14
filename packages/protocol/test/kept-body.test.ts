import { describe, expect, it } from 'vitest';
import { KEPT_AS_STRING_MAX, keptBody } from '../src/index.js';

describe('keptBody', () => {
  it('keeps a short answer as the string, a long one as its UTF-8 bytes', () => {
    const short = JSON.stringify({ a: 'x'.repeat(KEPT_AS_STRING_MAX - 10) });
    expect(keptBody(short)).toBe(short);
    const long = JSON.stringify({ a: 'é'.repeat(KEPT_AS_STRING_MAX) });
    const kept = keptBody(long);
    expect(Buffer.isBuffer(kept)).toBe(true);
    expect((kept as Buffer).toString('utf8')).toBe(long);
  });
});
