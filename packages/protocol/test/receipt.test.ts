import { describe, expect, it } from 'vitest';
import { toHex, utf8 } from '../src/bytes.js';
import { keyPairFromSecret } from '../src/ed25519.js';
import { taggedHash } from '../src/hash.js';
import { type Receipt, receiptMessage, signReceipt, verifyReceipt } from '../src/tensor/receipt.js';

const node = keyPairFromSecret(taggedHash('test/key', utf8('node')));
const receipt: Receipt = {
  challengeId: 'c-0123456789abcdef01234567',
  minerPubkey: 'ab'.repeat(32),
  computationHash: 'cd'.repeat(32),
  ledgerEntryId: 7,
  rewardMinor: 300_000_000n,
  acceptedAt: 1_795_000_000,
};

describe('acceptance receipts', () => {
  it('lays out the signed bytes as documented', () => {
    const m = receiptMessage(receipt);
    expect(toHex(m.subarray(0, 13))).toBe(toHex(utf8('PTM4/receipt\0')));
    expect(m.length).toBe(13 + 2 + 26 + 32 + 32 + 8 + 8 + 8);
  });

  it('verifies with the node key and fails for any changed field or another key', () => {
    const sig = signReceipt(receipt, node.secretKey);
    expect(sig).toMatch(/^[0-9a-f]{128}$/);
    expect(verifyReceipt(receipt, sig, node.publicKey)).toBe(true);
    for (const changed of [
      { ...receipt, challengeId: 'c-other' },
      { ...receipt, minerPubkey: 'ef'.repeat(32) },
      { ...receipt, computationHash: 'ce'.repeat(32) },
      { ...receipt, ledgerEntryId: 8 },
      { ...receipt, rewardMinor: 300_000_001n },
      { ...receipt, acceptedAt: 1_795_000_001 },
    ]) {
      expect(verifyReceipt(changed, sig, node.publicKey)).toBe(false);
    }
    expect(verifyReceipt(receipt, sig, taggedHash('other', utf8('key')))).toBe(false);
    expect(verifyReceipt(receipt, 'not hex', node.publicKey)).toBe(false);
  });
});
