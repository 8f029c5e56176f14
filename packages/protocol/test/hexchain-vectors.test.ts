import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from '../src/bytes.js';
import { keyPairFromSecret, signatureFromWire, signatureToWire, verify } from '../src/ed25519.js';
import { ProtocolError } from '../src/errors.js';
import { cellSelector, chooseTargetCell, hexChallengeEntropy } from '../src/hexchain/cell.js';
import { hexChallengeHash } from '../src/hexchain/challenge-hash.js';
import { HEADER_VERSION, HEXCHAIN_TAGS, LATTICE_RADIUS_MAX } from '../src/hexchain/constants.js';
import { type Coord, compareCoords, coordKey, distance, parseCoord, ring } from '../src/hexchain/coord.js';
import { frontier } from '../src/hexchain/frontier.js';
import { GENESIS_BLOCK_HASH, GENESIS_COORD, GENESIS_DEPTH } from '../src/hexchain/genesis.js';
import {
  decodeHeader,
  encodeHeader,
  HEADER_BYTES,
  hexBlockHash,
  hexPowHash,
  MIDSTATE_PREFIX_BYTES,
  NONCE_OFFSET,
} from '../src/hexchain/header.js';
import { Lattice } from '../src/hexchain/lattice.js';
import { neighbors } from '../src/hexchain/neighbors.js';
import { depthFromParents, parentsRoot } from '../src/hexchain/parents.js';
import { BLOCK_INTERVAL_MS_DEFAULT, RETARGET_WINDOW_BLOCKS, retarget } from '../src/hexchain/retarget.js';
import { solveBlock } from '../src/hexchain/solve-block.js';
import { type HexSubmissionInput, signSubmission, submissionMessage } from '../src/hexchain/submission.js';
import {
  hashMeetsTarget,
  MAX_HEX_DIFFICULTY,
  MIN_HEX_DIFFICULTY,
  targetFromDifficulty,
  targetFromHex,
  targetToHex,
} from '../src/hexchain/target.js';
import { verifyBlock } from '../src/hexchain/verify-block.js';

interface WireParent {
  coord: Coord;
  block_hash: string;
  depth: number;
}

interface Vectors {
  constants: Record<string, unknown> & { tags: Record<string, string> };
  coordinates: {
    input: unknown;
    valid: boolean;
    key?: string;
    ring?: number;
    code?: string;
    message?: string;
  }[];
  neighbors: { coord: Coord; neighbors: Coord[] }[];
  distances: { a: Coord; b: Coord; distance: number }[];
  canonical_order: { input: Coord[]; sorted: Coord[] };
  frontiers: { occupied: Coord[]; frontier: Coord[] }[];
  cell_selectors: {
    slot: number;
    slot_hash: string;
    slot_hash_digest: string;
    entropy: string;
    selector: string;
  }[];
  target_cells: { frontier: Coord[]; selector: string; index: number; coord: Coord }[];
  parents: { parents: WireParent[]; parents_root: string; depth: number }[];
  challenge_hashes: {
    version: number;
    coord: Coord;
    slot: number;
    slot_hash: string;
    target: string;
    parents_root: string;
    entropy: string;
    challenge_hash: string;
  }[];
  headers: {
    coord: Coord;
    challenge_hash: string;
    miner_pubkey: string;
    nonce: number;
    header: string;
    pow_hash: string;
    block_hash: string;
  }[];
  targets: { difficulty: string; target: string }[];
  hash_meets_target: { hash: string; target: string; meets: boolean }[];
  retarget: {
    name: string;
    old_difficulty: string;
    actual_span_ms: string;
    window_blocks: number;
    interval_ms: string;
    new_difficulty: string;
  }[];
  solved: {
    difficulty: string;
    target: string;
    challenge_hash: string;
    coord: Coord;
    miner_pubkey: string;
    start_nonce: number;
    nonce: number;
    header: string;
    pow_hash: string;
    block_hash: string;
  }[];
  submissions: {
    challenge_id: string;
    header: string;
    message: string;
    miner_secret_key_test_only: string;
    miner_pubkey: string;
    signature: string;
    signature_wire: number[];
  }[];
  block_verdicts: {
    challenge: { id: string; coord: Coord; challenge_hash: string; target: string };
    cases: {
      name: string;
      require_signature: boolean;
      submission: HexSubmissionInput;
      verdict: { ok: true; block_hash: string } | { ok: false; code: string; message: string };
    }[];
  };
  chain: {
    validator_seed: string;
    difficulty: string;
    target: string;
    steps: (WireParent & {
      serial: number;
      slot: number;
      slot_hash: string;
      frontier: Coord[];
      entropy: string;
      selector: string;
      parents: WireParent[];
      parents_root: string;
      challenge_id: string;
      challenge_hash: string;
      miner_pubkey: string;
      nonce: number;
      header: string;
      pow_hash: string;
      signature: string;
    })[];
    final_frontier: Coord[];
  };
}

const vectors = JSON.parse(
  readFileSync(new URL('../vectors/hexchain.vectors.json', import.meta.url), 'utf8'),
) as Vectors;

const parent = (p: WireParent) => ({ coord: p.coord, blockHash: fromHex(p.block_hash), depth: p.depth });

describe('hexchain vectors', () => {
  it('state the constants of the library', () => {
    expect(vectors.constants).toEqual({
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
    });
  });

  it('reproduce coordinate validity', () => {
    expect(vectors.coordinates.length).toBeGreaterThan(10);
    for (const v of vectors.coordinates) {
      if (v.valid) {
        const c = parseCoord(v.input);
        expect([coordKey(c), ring(c)]).toEqual([v.key, v.ring]);
      } else {
        let error: unknown;
        try {
          parseCoord(v.input);
        } catch (caught) {
          error = caught;
        }
        expect(error).toBeInstanceOf(ProtocolError);
        expect([(error as ProtocolError).code, (error as ProtocolError).message]).toEqual([
          v.code,
          v.message,
        ]);
      }
    }
  });

  it('reproduce neighbours, distances and the canonical order', () => {
    for (const v of vectors.neighbors) expect(neighbors(v.coord)).toEqual(v.neighbors);
    for (const v of vectors.distances) expect(distance(v.a, v.b)).toBe(v.distance);
    expect([...vectors.canonical_order.input].sort(compareCoords)).toEqual(vectors.canonical_order.sorted);
  });

  it('reproduce frontiers', () => {
    for (const v of vectors.frontiers) expect(frontier(v.occupied)).toEqual(v.frontier);
  });

  it('reproduce cell selectors and target cells', () => {
    for (const v of vectors.cell_selectors) {
      expect(toHex(cellSelector(v.slot, v.slot_hash, fromHex(v.entropy)))).toBe(v.selector);
    }
    for (const v of vectors.target_cells) {
      const coord = chooseTargetCell(v.frontier, fromHex(v.selector));
      expect(coord).toEqual(v.coord);
      expect(v.frontier[v.index]).toEqual(v.coord);
    }
  });

  it('reproduce parents roots and depths', () => {
    for (const v of vectors.parents) {
      const parents = v.parents.map(parent);
      expect(toHex(parentsRoot(parents))).toBe(v.parents_root);
      expect(depthFromParents(parents)).toBe(v.depth);
    }
  });

  it('reproduce challenge hashes', () => {
    for (const v of vectors.challenge_hashes) {
      const hash = hexChallengeHash({
        version: v.version,
        coord: v.coord,
        slot: v.slot,
        slotHash: v.slot_hash,
        target: targetFromHex(v.target),
        parentsRoot: fromHex(v.parents_root),
        entropy: fromHex(v.entropy),
      });
      expect(toHex(hash)).toBe(v.challenge_hash);
    }
  });

  it('reproduce headers, pow hashes and block hashes', () => {
    for (const v of vectors.headers) {
      const header = encodeHeader({
        coord: v.coord,
        challengeHash: fromHex(v.challenge_hash),
        minerPublicKey: fromHex(v.miner_pubkey),
        nonce: v.nonce,
      });
      expect(toHex(header)).toBe(v.header);
      expect(toHex(hexPowHash(header))).toBe(v.pow_hash);
      expect(toHex(hexBlockHash(header))).toBe(v.block_hash);
      expect(decodeHeader(header).nonce).toBe(v.nonce);
    }
  });

  it('reproduce targets and target comparisons', () => {
    for (const v of vectors.targets)
      expect(targetToHex(targetFromDifficulty(BigInt(v.difficulty)))).toBe(v.target);
    for (const v of vectors.hash_meets_target) {
      expect(hashMeetsTarget(fromHex(v.hash), targetFromHex(v.target))).toBe(v.meets);
    }
  });

  it('reproduce retargets', () => {
    for (const v of vectors.retarget) {
      const next = retarget(
        BigInt(v.old_difficulty),
        BigInt(v.actual_span_ms),
        v.window_blocks,
        BigInt(v.interval_ms),
      );
      expect([v.name, next.toString()]).toEqual([v.name, v.new_difficulty]);
    }
  });

  it('reproduce solved blocks: the first nonce from start_nonce that meets the target', () => {
    for (const v of vectors.solved) {
      const target = targetFromDifficulty(BigInt(v.difficulty));
      expect(targetToHex(target)).toBe(v.target);
      const solved = solveBlock({
        challengeHash: fromHex(v.challenge_hash),
        coord: v.coord,
        minerPublicKey: fromHex(v.miner_pubkey),
        target,
        startNonce: v.start_nonce,
      })!;
      expect(solved.nonce).toBe(v.nonce);
      expect(toHex(solved.header)).toBe(v.header);
      expect(toHex(solved.powHash)).toBe(v.pow_hash);
      expect(toHex(hexBlockHash(solved.header))).toBe(v.block_hash);
    }
  });

  it('reproduce submission messages and signatures', () => {
    for (const v of vectors.submissions) {
      const key = keyPairFromSecret(fromHex(v.miner_secret_key_test_only));
      expect(toHex(key.publicKey)).toBe(v.miner_pubkey);
      const header = fromHex(v.header);
      expect(toHex(submissionMessage(v.challenge_id, header))).toBe(v.message);
      const signature = signSubmission(v.challenge_id, header, key.secretKey);
      expect(toHex(signature)).toBe(v.signature);
      expect(signatureToWire(signature)).toEqual(v.signature_wire);
      expect(verify(signatureFromWire(v.signature_wire), fromHex(v.message), key.publicKey)).toBe(true);
    }
  });

  it('reproduce block verdicts', () => {
    const c = vectors.block_verdicts.challenge;
    const terms = {
      id: c.id,
      coord: c.coord,
      challengeHash: fromHex(c.challenge_hash),
      target: targetFromHex(c.target),
    };
    for (const v of vectors.block_verdicts.cases) {
      const verdict = verifyBlock(terms, v.submission, { requireSignature: v.require_signature });
      const got = verdict.ok
        ? { ok: true, block_hash: toHex(verdict.blockHash) }
        : { ok: false, code: verdict.code, message: verdict.message };
      expect([v.name, got]).toEqual([v.name, v.verdict]);
    }
  });

  it('reproduce the chain grown from genesis, step by step', () => {
    const chain = vectors.chain;
    const target = targetFromDifficulty(BigInt(chain.difficulty));
    expect(targetToHex(target)).toBe(chain.target);
    const seed = fromHex(chain.validator_seed);
    const lattice = new Lattice();
    for (const step of chain.steps) {
      expect(lattice.frontier()).toEqual(step.frontier);
      const entropy = hexChallengeEntropy(seed, step.serial);
      expect(toHex(entropy)).toBe(step.entropy);
      expect(toHex(cellSelector(step.slot, step.slot_hash, entropy))).toBe(step.selector);
      const coord = chooseTargetCell(lattice.frontier(), fromHex(step.selector));
      expect(coord).toEqual(step.coord);
      const parents = lattice.parentsOf(coord);
      expect(
        parents.map((p) => ({ coord: p.coord, block_hash: toHex(p.blockHash), depth: p.depth })),
      ).toEqual(step.parents);
      const root = parentsRoot(parents);
      expect(toHex(root)).toBe(step.parents_root);
      expect(depthFromParents(parents)).toBe(step.depth);
      const challengeHash = hexChallengeHash({
        coord,
        slot: step.slot,
        slotHash: step.slot_hash,
        target,
        parentsRoot: root,
        entropy,
      });
      expect(toHex(challengeHash)).toBe(step.challenge_hash);
      const header = encodeHeader({
        coord,
        challengeHash,
        minerPublicKey: fromHex(step.miner_pubkey),
        nonce: step.nonce,
      });
      expect(toHex(header)).toBe(step.header);
      expect(toHex(hexPowHash(header))).toBe(step.pow_hash);
      expect(hashMeetsTarget(hexPowHash(header), target)).toBe(true);
      expect(toHex(hexBlockHash(header))).toBe(step.block_hash);
      const submission: HexSubmissionInput = {
        challenge_id: step.challenge_id,
        block: { coord, pow_hash: step.pow_hash, nonce: step.nonce, miner_pubkey: step.miner_pubkey },
        signature: signatureToWire(fromHex(step.signature)),
      };
      const verdict = verifyBlock({ id: step.challenge_id, coord, challengeHash, target }, submission);
      expect(verdict.ok).toBe(true);
      lattice.add({ coord, blockHash: hexBlockHash(header), depth: step.depth });
    }
    expect(lattice.frontier()).toEqual(chain.final_frontier);
  });
});
