/**
 * The C core's SHA-512 and ed25519 (core/sha512.c, core/tm_ed25519.c) against RFC 8032's test
 * vectors (section 7.1), the protocol's signature vectors (signed requests, v4.1 submissions, the
 * v4.0 proof) and node:crypto (OpenSSL), bit for bit. The C program build/tm-vectors computes;
 * this file feeds it and compares.
 */

import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCore, packageDir, runVector, runVectors } from './driver.ts';

interface RfcVector {
  name: string;
  secret_key: string;
  public_key: string;
  message: string;
  signature: string;
}

const rfc = JSON.parse(readFileSync(join(packageDir, 'test/rfc8032.vectors.json'), 'utf8')) as {
  vectors: RfcVector[];
};
const require = createRequire(import.meta.url);
const signedRequests = require('@tensormine/protocol/vectors/signed-requests.vectors.json') as {
  requests: {
    name: string;
    secret_key: string;
    public_key: string;
    message_hex: string;
    signature: string;
  }[];
};
const hexchain = require('@tensormine/protocol/vectors/hexchain.vectors.json') as {
  submissions: {
    message: string;
    miner_secret_key_test_only: string;
    miner_pubkey: string;
    signature: string;
  }[];
};

const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI = Buffer.from('302a300506032b6570032100', 'hex');
const privateKey = (seed: Buffer) =>
  createPrivateKey({ key: Buffer.concat([PKCS8, seed]), format: 'der', type: 'pkcs8' });
const publicKeyOf = (seed: Buffer) =>
  createPublicKey(privateKey(seed)).export({ format: 'der', type: 'spki' }).subarray(SPKI.length);
const nodeVerify = (pub: Buffer, message: Buffer, signature: Buffer) =>
  verify(
    null,
    message,
    createPublicKey({ key: Buffer.concat([SPKI, pub]), format: 'der', type: 'spki' }),
    signature,
  );
const cmd = (...fields: string[]) => fields.filter((f) => f !== '').join(' ');

/** The group order L, little-endian. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const le32 = (n: bigint) => {
  const b = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) b[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return b;
};
const fromLe = (b: Buffer) => b.reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n);

beforeAll(() => buildCore());

describe('SHA-512 (FIPS 180-4)', () => {
  it('gives the FIPS 180-4 example digests', () => {
    expect(runVector('sha512')).toBe(
      'cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e',
    );
    expect(runVector(`sha512 ${Buffer.from('abc').toString('hex')}`)).toBe(
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    );
    const twoBlocks =
      'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu';
    expect(runVector(`sha512 ${Buffer.from(twoBlocks).toString('hex')}`)).toBe(
      '8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909',
    );
  });

  it('agrees with node:crypto for every length 0..300 and across the block boundaries of long messages', () => {
    const lengths = [...Array.from({ length: 301 }, (_, i) => i), 1023, 1024, 1025, 65_536 + 17];
    const messages = lengths.map((n) => randomBytes(n));
    const out = runVectors(messages.map((m) => cmd('sha512', m.toString('hex'))));
    messages.forEach((m, i) => {
      expect(out[i], `length ${m.length}`).toBe(createHash('sha512').update(m).digest('hex'));
    });
  });
});

describe('ed25519 (RFC 8032)', () => {
  it('reproduces every test vector of RFC 8032 section 7.1: public key, signature, verification', () => {
    const lines = rfc.vectors.flatMap((v) => [
      cmd('ed25519_public', v.secret_key),
      cmd('ed25519_sign', v.secret_key, v.message),
      cmd('ed25519_verify', v.public_key, v.signature, v.message),
    ]);
    const out = runVectors(lines);
    rfc.vectors.forEach((v, i) => {
      expect(out[3 * i], v.name).toBe(v.public_key);
      expect(out[3 * i + 1], v.name).toBe(`${v.public_key} ${v.signature}`);
      expect(out[3 * i + 2], v.name).toBe('1');
    });
  });

  it("reproduces the protocol's signatures: every signed request, every v4.1 submission", () => {
    const cases = [
      ...signedRequests.requests.map((r) => ({
        name: r.name,
        seed: r.secret_key,
        pub: r.public_key,
        msg: r.message_hex,
        sig: r.signature,
      })),
      ...hexchain.submissions.map((s) => ({
        name: `submission ${s.miner_pubkey.slice(0, 8)}`,
        seed: s.miner_secret_key_test_only,
        pub: s.miner_pubkey,
        msg: s.message,
        sig: s.signature,
      })),
    ];
    expect(cases.length).toBeGreaterThan(4);
    const out = runVectors(
      cases.flatMap((c) => [cmd('ed25519_sign', c.seed, c.msg), cmd('ed25519_verify', c.pub, c.sig, c.msg)]),
    );
    cases.forEach((c, i) => {
      expect(out[2 * i], c.name).toBe(`${c.pub} ${c.sig}`);
      expect(out[2 * i + 1], c.name).toBe('1');
    });
  });

  it('signs exactly as node:crypto does, and both verify alike on valid and tampered signatures', () => {
    const lines: string[] = [];
    const expected: string[] = [];
    for (let i = 0; i < 200; i++) {
      const seed = randomBytes(32);
      const message = randomBytes(i * 3);
      const pub = publicKeyOf(seed);
      const signature = sign(null, message, privateKey(seed));
      lines.push(cmd('ed25519_sign', seed.toString('hex'), message.toString('hex')));
      expected.push(`${pub.toString('hex')} ${signature.toString('hex')}`);
      // One bit flipped in R, in S, in the key or in the message: node:crypto and the core agree.
      const bad = Buffer.from(signature);
      bad[i % 64]! ^= 1 << (i % 8);
      const badPub = Buffer.from(pub);
      badPub[i % 32]! ^= 1 << (i % 7);
      const badMessage = Buffer.concat([message, Buffer.from([i & 0xff])]);
      for (const [k, s, m] of [
        [pub, signature, message],
        [pub, bad, message],
        [badPub, signature, message],
        [pub, signature, badMessage],
      ] as const) {
        lines.push(cmd('ed25519_verify', k.toString('hex'), s.toString('hex'), m.toString('hex')));
        expected.push(nodeVerify(k, m, s) ? '1' : '0');
      }
    }
    expect(runVectors(lines)).toEqual(expected);
  });

  it('refuses a signature whose S is not below the group order (S + L verifies the same equation)', () => {
    const seed = randomBytes(32);
    const message = Buffer.from('malleable?');
    const pub = publicKeyOf(seed);
    const signature = sign(null, message, privateKey(seed));
    const s = fromLe(signature.subarray(32));
    const malleated = Buffer.concat([signature.subarray(0, 32), le32(s + L)]);
    expect(s + L < 2n ** 256n).toBe(true);
    expect(nodeVerify(pub, message, malleated)).toBe(false);
    expect(
      runVector(
        cmd('ed25519_verify', pub.toString('hex'), malleated.toString('hex'), message.toString('hex')),
      ),
    ).toBe('0');
    expect(
      runVector(
        cmd('ed25519_verify', pub.toString('hex'), signature.toString('hex'), message.toString('hex')),
      ),
    ).toBe('1');
  });

  it('refuses a public key that is not the encoding of a point (y >= p, or no square root)', () => {
    const message = Buffer.from('x');
    const signature = sign(null, message, privateKey(randomBytes(32)));
    const p = 2n ** 255n - 19n;
    // y = p (non-canonical encoding of 0), and y = 2 (2^2 - 1 over 4d + 1 is not a square)
    for (const key of [le32(p), le32(2n)]) {
      expect(
        runVector(
          cmd('ed25519_verify', key.toString('hex'), signature.toString('hex'), message.toString('hex')),
        ),
      ).toBe('0');
    }
  });

  it('has a current table of base-point multiples (cross/gen-ed25519-base.mjs --check)', () => {
    execFileSync(process.execPath, ['cross/gen-ed25519-base.mjs', '--check'], {
      cwd: packageDir,
      stdio: 'pipe',
    });
  });
});
