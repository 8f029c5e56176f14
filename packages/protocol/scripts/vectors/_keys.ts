import { utf8 } from '../../src/bytes.js';
import { type KeyPair, keyPairFromSecret } from '../../src/ed25519.js';
import { taggedHash } from '../../src/hash.js';

/**
 * Deterministic TEST-ONLY key pairs for the vectors: the secret is
 * taggedHash("PTM/test-vector-key", utf8(name)). Never use these keys for anything real.
 */
export function testKey(name: string): KeyPair {
  return keyPairFromSecret(taggedHash('PTM/test-vector-key', utf8(name)));
}
