import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { concatBytes, fromHex, lpString, toHex, utf8 } from '../src/bytes.js';
import { keyPairFromSecret, signatureToWire, verify } from '../src/ed25519.js';
import { sha256, taggedHash } from '../src/hash.js';
import { cellSelector } from '../src/hexchain/cell.js';
import { hexChallengeHash } from '../src/hexchain/challenge-hash.js';
import { HEADER_VERSION } from '../src/hexchain/constants.js';
import type { Coord } from '../src/hexchain/coord.js';
import { GENESIS_BLOCK_HASH, GENESIS_COORD } from '../src/hexchain/genesis.js';
import {
  decodeHeader,
  encodeHeader,
  HEADER_BYTES,
  hexBlockHash,
  hexPowHash,
  MIDSTATE_PREFIX_BYTES,
  NONCE_OFFSET,
} from '../src/hexchain/header.js';
import { depthFromParents, parentsRoot } from '../src/hexchain/parents.js';
import { solveBlock } from '../src/hexchain/solve-block.js';
import { buildSubmission, type HexSubmissionInput, submissionMessage } from '../src/hexchain/submission.js';
import { hashMeetsTarget, targetFromDifficulty } from '../src/hexchain/target.js';
import { type HexChallengeTerms, verifyBlock } from '../src/hexchain/verify-block.js';
import { thrown } from './helpers.js';

const keyA = keyPairFromSecret(sha256(utf8('hexchain block test key a')));
const keyB = keyPairFromSecret(sha256(utf8('hexchain block test key b')));
const coord: Coord = { q: 2, r: -1, s: -1 };

/** A challenge at difficulty D and a valid signed submission for it by key A. */
function solvedFixture(difficulty: bigint, label: string) {
  const challengeHash = taggedHash('test/hexchain-block', utf8(label));
  const terms: HexChallengeTerms = {
    id: `hx-${label}`,
    coord,
    challengeHash,
    target: targetFromDifficulty(difficulty),
  };
  const solved = solveBlock({ challengeHash, coord, minerPublicKey: keyA.publicKey, target: terms.target })!;
  const submission = buildSubmission({
    challengeId: terms.id,
    challengeHash,
    coord,
    nonce: solved.nonce,
    keyPair: keyA,
  });
  return { terms, solved, submission };
}

describe('block header', () => {
  it('lays out 88 bytes: version, q, r, s, challenge hash, miner key, nonce (little-endian)', () => {
    const challengeHash = new Uint8Array(32).fill(0xcc);
    const minerPublicKey = new Uint8Array(32).fill(0xdd);
    const header = encodeHeader({
      coord: { q: -1, r: 2, s: -1 },
      challengeHash,
      minerPublicKey,
      nonce: 0x0102030405,
    });
    expect(header.length).toBe(HEADER_BYTES);
    expect(toHex(header)).toBe(
      `00010400ffffffff02000000ffffffff${'cc'.repeat(32)}${'dd'.repeat(32)}0504030201000000`,
    );
    expect(NONCE_OFFSET).toBe(80);
    expect(MIDSTATE_PREFIX_BYTES).toBe(64);
    expect(HEADER_VERSION).toBe(0x00040100);
  });

  it('decodes what it encodes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: -1000, max: 1000 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.maxSafeNat(),
        (q, r, challengeHash, minerPublicKey, nonce) => {
          const fields = { coord: { q, r, s: 0 - q - r }, challengeHash, minerPublicKey, nonce };
          expect(decodeHeader(encodeHeader(fields))).toEqual({ version: HEADER_VERSION, ...fields });
        },
      ),
    );
  });

  it('rejects a wrong length, another version, an invalid coordinate and a nonce above 2^53 - 1', () => {
    const header = encodeHeader({
      coord,
      challengeHash: new Uint8Array(32),
      minerPublicKey: new Uint8Array(32),
      nonce: 1,
    });
    expect(thrown(() => decodeHeader(header.subarray(0, 87))).message).toBe(
      'header: expected 88 bytes, got 87',
    );
    const v40 = Uint8Array.from(header);
    v40[1] = 0x00;
    expect(thrown(() => decodeHeader(v40)).message).toBe(
      'version: expected 0x00040100 (v4.1), got 0x00040000',
    );
    const badCoord = Uint8Array.from(header);
    badCoord[4] = 9;
    expect(thrown(() => decodeHeader(badCoord)).message).toBe(
      'header coordinate: expected q + r + s = 0, got q=9 r=-1 s=-1',
    );
    const bigNonce = Uint8Array.from(header);
    bigNonce.set([0, 0, 0, 0, 0, 0, 0x20, 0], NONCE_OFFSET);
    expect(thrown(() => decodeHeader(bigNonce)).message).toBe(
      'header nonce: expected an integer in [0, 9007199254740991], got 9007199254740992',
    );
    expect(
      thrown(() =>
        encodeHeader({
          coord,
          challengeHash: new Uint8Array(31),
          minerPublicKey: new Uint8Array(32),
          nonce: 0,
        }),
      ).message,
    ).toBe('challenge hash: expected 32 bytes, got 31');
    expect(
      thrown(() =>
        encodeHeader({
          coord,
          challengeHash: new Uint8Array(32),
          minerPublicKey: new Uint8Array(32),
          nonce: -1,
        }),
      ).message,
    ).toBe('nonce: expected an integer in [0, 9007199254740991], got -1');
  });

  it('hashes the header with plain SHA-256 for the proof of work and a tagged hash for the block name', () => {
    const header = encodeHeader({
      coord,
      challengeHash: new Uint8Array(32),
      minerPublicKey: new Uint8Array(32),
      nonce: 5,
    });
    expect(toHex(hexPowHash(header))).toBe(toHex(sha256(header)));
    expect(toHex(hexBlockHash(header))).toBe(
      toHex(sha256(concatBytes(utf8('PTM41/block'), Uint8Array.of(0), header))),
    );
  });

  it('keeps the first 64 bytes independent of the nonce (the midstate)', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.maxSafeNat(), (n1, n2) => {
        const base = { coord, challengeHash: keyB.publicKey, minerPublicKey: keyA.publicKey };
        const h1 = encodeHeader({ ...base, nonce: n1 });
        const h2 = encodeHeader({ ...base, nonce: n2 });
        expect(toHex(h1.subarray(0, MIDSTATE_PREFIX_BYTES))).toBe(
          toHex(h2.subarray(0, MIDSTATE_PREFIX_BYTES)),
        );
      }),
    );
  });
});

describe('hexChallengeHash', () => {
  const base = {
    coord: { q: 1, r: -1, s: 0 },
    slot: 1000,
    slotHash: 'abc',
    target: targetFromDifficulty(16n),
    parentsRoot: new Uint8Array(32).fill(1),
    entropy: new Uint8Array(32).fill(2),
  };

  it('is taggedHash("PTM41/challenge", version, q, r, s, slot, SHA-256(slot_hash), target, parents_root, entropy)', () => {
    const expected = taggedHash(
      'PTM41/challenge',
      fromHex('00010400'),
      fromHex('01000000ffffffff00000000'),
      fromHex('e803000000000000'),
      sha256(utf8('abc')),
      fromHex(`0${'f'.repeat(63)}`),
      base.parentsRoot,
      base.entropy,
    );
    expect(toHex(hexChallengeHash(base))).toBe(toHex(expected));
    expect(toHex(hexChallengeHash({ ...base, version: HEADER_VERSION }))).toBe(toHex(expected));
  });

  it('changes when any committed field changes', () => {
    const h = toHex(hexChallengeHash(base));
    const variants = [
      { ...base, coord: { q: 0, r: 1, s: -1 } },
      { ...base, slot: 1001 },
      { ...base, slotHash: 'abd' },
      { ...base, target: targetFromDifficulty(17n) },
      { ...base, parentsRoot: new Uint8Array(32).fill(3) },
      { ...base, entropy: new Uint8Array(32).fill(4) },
    ];
    for (const v of variants) expect(toHex(hexChallengeHash(v))).not.toBe(h);
  });

  it('rejects fields out of range, saying what arrived', () => {
    expect(thrown(() => hexChallengeHash({ ...base, version: 0x00040000 })).message).toBe(
      'version: expected 0x00040100 (v4.1), got 0x00040000',
    );
    expect(thrown(() => hexChallengeHash({ ...base, slot: -1 })).message).toBe(
      'slot: expected an integer in [0, 2^53 - 1], got -1',
    );
    expect(thrown(() => hexChallengeHash({ ...base, slotHash: '' })).message).toBe(
      'slot_hash: expected 1 to 128 characters, got 0',
    );
    expect(thrown(() => hexChallengeHash({ ...base, slotHash: 'x'.repeat(129) })).message).toBe(
      'slot_hash: expected 1 to 128 characters, got 129',
    );
    expect(thrown(() => hexChallengeHash({ ...base, slotHash: 'a\ud800' })).message).toBe(
      'slot_hash: expected well-formed Unicode, got a string with an unpaired surrogate',
    );
    expect(thrown(() => hexChallengeHash({ ...base, entropy: new Uint8Array(31) })).message).toBe(
      'entropy: expected 32 bytes, got 31',
    );
    expect(thrown(() => hexChallengeHash({ ...base, target: 2n ** 256n - 1n })).code).toBe('invalid_target');
    expect(thrown(() => hexChallengeHash({ ...base, coord: { q: 1, r: 1, s: 1 } })).code).toBe(
      'invalid_coordinate',
    );
  });

  it('counts slot_hash length in characters, not UTF-16 units or bytes', () => {
    expect(() => hexChallengeHash({ ...base, slotHash: '😀'.repeat(128) })).not.toThrow();
  });
});

describe('cellSelector', () => {
  it('is taggedHash("PTM41/cell", u64le(slot), SHA-256(slot_hash), entropy) and differs per entropy', () => {
    const e1 = new Uint8Array(32).fill(7);
    const e2 = new Uint8Array(32).fill(8);
    expect(toHex(cellSelector(1000, 'abc', e1))).toBe(
      toHex(taggedHash('PTM41/cell', fromHex('e803000000000000'), sha256(utf8('abc')), e1)),
    );
    expect(toHex(cellSelector(1000, 'abc', e1))).not.toBe(toHex(cellSelector(1000, 'abc', e2)));
  });
});

describe('parentsRoot and depth', () => {
  const genesis = { coord: GENESIS_COORD, blockHash: fromHex(GENESIS_BLOCK_HASH), depth: 0 };
  const a = { coord: { q: 1, r: -1, s: 0 }, blockHash: new Uint8Array(32).fill(0xaa), depth: 1 };

  it('commits to count, then each parent in canonical order: i32le q, r, s and block hash', () => {
    const expected = taggedHash(
      'PTM41/parents',
      Uint8Array.of(2),
      fromHex('000000000000000000000000'),
      genesis.blockHash,
      fromHex('01000000ffffffff00000000'),
      a.blockHash,
    );
    expect(toHex(parentsRoot([a, genesis]))).toBe(toHex(expected));
    expect(toHex(parentsRoot([genesis, a]))).toBe(toHex(expected));
    expect(depthFromParents([a, genesis])).toBe(2);
  });

  it('rejects no parents, more than six, duplicates and bad hashes', () => {
    expect(thrown(() => parentsRoot([])).message).toBe('parents: expected 1 to 6, got 0');
    expect(thrown(() => parentsRoot(Array.from({ length: 7 }, () => a))).message).toBe(
      'parents: expected 1 to 6, got 7',
    );
    expect(thrown(() => parentsRoot([a, a])).message).toBe(
      'parents: expected distinct cells, got q=1 r=-1 s=0 twice',
    );
    expect(thrown(() => parentsRoot([{ ...a, blockHash: new Uint8Array(31) }])).message).toBe(
      'parent q=1 r=-1 s=0 block hash: expected 32 bytes, got 31',
    );
  });
});

describe('submissionMessage', () => {
  it('is utf8("PTM41/submit") || 0x00 || lpString(challenge_id) || header', () => {
    const header = encodeHeader({
      coord,
      challengeHash: new Uint8Array(32),
      minerPublicKey: keyA.publicKey,
      nonce: 3,
    });
    expect(toHex(submissionMessage('hx-1', header))).toBe(
      toHex(concatBytes(utf8('PTM41/submit'), Uint8Array.of(0), lpString('hx-1'), header)),
    );
    // "PTM41/submit", 0x00, length 4 (u16le), "hx-1", then the header.
    expect(toHex(submissionMessage('hx-1', header))).toBe(
      `50544d34312f7375626d697400040068782d31${toHex(header)}`,
    );
    expect(thrown(() => submissionMessage('hx-1', header.subarray(1))).message).toBe(
      'header: expected 88 bytes, got 87',
    );
  });
});

describe('verifyBlock', () => {
  let fixture: ReturnType<typeof solvedFixture>;
  beforeAll(() => {
    fixture = solvedFixture(64n, 'main');
  });

  it('accepts a solved, signed block and returns its header, pow hash and block hash', () => {
    const { terms, submission, solved } = fixture;
    const verdict = verifyBlock(terms, submission);
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    expect(toHex(verdict.header)).toBe(toHex(solved.header));
    expect(toHex(verdict.powHash)).toBe(submission.block.pow_hash);
    expect(toHex(verdict.blockHash)).toBe(toHex(hexBlockHash(solved.header)));
    expect(verdict.nonce).toBe(solved.nonce);
    expect(toHex(verdict.minerPublicKey)).toBe(toHex(keyA.publicKey));
    const signature = Uint8Array.from(submission.signature!);
    expect(verify(signature, submissionMessage(terms.id, verdict.header), keyA.publicKey)).toBe(true);
  });

  it('requires a signature by default and accepts an unsigned block when told not to', () => {
    const { terms, submission } = fixture;
    const { signature: _ignored, ...unsigned } = submission;
    expect(verifyBlock(terms, unsigned)).toEqual({
      ok: false,
      code: 'signature_required',
      message:
        'signature: expected an ed25519 signature by block.miner_pubkey (an array of 64 byte integers), got none',
    });
    expect(verifyBlock(terms, unsigned, { requireSignature: false }).ok).toBe(true);
  });

  it('checks a signature that is present even when none is required', () => {
    const { terms, submission } = fixture;
    const forged = { ...submission, signature: signatureToWire(new Uint8Array(64).fill(1)) };
    const verdict = verifyBlock(terms, forged, { requireSignature: false });
    expect(verdict.ok ? undefined : verdict.code).toBe('signature_invalid');
  });

  it('rejects the wrong coordinate, an invalid one and another challenge id', () => {
    const { terms, submission } = fixture;
    expect(
      verifyBlock(terms, { ...submission, block: { ...submission.block, coord: { q: 2, r: -2, s: 0 } } }),
    ).toEqual({
      ok: false,
      code: 'coordinate_mismatch',
      message: 'block.coord: expected the challenge coordinate q=2 r=-1 s=-1, got q=2 r=-2 s=0',
    });
    expect(
      verifyBlock(terms, { ...submission, block: { ...submission.block, coord: { q: 2, r: -1, s: 0 } } }),
    ).toEqual({
      ok: false,
      code: 'invalid_coordinate',
      message: 'block.coord: expected q + r + s = 0, got q=2 r=-1 s=0',
    });
    expect(verifyBlock(terms, { ...submission, challenge_id: 'hx-other' })).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'challenge_id: expected "hx-main" (the challenge being verified), got "hx-other"',
    });
  });

  it('rejects malformed keys, hashes, nonces and signatures with what arrived', () => {
    const { terms, submission } = fixture;
    const withBlock = (block: Partial<HexSubmissionInput['block']>): HexSubmissionInput => ({
      ...submission,
      block: { ...submission.block, ...block },
    });
    expect(verifyBlock(terms, withBlock({ miner_pubkey: submission.block.miner_pubkey.slice(2) }))).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'block.miner_pubkey: expected 32 bytes (64 hex digits), got 31 bytes',
    });
    expect(verifyBlock(terms, withBlock({ pow_hash: 'zz' }))).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'block.pow_hash: expected an even-length hex string, got "zz"',
    });
    expect(verifyBlock(terms, withBlock({ nonce: 1.5 }))).toEqual({
      ok: false,
      code: 'invalid_nonce',
      message: 'block.nonce: expected an integer in [0, 9007199254740991], got 1.5',
    });
    expect(verifyBlock(terms, withBlock({ nonce: 2 ** 53 }))).toEqual({
      ok: false,
      code: 'invalid_nonce',
      message: 'block.nonce: expected an integer in [0, 9007199254740991], got 9007199254740992',
    });
    expect(verifyBlock(terms, { ...submission, signature: submission.signature!.slice(1) })).toEqual({
      ok: false,
      code: 'validation_failed',
      message: 'signature: expected an array of 64 byte integers, got an array of 63',
    });
  });

  it('rejects a pow_hash that is not the hash of the rebuilt header, never answering the true hash', () => {
    const { terms, submission } = fixture;
    const wrong = fromHex(submission.block.pow_hash);
    wrong[0]! ^= 0x80;
    const verdict = verifyBlock(terms, {
      ...submission,
      block: { ...submission.block, pow_hash: toHex(wrong) },
    });
    expect(verdict).toMatchObject({ ok: false, code: 'pow_hash_mismatch', details: { got: toHex(wrong) } });
    // The hash the validator computed is an oracle: it never travels back.
    expect(JSON.stringify(verdict)).not.toContain(submission.block.pow_hash);
  });

  it('rejects a correctly hashed header above the target', () => {
    const { terms } = fixture;
    let nonce = 0;
    while (
      hashMeetsTarget(
        hexPowHash(
          encodeHeader({ coord, challengeHash: terms.challengeHash, minerPublicKey: keyA.publicKey, nonce }),
        ),
        terms.target,
      )
    )
      nonce++;
    const submission = buildSubmission({
      challengeId: terms.id,
      challengeHash: terms.challengeHash,
      coord,
      nonce,
      keyPair: keyA,
    });
    const verdict = verifyBlock(terms, submission);
    expect(verdict).toEqual({
      ok: false,
      code: 'pow_above_target',
      message: `block.pow_hash: expected a hash <= the target 03${'f'.repeat(62)}, got ${submission.block.pow_hash}`,
      details: { pow_hash: submission.block.pow_hash, target: `03${'f'.repeat(62)}` },
    });
  });

  it('binds the signature to the challenge id', () => {
    const { terms, submission } = fixture;
    const other = { ...terms, id: 'hx-elsewhere' };
    const verdict = verifyBlock(other, { ...submission, challenge_id: other.id });
    expect(verdict).toEqual({
      ok: false,
      code: 'signature_invalid',
      message:
        'signature: does not verify against block.miner_pubkey over the submission message of challenge_id "hx-elsewhere"',
    });
  });

  it('rejects any single changed header byte, with the code the change calls for', () => {
    const { terms, submission, solved } = fixture;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: HEADER_BYTES - 1 }),
        fc.integer({ min: 1, max: 255 }),
        (at, mask) => {
          const mutated = Uint8Array.from(solved.header);
          mutated[at]! ^= mask;
          const view = new DataView(mutated.buffer);
          const nonce = Number(view.getBigUint64(NONCE_OFFSET, true));
          const powHash = sha256(mutated);
          // The miner reports the fields of the changed header and its true SHA-256.
          const forged: HexSubmissionInput = {
            ...submission,
            block: {
              coord: { q: view.getInt32(4, true), r: view.getInt32(8, true), s: view.getInt32(12, true) },
              pow_hash: toHex(powHash),
              nonce,
              miner_pubkey: toHex(mutated.subarray(48, 80)),
            },
          };
          const verdict = verifyBlock(terms, forged);
          expect(verdict.ok).toBe(false);
          if (verdict.ok) return;
          let expected: string;
          if (at < 4 || (at >= 16 && at < 48))
            expected = 'pow_hash_mismatch'; // not sent: the validator uses its own
          else if (at < 16) expected = 'invalid_coordinate';
          else if (at >= NONCE_OFFSET && !Number.isSafeInteger(nonce)) expected = 'invalid_nonce';
          else expected = hashMeetsTarget(powHash, terms.target) ? 'signature_invalid' : 'pow_above_target';
          expect(verdict.code).toBe(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('rejects a changed pow_hash or signature byte', () => {
    const { terms, submission } = fixture;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 31 }),
        fc.integer({ min: 0, max: 63 }),
        fc.integer({ min: 1, max: 255 }),
        (p, s, mask) => {
          const pow = fromHex(submission.block.pow_hash);
          pow[p]! ^= mask;
          const v1 = verifyBlock(terms, {
            ...submission,
            block: { ...submission.block, pow_hash: toHex(pow) },
          });
          expect(v1.ok ? 'ok' : v1.code).toBe('pow_hash_mismatch');
          const sig = [...submission.signature!];
          sig[s] = sig[s]! ^ mask;
          const v2 = verifyBlock(terms, { ...submission, signature: sig });
          expect(v2.ok ? 'ok' : v2.code).toBe('signature_invalid');
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe("another miner's key on a valid block", () => {
  // Difficulty 2^16: a thief's single hash meets the target with probability 2^-16.
  let fixture: ReturnType<typeof solvedFixture>;
  beforeAll(() => {
    fixture = solvedFixture(65_536n, 'thief');
  });

  it('is rejected: the key is inside the hashed header', () => {
    const { terms, submission } = fixture;
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.boolean(), (secret, keepPowHash) => {
        const thief = keyPairFromSecret(secret);
        const stolen = buildSubmission({
          challengeId: terms.id,
          challengeHash: terms.challengeHash,
          coord,
          nonce: submission.block.nonce,
          keyPair: thief,
        });
        const forged = keepPowHash
          ? { ...stolen, block: { ...stolen.block, pow_hash: submission.block.pow_hash } }
          : stolen;
        const verdict = verifyBlock(terms, forged);
        const header = encodeHeader({
          coord,
          challengeHash: terms.challengeHash,
          minerPublicKey: thief.publicKey,
          nonce: submission.block.nonce,
        });
        if (keepPowHash) expect(verdict.ok ? 'ok' : verdict.code).toBe('pow_hash_mismatch');
        // With the thief's own header hash, it passes only if that hash happens to meet the target.
        else
          expect(verdict.ok ? 'ok' : verdict.code).toBe(
            hashMeetsTarget(sha256(header), terms.target) ? 'ok' : 'pow_above_target',
          );
      }),
      { numRuns: 100 },
    );
  });

  it('is rejected when only the key is swapped and the original signature kept', () => {
    const { terms, submission } = fixture;
    const swapped = { ...submission, block: { ...submission.block, miner_pubkey: toHex(keyB.publicKey) } };
    const verdict = verifyBlock(terms, swapped);
    expect(verdict.ok ? 'ok' : verdict.code).toBe('pow_hash_mismatch');
  });
});
