import { hash } from 'node:crypto';
import { utf8 } from '../src/bytes.js';
import { taggedHash } from '../src/hash.js';
import { encodeHeader, hexPowHash } from '../src/hexchain/header.js';
import { solveBlock } from '../src/hexchain/solve-block.js';
import { MIN_HEX_TARGET } from '../src/hexchain/target.js';
import { formatRate, measure } from './harness.js';

/** Hexchain rows of the protocol benchmark: the reference header hash and solver. */
export function hexchainCases(): string[] {
  const challengeHash = taggedHash('bench', utf8('hex-challenge'));
  const minerPublicKey = taggedHash('bench', utf8('hex-miner'));
  const coord = { q: 3, r: -1, s: -2 };
  const header = encodeHeader({ coord, challengeHash, minerPublicKey, nonce: 12345 });
  const batch = 256;
  const [reference, solver, node] = measure([
    { name: 'hexPowHash', run: () => hexPowHash(header) },
    // At the hardest target a hit is about 2^-45 likely: the solver hashes `batch` nonces.
    {
      name: 'solveBlock',
      run: () =>
        solveBlock({ challengeHash, coord, minerPublicKey, target: MIN_HEX_TARGET, maxIterations: batch }),
    },
    { name: 'crypto.hash', run: () => hash('sha256', header, 'buffer') },
  ]);
  const nodeRate = node!.opsPerSecond;
  const solverRate = solver!.opsPerSecond * batch;
  return [
    `| hexPowHash (reference header hash, ${header.length} B) | ${formatRate(reference!.opsPerSecond)} | ${formatRate(nodeRate)} (${header.length} B) | ${(nodeRate / reference!.opsPerSecond).toFixed(2)}x |`,
    `| solveBlock (reference nonce search, per nonce) | ${formatRate(solverRate)} | ${formatRate(nodeRate)} (${header.length} B) | ${(nodeRate / solverRate).toFixed(2)}x |`,
  ];
}
