/**
 * Test vectors of the v4.1 hexchain consensus: coordinates, neighbours, frontier, target-cell
 * choice, parents, challenge hash, header, proof of work, targets, retarget, solved blocks,
 * submission signatures, block verdicts and an 8-block chain grown from genesis.
 * Pure and deterministic: fixed test keys, fixed seeds, no clock.
 */
import { fromHex, toHex, u32le, utf8 } from '../../src/bytes.js';
import { signatureToWire } from '../../src/ed25519.js';
import { ProtocolError } from '../../src/errors.js';
import { sha256, taggedHash } from '../../src/hash.js';
import { cellSelector, chooseTargetCell, hexChallengeEntropy } from '../../src/hexchain/cell.js';
import { hexChallengeHash } from '../../src/hexchain/challenge-hash.js';
import { HEADER_VERSION, HEXCHAIN_TAGS, LATTICE_RADIUS_MAX } from '../../src/hexchain/constants.js';
import { type Coord, compareCoords, coordKey, distance, parseCoord, ring } from '../../src/hexchain/coord.js';
import { frontier } from '../../src/hexchain/frontier.js';
import { GENESIS_BLOCK_HASH, GENESIS_COORD, GENESIS_DEPTH } from '../../src/hexchain/genesis.js';
import {
  encodeHeader,
  HEADER_BYTES,
  hexBlockHash,
  hexPowHash,
  MIDSTATE_PREFIX_BYTES,
  NONCE_OFFSET,
} from '../../src/hexchain/header.js';
import { Lattice } from '../../src/hexchain/lattice.js';
import { neighbors } from '../../src/hexchain/neighbors.js';
import { depthFromParents, type HexBlockRef, parentsRoot } from '../../src/hexchain/parents.js';
import { BLOCK_INTERVAL_MS_DEFAULT, RETARGET_WINDOW_BLOCKS, retarget } from '../../src/hexchain/retarget.js';
import { solveBlock } from '../../src/hexchain/solve-block.js';
import { buildSubmission, signSubmission, submissionMessage } from '../../src/hexchain/submission.js';
import {
  MAX_HEX_DIFFICULTY,
  MIN_HEX_DIFFICULTY,
  targetFromDifficulty,
  targetToHex,
} from '../../src/hexchain/target.js';
import { type HexChallengeTerms, verifyBlock } from '../../src/hexchain/verify-block.js';
import { testKey } from './_keys.js';

const wireCoord = (c: Coord) => ({ q: c.q, r: c.r, s: c.s });
const hashOf = (label: string) => sha256(utf8(label));

function coordinateCases() {
  const inputs: unknown[] = [
    { q: 0, r: 0, s: 0 },
    { q: 1, r: -1, s: 0 },
    { q: -3, r: 5, s: -2 },
    { q: LATTICE_RADIUS_MAX, r: -LATTICE_RADIUS_MAX, s: 0 },
    { q: LATTICE_RADIUS_MAX, r: -524288, s: -524288 },
    { q: 1, r: 1, s: 1 },
    { q: 2, r: -1, s: 0 },
    { q: LATTICE_RADIUS_MAX + 1, r: -LATTICE_RADIUS_MAX - 1, s: 0 },
    { q: 4294967296, r: -4294967296, s: 0 },
    { q: 0.5, r: -0.5, s: 0 },
    { q: 1, r: -1 },
    { q: '1', r: -1, s: 0 },
    null,
    [0, 0, 0],
  ];
  return inputs.map((input) => {
    try {
      const c = parseCoord(input);
      return { input, valid: true, key: coordKey(c), ring: ring(c) };
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      return { input, valid: false, code: error.code, message: error.message };
    }
  });
}

function neighborCases() {
  const cells: Coord[] = [GENESIS_COORD, { q: 2, r: -1, s: -1 }, { q: -5, r: 0, s: 5 }];
  return cells.map((c) => ({ coord: wireCoord(c), neighbors: neighbors(c) }));
}

function distanceCases() {
  const pairs: [Coord, Coord][] = [
    [GENESIS_COORD, { q: 1, r: -1, s: 0 }],
    [
      { q: 2, r: -1, s: -1 },
      { q: -5, r: 0, s: 5 },
    ],
    [
      { q: 3, r: 0, s: -3 },
      { q: 3, r: 0, s: -3 },
    ],
  ];
  return pairs.map(([a, b]) => ({ a, b, distance: distance(a, b) }));
}

function canonicalOrder() {
  const input: Coord[] = [
    { q: 0, r: -2, s: 2 },
    { q: 1, r: 0, s: -1 },
    { q: -1, r: 1, s: 0 },
    { q: 0, r: 0, s: 0 },
    { q: 2, r: -2, s: 0 },
    { q: 1, r: -1, s: 0 },
    { q: -2, r: 2, s: 0 },
    { q: -1, r: 0, s: 1 },
  ];
  return { input, sorted: [...input].sort(compareCoords) };
}

function frontierCases() {
  const sets: Coord[][] = [
    [GENESIS_COORD],
    [GENESIS_COORD, { q: 1, r: -1, s: 0 }],
    [GENESIS_COORD, { q: 1, r: -1, s: 0 }, { q: 2, r: -2, s: 0 }, { q: 0, r: 1, s: -1 }],
  ];
  return sets.map((occupied) => ({ occupied, frontier: frontier(occupied) }));
}

function cellSelectorCases() {
  const cases: { slot: number; slot_hash: string; entropy: Uint8Array }[] = [
    { slot: 0, slot_hash: '0', entropy: new Uint8Array(32) },
    { slot: 1000, slot_hash: toHex(hashOf('slot 1000')), entropy: hashOf('entropy a') },
    { slot: 1000, slot_hash: toHex(hashOf('slot 1000')), entropy: hashOf('entropy b') },
    {
      slot: 287_654_321,
      slot_hash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
      entropy: hashOf('entropy c'),
    },
    { slot: Number.MAX_SAFE_INTEGER, slot_hash: 'créneau-✓', entropy: hashOf('entropy d') },
  ];
  return cases.map((c) => ({
    slot: c.slot,
    slot_hash: c.slot_hash,
    slot_hash_digest: toHex(sha256(utf8(c.slot_hash))),
    entropy: toHex(c.entropy),
    selector: toHex(cellSelector(c.slot, c.slot_hash, c.entropy)),
  }));
}

function targetCellCases() {
  const f3 = frontier([GENESIS_COORD, { q: 1, r: -1, s: 0 }, { q: 2, r: -2, s: 0 }, { q: 0, r: 1, s: -1 }]);
  const f1 = frontier([GENESIS_COORD]);
  const selectors = [
    new Uint8Array(32),
    fromHex(`05${'00'.repeat(31)}`),
    fromHex(`ffffffffffffffff${'00'.repeat(24)}`),
    fromHex(`0123456789abcdef${'ff'.repeat(24)}`),
    hashOf('selector e'),
  ];
  const cases = [];
  for (const list of [f1, f3]) {
    for (const selector of selectors) {
      const coord = chooseTargetCell(list, selector);
      const index = list.findIndex((c) => coordKey(c) === coordKey(coord));
      cases.push({ frontier: list, selector: toHex(selector), index, coord });
    }
  }
  return cases;
}

function parentCases() {
  const sets: HexBlockRef[][] = [
    [{ coord: GENESIS_COORD, blockHash: fromHex(GENESIS_BLOCK_HASH), depth: 0 }],
    [
      { coord: { q: 1, r: -1, s: 0 }, blockHash: hashOf('block a'), depth: 1 },
      { coord: GENESIS_COORD, blockHash: fromHex(GENESIS_BLOCK_HASH), depth: 0 },
    ],
    [
      { coord: { q: 2, r: -1, s: -1 }, blockHash: hashOf('block d'), depth: 3 },
      { coord: { q: 1, r: 0, s: -1 }, blockHash: hashOf('block c'), depth: 2 },
      { coord: { q: 1, r: -1, s: 0 }, blockHash: hashOf('block a'), depth: 1 },
      { coord: { q: 2, r: -2, s: 0 }, blockHash: hashOf('block b'), depth: 2 },
    ],
  ];
  return sets.map((parents) => ({
    parents: parents.map((p) => ({ coord: p.coord, block_hash: toHex(p.blockHash), depth: p.depth })),
    parents_root: toHex(parentsRoot(parents)),
    depth: depthFromParents(parents),
  }));
}

function challengeHashCases() {
  const genesisParent: HexBlockRef = {
    coord: GENESIS_COORD,
    blockHash: fromHex(GENESIS_BLOCK_HASH),
    depth: 0,
  };
  const cases = [
    {
      coord: { q: 1, r: -1, s: 0 },
      slot: 1000,
      slotHash: toHex(hashOf('slot 1000')),
      target: targetFromDifficulty(16n),
      parentsRoot: parentsRoot([genesisParent]),
      entropy: hashOf('entropy a'),
    },
    {
      coord: { q: -2, r: 1, s: 1 },
      slot: 287_654_321,
      slotHash: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
      target: targetFromDifficulty(1_000_000n),
      parentsRoot: hashOf('some parents root'),
      entropy: hashOf('entropy c'),
    },
  ];
  return cases.map((c) => ({
    version: HEADER_VERSION,
    coord: c.coord,
    slot: c.slot,
    slot_hash: c.slotHash,
    target: targetToHex(c.target),
    parents_root: toHex(c.parentsRoot),
    entropy: toHex(c.entropy),
    challenge_hash: toHex(hexChallengeHash(c)),
  }));
}

function headerCases() {
  const a = testKey('hexchain-miner-a');
  const cases = [
    {
      coord: { q: 1, r: -1, s: 0 },
      challengeHash: hashOf('challenge 1'),
      minerPublicKey: a.publicKey,
      nonce: 0,
    },
    {
      coord: { q: -2, r: 1, s: 1 },
      challengeHash: hashOf('challenge 2'),
      minerPublicKey: a.publicKey,
      nonce: 123_456_789,
    },
    {
      coord: { q: -LATTICE_RADIUS_MAX, r: 0, s: LATTICE_RADIUS_MAX },
      challengeHash: hashOf('challenge 3'),
      minerPublicKey: a.publicKey,
      nonce: Number.MAX_SAFE_INTEGER,
    },
  ];
  return cases.map((c) => {
    const header = encodeHeader(c);
    return {
      coord: c.coord,
      challenge_hash: toHex(c.challengeHash),
      miner_pubkey: toHex(c.minerPublicKey),
      nonce: c.nonce,
      header: toHex(header),
      pow_hash: toHex(hexPowHash(header)),
      block_hash: toHex(hexBlockHash(header)),
    };
  });
}

function targetCases() {
  return [16n, 1000n, 2n ** 20n, 2n ** 32n, MAX_HEX_DIFFICULTY].map((d) => ({
    difficulty: d.toString(),
    target: targetToHex(targetFromDifficulty(d)),
  }));
}

function hashMeetsTargetCases() {
  const cases = [];
  for (const d of [16n, 1000n]) {
    const t = targetFromDifficulty(d);
    for (const [hash, meets] of [
      [t, true],
      [t - 1n, true],
      [t + 1n, false],
      [0n, true],
      [2n ** 256n - 1n, false],
    ] as const) {
      cases.push({ hash: hash.toString(16).padStart(64, '0'), target: targetToHex(t), meets });
    }
  }
  return cases;
}

function retargetCases() {
  const w = RETARGET_WINDOW_BLOCKS;
  const i = BLOCK_INTERVAL_MS_DEFAULT;
  const cases: [string, bigint, bigint, number, bigint][] = [
    ['on time', 1000n, 120_000n, w, i],
    ['twice as fast', 1000n, 60_000n, w, i],
    ['twice as slow', 1000n, 240_000n, w, i],
    ['slightly slow, floor', 1000n, 130_000n, w, i],
    ['far too fast, clamped to x4', 1000n, 1_000n, w, i],
    ['far too slow, clamped to /4', 1000n, 10_000_000n, w, i],
    ['zero span counts as 1 ms', 1000n, 0n, w, i],
    ['negative span counts as 1 ms', 1000n, -5_000n, w, i],
    ['slow at low difficulty, floored at 16', 20n, 10_000_000n, w, i],
    ['fast near the top, clamped to 2^53 - 1', 2n ** 51n, 1_000n, w, i],
    ['fast at the top, stays at 2^53 - 1', MAX_HEX_DIFFICULTY, 60_000n, w, i],
    ['other window and interval', 100n, 7_000n, 5, 2_000n],
  ];
  return cases.map(([name, old, span, window, interval]) => ({
    name,
    old_difficulty: old.toString(),
    actual_span_ms: span.toString(),
    window_blocks: window,
    interval_ms: interval.toString(),
    new_difficulty: retarget(old, span, window, interval).toString(),
  }));
}

function solvedCases() {
  const a = testKey('hexchain-miner-a');
  return [16n, 32n, 64n, 128n, 256n].map((d) => {
    const target = targetFromDifficulty(d);
    const challengeHash = taggedHash('PTM41/test-solved', u32le(Number(d)));
    const coord = { q: 1, r: 0, s: -1 };
    const solved = solveBlock({ challengeHash, coord, minerPublicKey: a.publicKey, target, startNonce: 0 })!;
    return {
      difficulty: d.toString(),
      target: targetToHex(target),
      challenge_hash: toHex(challengeHash),
      coord,
      miner_pubkey: toHex(a.publicKey),
      start_nonce: 0,
      nonce: solved.nonce,
      header: toHex(solved.header),
      pow_hash: toHex(solved.powHash),
      block_hash: toHex(hexBlockHash(solved.header)),
    };
  });
}

function submissionCases() {
  const a = testKey('hexchain-miner-a');
  const b = testKey('hexchain-miner-b');
  const cases = [
    { challengeId: 'hx-0001', key: a, nonce: 7 },
    { challengeId: 'défi-7', key: b, nonce: 9_007_199_254_740_991 },
  ];
  return cases.map((c) => {
    const header = encodeHeader({
      coord: { q: 0, r: 1, s: -1 },
      challengeHash: hashOf(`challenge for ${c.challengeId}`),
      minerPublicKey: c.key.publicKey,
      nonce: c.nonce,
    });
    const signature = signSubmission(c.challengeId, header, c.key.secretKey);
    return {
      challenge_id: c.challengeId,
      header: toHex(header),
      message: toHex(submissionMessage(c.challengeId, header)),
      miner_secret_key_test_only: toHex(c.key.secretKey),
      miner_pubkey: toHex(c.key.publicKey),
      signature: toHex(signature),
      signature_wire: signatureToWire(signature),
    };
  });
}

function verdictCases() {
  const a = testKey('hexchain-miner-a');
  const b = testKey('hexchain-miner-b');
  const target = targetFromDifficulty(64n);
  const coord = { q: -1, r: 1, s: 0 };
  const challengeHash = taggedHash('PTM41/test-verdict');
  const terms: HexChallengeTerms = { id: 'hx-verdict', coord, challengeHash, target };
  const solved = solveBlock({ challengeHash, coord, minerPublicKey: a.publicKey, target })!;
  const valid = buildSubmission({
    challengeId: terms.id,
    challengeHash,
    coord,
    nonce: solved.nonce,
    keyPair: a,
  });
  // The first nonce after the solution whose hash is above the target.
  let unsolvedNonce = solved.nonce + 1;
  for (; ; unsolvedNonce++) {
    const h = hexPowHash(
      encodeHeader({ coord, challengeHash, minerPublicKey: a.publicKey, nonce: unsolvedNonce }),
    );
    if (BigInt(`0x${toHex(h)}`) > target) break;
  }
  const flippedPow = fromHex(valid.block.pow_hash);
  flippedPow[31]! ^= 1;
  const foreign = buildSubmission({
    challengeId: terms.id,
    challengeHash,
    coord,
    nonce: solved.nonce,
    keyPair: b,
  });
  const cases = [
    { name: 'valid', submission: valid },
    {
      name: 'valid without signature when not required',
      submission: { ...valid, signature: undefined },
      require_signature: false,
    },
    {
      name: 'other coordinate',
      submission: { ...valid, block: { ...valid.block, coord: { q: 0, r: 1, s: -1 } } },
    },
    {
      name: 'invalid coordinate',
      submission: { ...valid, block: { ...valid.block, coord: { q: 1, r: 1, s: 1 } } },
    },
    {
      name: 'pow_hash not the header hash',
      submission: { ...valid, block: { ...valid.block, pow_hash: toHex(flippedPow) } },
    },
    {
      name: 'hash above the target',
      submission: buildSubmission({
        challengeId: terms.id,
        challengeHash,
        coord,
        nonce: unsolvedNonce,
        keyPair: a,
      }),
    },
    { name: 'nonce above 2^53 - 1', submission: { ...valid, block: { ...valid.block, nonce: 2 ** 53 } } },
    { name: 'signature missing', submission: { ...valid, signature: undefined } },
    { name: 'signature by another key', submission: { ...valid, signature: foreign.signature } },
    {
      name: "another miner's key with the original pow_hash",
      submission: { ...foreign, block: { ...foreign.block, pow_hash: valid.block.pow_hash } },
    },
  ];
  return {
    challenge: { id: terms.id, coord, challenge_hash: toHex(challengeHash), target: targetToHex(target) },
    cases: cases.map((c) => {
      const { signature, ...rest } = c.submission;
      const submission = signature === undefined ? rest : { ...rest, signature };
      const verdict = verifyBlock(terms, submission, { requireSignature: c.require_signature ?? true });
      return {
        name: c.name,
        require_signature: c.require_signature ?? true,
        submission,
        verdict: verdict.ok
          ? { ok: true, block_hash: toHex(verdict.blockHash) }
          : { ok: false, code: verdict.code, message: verdict.message },
      };
    }),
  };
}

function chainCase() {
  const seed = hashOf('hexchain test validator seed');
  const miners = [testKey('hexchain-miner-a'), testKey('hexchain-miner-b')];
  const difficulty = 16n;
  const target = targetFromDifficulty(difficulty);
  const lattice = new Lattice();
  const steps = [];
  for (let serial = 1; serial <= 8; serial++) {
    const key = miners[serial % 2]!;
    const slot = 5000 + Math.floor(serial / 3);
    const slotHash = toHex(hashOf(`slot ${slot}`));
    const frontierNow = lattice.frontier();
    const entropy = hexChallengeEntropy(seed, serial);
    const selector = cellSelector(slot, slotHash, entropy);
    const coord = chooseTargetCell(frontierNow, selector);
    const parents = lattice.parentsOf(coord);
    const root = parentsRoot(parents);
    const depth = depthFromParents(parents);
    const challengeHash = hexChallengeHash({ coord, slot, slotHash, target, parentsRoot: root, entropy });
    const challengeId = `hx-chain-${serial}`;
    const solved = solveBlock({ challengeHash, coord, minerPublicKey: key.publicKey, target })!;
    const blockHash = hexBlockHash(solved.header);
    const signature = signSubmission(challengeId, solved.header, key.secretKey);
    steps.push({
      serial,
      slot,
      slot_hash: slotHash,
      frontier: frontierNow.map(wireCoord),
      entropy: toHex(entropy),
      selector: toHex(selector),
      coord: wireCoord(coord),
      parents: parents.map((p) => ({
        coord: wireCoord(p.coord),
        block_hash: toHex(p.blockHash),
        depth: p.depth,
      })),
      parents_root: toHex(root),
      depth,
      challenge_id: challengeId,
      challenge_hash: toHex(challengeHash),
      miner_pubkey: toHex(key.publicKey),
      nonce: solved.nonce,
      header: toHex(solved.header),
      pow_hash: toHex(solved.powHash),
      block_hash: toHex(blockHash),
      signature: toHex(signature),
    });
    lattice.add({ coord, blockHash, depth });
  }
  return {
    validator_seed: toHex(seed),
    entropy_rule: 'HMAC-SHA256(validator_seed, utf8("PTM41/entropy") || u64le(serial))',
    difficulty: difficulty.toString(),
    target: targetToHex(target),
    steps,
    final_frontier: lattice.frontier().map(wireCoord),
  };
}

export function generate() {
  return {
    area: 'hexchain',
    protocol: 'v4.1',
    notes: [
      'Hex strings are lowercase; integers are JSON numbers; 256-bit values and difficulties are decimal strings or 64 hex digits (big-endian).',
      'miner_secret_key_test_only values are derived test keys: never use them for anything real.',
      'message fields in error cases are what the TypeScript library says; other implementations need only match code.',
    ],
    constants: {
      header_version: HEADER_VERSION,
      header_bytes: HEADER_BYTES,
      nonce_offset: NONCE_OFFSET,
      midstate_prefix_bytes: MIDSTATE_PREFIX_BYTES,
      lattice_radius_max: LATTICE_RADIUS_MAX,
      min_difficulty: MIN_HEX_DIFFICULTY.toString(),
      max_difficulty: MAX_HEX_DIFFICULTY.toString(),
      retarget_window_blocks: RETARGET_WINDOW_BLOCKS,
      block_interval_ms_default: BLOCK_INTERVAL_MS_DEFAULT.toString(),
      genesis_coord: GENESIS_COORD,
      genesis_depth: GENESIS_DEPTH,
      genesis_block_hash: GENESIS_BLOCK_HASH,
      tags: HEXCHAIN_TAGS,
    },
    coordinates: coordinateCases(),
    neighbors: neighborCases(),
    distances: distanceCases(),
    canonical_order: canonicalOrder(),
    frontiers: frontierCases(),
    cell_selectors: cellSelectorCases(),
    target_cells: targetCellCases(),
    parents: parentCases(),
    challenge_hashes: challengeHashCases(),
    headers: headerCases(),
    targets: targetCases(),
    hash_meets_target: hashMeetsTargetCases(),
    retarget: retargetCases(),
    solved: solvedCases(),
    submissions: submissionCases(),
    block_verdicts: verdictCases(),
    chain: chainCase(),
  };
}
