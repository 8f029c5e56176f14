import {
  type Coord,
  coordKey,
  encodeHeader,
  formatPublicKey,
  fromHex,
  frontier,
  GENESIS_BLOCK_HASH,
  HEADER_VERSION,
  type HexBlock,
  type HexChallenge,
  type HexStatus,
  HexStatusSchema,
  hashMeetsTarget,
  hexBlockHash,
  hexPowHash,
  type LatticePage,
  neighbors,
  signatureToWire,
  signSubmission,
  targetFromDifficulty,
  targetFromHex,
  targetToHex,
  toHex,
} from '@tensormine/protocol';
import { describe, expect, it } from 'vitest';
import type { Validator } from '../src/app.js';
import { HEX_BLOCK_REWARD } from '../src/services/hexchain.js';
import { post, register, testKey, testValidator } from './helpers.js';
import {
  expectError,
  fmt,
  issue,
  mine,
  mineBlock,
  SLOT_HASH,
  submit,
  twoForOneCell,
} from './hexchain-mine.js';

const alice = testKey('hexchain-alice');
const bob = testKey('hexchain-bob');
const ALICE = formatPublicKey(alice.publicKey);
const BOB = formatPublicKey(bob.publicKey);

async function status(v: Validator): Promise<HexStatus> {
  const res = await v.inject('/api/hexchain/status');
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as HexStatus;
}

async function rejections(v: Validator): Promise<Record<string, number>> {
  const res = await v.inject({ url: '/admin/metrics', headers: { authorization: `Bearer ${v.adminToken}` } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { rejections_by_reason: Record<string, number> }).rejections_by_reason;
}

describe('POST /api/hexchain/challenge', () => {
  it('issues a challenge for a ring-1 cell with genesis as the only parent', async () => {
    const v = await testValidator();
    const c = await issue(v);
    expect(Object.keys(c).sort()).toEqual(
      [
        'id',
        'coord',
        'slot',
        'version',
        'slot_hash',
        'challenge_hash',
        'target',
        'difficulty',
        'parents',
        'depth',
        'header_version',
        'issued_at',
        'expires_at',
      ].sort(),
    );
    expect(c.id).toBe(`h-${c.challenge_hash.slice(0, 24)}`);
    expect(c.version).toBe('4.1');
    expect(c.slot).toBe(5000);
    expect(c.slot_hash).toBe(SLOT_HASH);
    expect(frontier([{ q: 0, r: 0, s: 0 }]).map(coordKey)).toContain(coordKey(c.coord));
    expect(c.difficulty).toBe(64);
    expect(c.target).toBe(targetToHex(targetFromDifficulty(64n)));
    expect(c.parents).toEqual([{ coord: { q: 0, r: 0, s: 0 }, block_hash: GENESIS_BLOCK_HASH, depth: 0 }]);
    expect(c.depth).toBe(1);
    expect(c.header_version).toBe(HEADER_VERSION);
    expect(c.expires_at - c.issued_at).toBe(v.context.runtime.challengeTtlS);
  });

  it('gives concurrent challenges for one slot different ids and, across the frontier, different cells', async () => {
    const v = await testValidator();
    const issued = await Promise.all(Array.from({ length: 24 }, () => issue(v)));
    expect(new Set(issued.map((c) => c.id)).size).toBe(24);
    expect(new Set(issued.map((c) => coordKey(c.coord))).size).toBeGreaterThan(1);
    expect((await status(v)).open_challenges).toBe(24);
  });

  it('refuses an unregistered miner_pubkey and reserves the challenge for a registered one', async () => {
    const v = await testValidator();
    expectError(
      await post(v, '/api/hexchain/challenge', { slot: 1, slot_hash: 'x', miner_pubkey: ALICE }),
      403,
      'miner_not_registered',
      `miner_pubkey: ${ALICE} is not registered; register it with POST /devices/register`,
    );
    await register(v, alice);
    await register(v, bob);
    const c = await issue(v, { miner_pubkey: ALICE });
    expectError(
      await submit(v, mine(c, bob)),
      403,
      'pubkey_mismatch',
      `block.miner_pubkey: expected ${ALICE} (the key this challenge was issued to), got ${BOB}`,
    );
    expect((await submit(v, mine(c, alice))).statusCode).toBe(200);
  });
});

describe('POST /api/hexchain/submit', () => {
  it('accepts a mined block, credits 1 PTM and shows it in the lattice, the lookup and the status', async () => {
    const now = Math.floor(Date.now() / 1000) * 1000 + 250;
    const v = await testValidator({ now: () => now });
    await register(v, alice);
    // Read before the challenge and the block: the answers kept between changes must not outlive them.
    expect((await status(v)).open_challenges).toBe(0);
    const c = await issue(v);
    expect((await status(v)).open_challenges).toBe(1);
    const empty = { blocks: [], next_cursor: null, total: 0 };
    expect((await v.inject('/api/hexchain/lattice')).json()).toEqual(empty);
    expect((await v.inject('/api/hexchain/lattice?limit=5')).json()).toEqual(empty);
    expect((await status(v)).occupied).toBe(1);
    const submission = mine(c, alice);
    const res = await submit(v, submission);
    expect(res.statusCode, res.body).toBe(200);
    const header = encodeHeader({
      coord: c.coord,
      challengeHash: fromHex(c.challenge_hash),
      minerPublicKey: alice.publicKey,
      nonce: submission.block.nonce,
    });
    const blockHash = toHex(hexBlockHash(header));
    expect(res.json()).toEqual({
      accepted: true,
      depth: 1,
      block_hash: blockHash,
      coord: c.coord,
      reward: '1',
      token: 'PTM',
    });

    const expected: HexBlock = {
      coord: c.coord,
      block_hash: blockHash,
      pow_hash: toHex(hexPowHash(header)),
      depth: 1,
      parents: [{ q: 0, r: 0, s: 0 }],
      miner_pubkey: ALICE,
      nonce: submission.block.nonce,
      challenge_id: c.id,
      slot: 5000,
      difficulty: 64,
      timestamp: Math.floor(now / 1000),
    };
    const page = (await v.inject('/api/hexchain/lattice')).json() as LatticePage;
    expect(page).toEqual({ blocks: [expected], next_cursor: null, total: 1 });
    expect((await v.inject('/api/hexchain/lattice?limit=5')).json()).toEqual(page);
    const lookup = await v.inject(`/api/hexchain/lattice/${c.coord.q}/${c.coord.r}/${c.coord.s}`);
    expect(lookup.statusCode).toBe(200);
    expect(lookup.json()).toEqual(expected);

    const s = await status(v);
    expect(s).toEqual({
      occupied: 2,
      max_depth: 1,
      depth_distribution: [
        { depth: 0, count: 1 },
        { depth: 1, count: 1 },
      ],
      frontier_size: 8,
      difficulty: 64,
      target: targetToHex(targetFromDifficulty(64n)),
      open_challenges: 1,
      block_interval_s: 10,
      blocks_until_retarget: 11,
      last_block_at: expected.timestamp,
      genesis_hash: GENESIS_BLOCK_HASH,
    });

    const balance = await v.context.storage.read((tx) => tx.ledger.balance(ALICE, 'PTM'));
    expect(balance).toBe(HEX_BLOCK_REWARD);
    const entries = await v.context.storage.read((tx) => tx.ledger.list({ pubkey: ALICE, limit: 10 }));
    expect(entries.map((e) => [e.type, e.token, e.amount, e.ref])).toEqual([
      ['mining_reward', 'PTM', 1_000_000_000n, blockHash],
    ]);
    const miner = await v.context.storage.read((tx) => tx.miners.get(ALICE));
    expect(miner?.blocksAccepted).toBe(1);
    const node = (await v.inject('/status')).json() as {
      hexchain: unknown;
      stats: { total_blocks_accepted: number };
    };
    expect(node.hexchain).toEqual({ enabled: true, difficulty: 64, occupied: 2 });
    expect(node.stats.total_blocks_accepted).toBe(1);
  });

  it('lets the first valid block win: a second block for the same cell gets coordinate_occupied', async () => {
    const v = await testValidator();
    await register(v, alice);
    await register(v, bob);
    const [first, second] = await twoForOneCell(v);
    const fromAlice = mine(first, alice);
    const fromBob = mine(second, bob);
    const won = await submit(v, fromAlice);
    expect(won.statusCode, won.body).toBe(200);
    const winner = won.json() as { block_hash: string };
    const lost = await submit(v, fromBob);
    const message = `coordinate ${fmt(first.coord)} is already occupied by block ${winner.block_hash} (depth 1); the first valid block wins: request a new challenge`;
    expectError(lost, 409, 'coordinate_occupied', message);
    expect(lost.json().details).toEqual({ coord: first.coord, block_hash: winner.block_hash, depth: 1 });
    // The winning submission again (a client retrying): the original acceptance, nothing more.
    const again = await submit(v, fromAlice);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual(won.json());
    // Bob's block sent again is still refused.
    expectError(await submit(v, fromBob), 409, 'coordinate_occupied', message);
    const lookup = (
      await v.inject(`/api/hexchain/lattice/${first.coord.q}/${first.coord.r}/${first.coord.s}`)
    ).json();
    expect(lookup.miner_pubkey).toBe(ALICE);
    expect((await status(v)).occupied).toBe(2);
    expect(await v.context.storage.read((tx) => tx.ledger.balance(BOB, 'PTM'))).toBe(0n);
  });

  it('accepts exactly one of two blocks for one cell submitted at the same time', async () => {
    const v = await testValidator();
    await register(v, alice);
    await register(v, bob);
    const [first, second] = await twoForOneCell(v);
    const results = await Promise.all([submit(v, mine(first, alice)), submit(v, mine(second, bob))]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const lost = results.find((r) => r.statusCode === 409)!;
    const won = results.find((r) => r.statusCode === 200)!.json() as { block_hash: string };
    expect(lost.json().details.block_hash).toBe(won.block_hash);
    const s = await status(v);
    expect(s.occupied).toBe(2);
    expect(s.frontier_size).toBe(8);
  });

  it('rejects an unknown challenge', async () => {
    const v = await testValidator();
    await register(v, alice);
    const c = await issue(v);
    const submission = { ...mine(c, alice), challenge_id: 'h-000000000000000000000000' };
    expectError(
      await submit(v, submission),
      404,
      'challenge_not_found',
      'challenge_id: no challenge "h-000000000000000000000000" was issued by this validator',
    );
  });

  it('rejects a block after the challenge expired (fake clock)', async () => {
    let now = Date.now();
    const v = await testValidator({ now: () => now });
    await register(v, alice);
    const c = await issue(v);
    const submission = mine(c, alice);
    // Accepted through the second expires_at (as v4.0); refused from the next second on.
    now = (c.expires_at + 1) * 1000;
    const res = await submit(v, submission);
    expectError(
      res,
      410,
      'challenge_expired',
      `challenge ${c.id} expired at ${c.expires_at} (Unix seconds), it is now ${c.expires_at + 1}; request a new one`,
    );
    expect((await status(v)).open_challenges).toBe(0);
  });

  it('rejects a block mined by an unregistered key', async () => {
    const v = await testValidator();
    const c = await issue(v);
    expectError(
      await submit(v, mine(c, alice)),
      403,
      'miner_not_registered',
      `block.miner_pubkey: ${ALICE} is not registered; register it with POST /devices/register`,
    );
  });

  it('rejects a block for another coordinate', async () => {
    const v = await testValidator();
    await register(v, alice);
    const c = await issue(v);
    const other = neighbors(c.coord).find((n) => !(n.q === 0 && n.r === 0 && n.s === 0))!;
    const submission = mine(c, alice);
    expectError(
      await submit(v, { ...submission, block: { ...submission.block, coord: other } }),
      422,
      'coordinate_mismatch',
      `block.coord: expected the challenge coordinate ${fmt(c.coord)}, got ${fmt(other)}`,
    );
  });

  it('rejects an invalid coordinate in the submission', async () => {
    const v = await testValidator();
    await register(v, alice);
    const c = await issue(v);
    const submission = mine(c, alice);
    const withCoord = (coord: unknown) => submit(v, { ...submission, block: { ...submission.block, coord } });
    expectError(
      await withCoord({ q: 1, r: 1, s: 1 }),
      400,
      'invalid_coordinate',
      'block.coord: expected q + r + s = 0, got q=1 r=1 s=1',
    );
    // Out of bounds and non-integers are refused by the request schema.
    expectError(await withCoord({ q: 2 ** 21, r: -(2 ** 21), s: 0 }), 400, 'validation_failed');
    expectError(await withCoord({ q: 1e300, r: -1e300, s: 0 }), 400, 'validation_failed');
    expectError(await withCoord({ q: 0.5, r: -0.5, s: 0 }), 400, 'validation_failed');
    expectError(await withCoord({ q: '1', r: '-1', s: '0' }), 400, 'validation_failed');
  });

  it('rejects a pow_hash that is not the hash of the rebuilt header', async () => {
    const v = await testValidator();
    await register(v, alice);
    const c = await issue(v);
    const submission = mine(c, alice);
    const forged = '00'.repeat(32);
    const res = await submit(v, { ...submission, block: { ...submission.block, pow_hash: forged } });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'pow_hash_mismatch', details: { got: forged } });
    // Never the hash the validator computed: a miner could otherwise skip its own hashing.
    expect(res.body).not.toContain(submission.block.pow_hash);
  });

  it('rejects a block whose hash is above the target', async () => {
    const v = await testValidator();
    await register(v, alice);
    const c = await issue(v);
    const target = targetFromHex(c.target);
    let nonce = 0;
    for (; ; nonce++) {
      const header = encodeHeader({
        coord: c.coord,
        challengeHash: fromHex(c.challenge_hash),
        minerPublicKey: alice.publicKey,
        nonce,
      });
      if (!hashMeetsTarget(hexPowHash(header), target)) break;
    }
    const header = encodeHeader({
      coord: c.coord,
      challengeHash: fromHex(c.challenge_hash),
      minerPublicKey: alice.publicKey,
      nonce,
    });
    const powHash = toHex(hexPowHash(header));
    const res = await submit(v, {
      challenge_id: c.id,
      block: { coord: c.coord, pow_hash: powHash, nonce, miner_pubkey: ALICE },
      signature: signatureToWire(signSubmission(c.id, header, alice.secretKey)),
    });
    expectError(
      res,
      422,
      'pow_above_target',
      `block.pow_hash: expected a hash <= the target ${c.target}, got ${powHash}`,
    );
    expect(res.json().details).toEqual({ pow_hash: powHash, target: c.target });
    expect((await status(v)).occupied).toBe(1);
  });

  it('requires a valid signature by default', async () => {
    const v = await testValidator();
    await register(v, alice);
    const c = await issue(v);
    expectError(
      await submit(v, mine(c, alice, { sign: false })),
      401,
      'signature_required',
      'signature: expected an ed25519 signature by block.miner_pubkey (an array of 64 byte integers), got none',
    );
    const signed = mine(c, alice);
    const tampered = [...signed.signature!];
    tampered[0] = (tampered[0]! + 1) % 256;
    expectError(
      await submit(v, { ...signed, signature: tampered }),
      401,
      'signature_invalid',
      `signature: does not verify against block.miner_pubkey over the submission message of challenge_id "${c.id}"`,
    );
    // A signature made for another challenge does not verify for this one.
    const header = encodeHeader({
      coord: c.coord,
      challengeHash: fromHex(c.challenge_hash),
      minerPublicKey: alice.publicKey,
      nonce: signed.block.nonce,
    });
    const foreign = signatureToWire(signSubmission('h-another', header, alice.secretKey));
    expectError(await submit(v, { ...signed, signature: foreign }), 401, 'signature_invalid');
    expectError(await submit(v, { ...signed, signature: [1, 2, 3] }), 400, 'validation_failed');
    expect((await submit(v, signed)).statusCode).toBe(200);
  });

  it('accepts unsigned blocks when requireSignatures is false, but still checks a signature present', async () => {
    const v = await testValidator({ requireSignatures: false });
    await register(v, alice);
    const [first, second] = await Promise.all([issue(v), issue(v)]);
    const signed = mine(first, alice);
    const tampered = signed.signature!.map((b, i) => (i === 5 ? (b + 1) % 256 : b));
    expectError(await submit(v, { ...signed, signature: tampered }), 401, 'signature_invalid');
    expect((await submit(v, mine(first, alice, { sign: false }))).statusCode).toBe(200);
    if (coordKey(second.coord) !== coordKey(first.coord)) {
      expect((await submit(v, mine(second, alice, { sign: false }))).statusCode).toBe(200);
    }
  });

  it('runs the checks in the documented order and counts every rejection by reason', async () => {
    let now = Date.now();
    const v = await testValidator({ now: () => now });
    await register(v, alice);
    const [first, second] = await twoForOneCell(v);
    expect((await submit(v, mine(first, alice))).statusCode).toBe(200);
    const third = await issue(v); // for a free cell: first's cell is no longer on the frontier
    // occupied beats an unregistered key and a bad proof of work
    const fromBob = mine(second, bob);
    expectError(
      await submit(v, { ...fromBob, block: { ...fromBob.block, pow_hash: 'ff'.repeat(32) } }),
      409,
      'coordinate_occupied',
    );
    // an unregistered key beats a bad proof of work
    const thirdBob = mine(third, bob);
    expectError(
      await submit(v, { ...thirdBob, block: { ...thirdBob.block, pow_hash: 'ff'.repeat(32) } }),
      403,
      'miner_not_registered',
    );
    // expiry beats occupation
    now += 3_600_000;
    expectError(await submit(v, mine(second, alice)), 410, 'challenge_expired');
    expect(await rejections(v)).toMatchObject({
      coordinate_occupied: 1,
      miner_not_registered: 1,
      challenge_expired: 1,
    });
    const metrics = await v.inject({
      url: '/admin/metrics',
      headers: { authorization: `Bearer ${v.adminToken}` },
    });
    expect(metrics.json().blocks_accepted).toBe(1);
  });

  it('never answers bad input with a 5xx', async () => {
    const v = await testValidator();
    await register(v, alice);
    const c = await issue(v);
    const good = mine(c, alice);
    const bodies: unknown[] = [
      {},
      { challenge_id: c.id },
      { challenge_id: c.id, block: null },
      { challenge_id: c.id, block: [] },
      { challenge_id: '', block: good.block },
      { challenge_id: 'x'.repeat(500), block: good.block },
      { challenge_id: 'bad id!', block: good.block },
      { ...good, block: { ...good.block, nonce: -1 } },
      { ...good, block: { ...good.block, nonce: 2 ** 53 } },
      { ...good, block: { ...good.block, nonce: 1.5 } },
      { ...good, block: { ...good.block, nonce: '7' } },
      { ...good, block: { ...good.block, pow_hash: 'zz'.repeat(32) } },
      { ...good, block: { ...good.block, pow_hash: 'AB'.repeat(32) } },
      { ...good, block: { ...good.block, miner_pubkey: 'ab' } },
      { ...good, block: { ...good.block, coord: null } },
      { ...good, block: { ...good.block, coord: { q: 0, r: 0 } } },
      { ...good, signature: Array.from({ length: 64 }, () => 256) },
      { ...good, signature: 'abc' },
    ];
    for (const body of bodies) {
      const res = await submit(v, body);
      expect(res.statusCode, `${JSON.stringify(body).slice(0, 80)} -> ${res.body}`).toBeGreaterThanOrEqual(
        400,
      );
      expect(res.statusCode, res.body).toBeLessThan(500);
    }
    const challenges: unknown[] = [
      {},
      { slot: -1, slot_hash: 'x' },
      { slot: 2 ** 53, slot_hash: 'x' },
      { slot: 1.5, slot_hash: 'x' },
      { slot: 1, slot_hash: '' },
      { slot: 1, slot_hash: 'x'.repeat(129) },
      { slot: 1, slot_hash: '\ud800' },
      { slot: 1, slot_hash: 'x', miner_pubkey: 'nothex' },
    ];
    for (const body of challenges) {
      const res = await post(v, '/api/hexchain/challenge', body);
      expect(res.statusCode, `${JSON.stringify(body)} -> ${res.body}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.body).toBeLessThan(500);
    }
    const raw = await v.inject({
      method: 'POST',
      url: '/api/hexchain/submit',
      headers: { 'content-type': 'application/json' },
      payload: '{"challenge_id":',
    });
    expect(raw.statusCode).toBe(400);
    // the good submission still works after all that
    expect((await submit(v, good)).statusCode).toBe(200);
  });
});

describe('depth', () => {
  it('follows the parents as the lattice grows', async () => {
    const v = await testValidator();
    await register(v, alice);
    const depthOf = new Map<string, number>([['0,0,0', 0]]);
    const occupied: Coord[] = [{ q: 0, r: 0, s: 0 }];
    for (let i = 0; i < 10; i++) {
      const c = await issue(v, { slot: 100 + i });
      const expectedParents = neighbors(c.coord)
        .filter((n) => depthOf.has(coordKey(n)))
        .map((n) => ({ coord: n, depth: depthOf.get(coordKey(n))! }));
      expect(c.parents.map((p) => coordKey(p.coord)).sort()).toEqual(
        expectedParents.map((p) => coordKey(p.coord)).sort(),
      );
      const depth = 1 + Math.max(...expectedParents.map((p) => p.depth));
      expect(c.depth).toBe(depth);
      const res = await submit(v, mine(c, alice));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().depth).toBe(depth);
      depthOf.set(coordKey(c.coord), depth);
      occupied.push(c.coord);
      for (const p of c.parents) {
        const at = await v.inject(`/api/hexchain/lattice/${p.coord.q}/${p.coord.r}/${p.coord.s}`);
        if (coordKey(p.coord) === '0,0,0') expect(at.statusCode).toBe(404);
        else expect(at.json().block_hash).toBe(p.block_hash);
      }
    }
    const s = await status(v);
    expect(s.occupied).toBe(11);
    expect(s.frontier_size).toBe(frontier(occupied).length);
    expect(s.max_depth).toBe(Math.max(...depthOf.values()));
    const histogram = new Map<number, number>();
    for (const d of depthOf.values()) histogram.set(d, (histogram.get(d) ?? 0) + 1);
    expect(s.depth_distribution).toEqual(
      [...histogram.entries()].sort(([a], [b]) => a - b).map(([depth, count]) => ({ depth, count })),
    );
    expect(s.blocks_until_retarget).toBe(2);
  });

  it('is fixed when the challenge is issued: blocks added next to the cell later are not parents', async () => {
    const v = await testValidator();
    await register(v, alice);
    const issued: HexChallenge[] = [];
    const cells = new Set<string>();
    while (cells.size < 6) {
      const c = await issue(v);
      if (!cells.has(coordKey(c.coord))) issued.push(c);
      cells.add(coordKey(c.coord));
    }
    // All six ring-1 challenges were issued with genesis as the only parent; once some of them
    // are mined, the others have occupied neighbours, but keep depth 1.
    for (const c of issued) {
      const res = await submit(v, mine(c, alice));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().depth).toBe(1);
    }
    const next = await issue(v);
    expect(next.depth).toBe(2);
    const s = await status(v);
    expect(s.depth_distribution).toEqual([
      { depth: 0, count: 1 },
      { depth: 1, count: 6 },
    ]);
    expect(s.frontier_size).toBe(12);
  });
});

describe('GET /api/hexchain/lattice/:q/:r/:s', () => {
  it('answers invalid coordinates with 400 and free cells and the origin with 404', async () => {
    const v = await testValidator();
    expectError(
      await v.inject('/api/hexchain/lattice/1/1/1'),
      400,
      'invalid_coordinate',
      'coordinate: expected q + r + s = 0, got q=1 r=1 s=1',
    );
    // Out of bounds or not a number at all: refused by the path schema.
    for (const path of ['9999999999/0/-9999999999', '1048577/-1048577/0', '1e400/0/0', 'a/b/c', '-/-/-']) {
      expectError(await v.inject(`/api/hexchain/lattice/${path}`), 400, 'validation_failed');
    }
    // Path numbers are converted strictly: "1.5" and "0x1" are refused, never rounded.
    expectError(await v.inject('/api/hexchain/lattice/1.5/-1.5/0'), 400, 'validation_failed');
    expectError(await v.inject('/api/hexchain/lattice/1/0x1/-2'), 400, 'validation_failed');
    expectError(
      await v.inject('/api/hexchain/lattice/1048576/-1048576/1'),
      400,
      'invalid_coordinate',
      'coordinate: expected q + r + s = 0, got q=1048576 r=-1048576 s=1',
    );
    expectError(await v.inject('/api/hexchain/lattice/-0/1/-1'), 404, 'block_not_found');
    expectError(
      await v.inject('/api/hexchain/lattice/0/0/0'),
      404,
      'block_not_found',
      'coordinate q=0 r=0 s=0 holds the genesis block, which has no header (no pow_hash, nonce or miner); its hash is genesis_hash in GET /api/hexchain/status',
    );
    expectError(
      await v.inject('/api/hexchain/lattice/1/-1/0'),
      404,
      'block_not_found',
      'coordinate q=1 r=-1 s=0: no block occupies it (it is on the frontier: a challenge may target it)',
    );
    expectError(
      await v.inject('/api/hexchain/lattice/5/-5/0'),
      404,
      'block_not_found',
      'coordinate q=5 r=-5 s=0: no block occupies it',
    );
  });
});

describe('GET /api/hexchain/lattice', () => {
  it('pages by height and follows next_cursor to the end', async () => {
    const v = await testValidator();
    await register(v, alice);
    const hashes: string[] = [];
    for (let i = 0; i < 5; i++) hashes.push((await mineBlock(v, alice)).result.block_hash);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/api/hexchain/lattice?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await v.inject(url);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as LatticePage;
      expect(page.total).toBe(5);
      expect(page.blocks.length).toBeLessThanOrEqual(2);
      seen.push(...page.blocks.map((b) => b.block_hash));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(hashes);
    const all = (await v.inject('/api/hexchain/lattice')).json() as LatticePage;
    expect(all.blocks.map((b) => b.block_hash)).toEqual(hashes);
    expect(all.next_cursor).toBeNull();
    const exact = (await v.inject('/api/hexchain/lattice?limit=5')).json() as LatticePage;
    expect(exact.blocks).toHaveLength(5);
    expect(exact.next_cursor).toBeNull();
  });

  it('answers an empty lattice and refuses a malformed cursor or limit', async () => {
    const v = await testValidator();
    expect((await v.inject('/api/hexchain/lattice')).json()).toEqual({
      blocks: [],
      next_cursor: null,
      total: 0,
    });
    expectError(
      await v.inject('/api/hexchain/lattice?cursor=garbage'),
      400,
      'validation_failed',
      'cursor: expected the next_cursor of a previous page of GET /api/hexchain/lattice, got "garbage"',
    );
    for (const query of [
      'cursor=lattice:-1',
      'cursor=lattice:1.5',
      'cursor=lattice:99999999999999999',
      'limit=0',
      'limit=501',
      'limit=x',
    ]) {
      const res = await v.inject(`/api/hexchain/lattice?${query}`);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
  });
});

describe('hexchain disabled', () => {
  it('serves no /api/hexchain/ routes but still reports in GET /status', async () => {
    const v = await testValidator({ hexchain: false });
    expect((await v.inject('/api/hexchain/status')).statusCode).toBe(404);
    const node = (await v.inject('/status')).json() as { hexchain: unknown };
    expect(node.hexchain).toEqual({ enabled: false, difficulty: 0, occupied: 1 });
  });
});

describe('in-memory lattice state', () => {
  it('serves status and lattice reads that match the storage, and counts open challenges', async () => {
    let now = Date.now();
    const v = await testValidator({ now: () => now });
    const key = testKey('state');
    await register(v, key);
    for (let i = 0; i < 5; i++) await mineBlock(v, key);
    await issue(v);
    await issue(v);
    const s = await status(v);
    expect(s.open_challenges).toBe(
      await v.context.storage.read((tx) => tx.hexChallenges.countOpen(Math.floor(now / 1000))),
    );
    expect(s.occupied).toBe(6);
    const stored = await v.context.storage.read((tx) => tx.blocks.all());
    const page = (await v.inject('/api/hexchain/lattice?limit=3')).json() as LatticePage;
    expect(page.blocks.map((b) => b.block_hash)).toEqual(stored.slice(0, 3).map((b) => b.blockHash));
    const rest = (await v.inject(`/api/hexchain/lattice?cursor=${page.next_cursor}`)).json() as LatticePage;
    expect(rest).toMatchObject({ next_cursor: null, total: 5 });
    expect(rest.blocks.map((b) => b.block_hash)).toEqual(stored.slice(3).map((b) => b.blockHash));
    now += 10 * 60_000; // every challenge expired
    expect((await status(v)).open_challenges).toBe(0);
    // The kept bytes are the status as the schema has it, answered as JSON.
    const res = await v.inject('/api/hexchain/status');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Object.keys(res.json() as object).sort()).toEqual(Object.keys(HexStatusSchema.properties).sort());
    await mineBlock(v, key);
    expect((await status(v)).occupied).toBe(7);
  });
});
