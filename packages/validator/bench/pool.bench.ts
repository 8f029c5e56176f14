/**
 * Verified pool shares per second against verified blocks per second, in one run, in process
 * (`validator.inject`, no sockets: the cost of the validator itself, one core).
 *
 * Blocks: a solo validator at hexchain difficulty 16 (a fake clock moves 10 s per block, so the
 * retarget keeps it there); each block's challenge is issued, mined and signed untimed, then
 * POST /api/hexchain/submit is timed alone.
 * Shares: a pplns validator at block difficulty 4096, one member whose share difficulty is 16;
 * shares (hashes at or below the share target but not blocks) are mined and signed beforehand,
 * then each POST /api/hexchain/pool/share is timed alone.
 * Each round submits its blocks and shares alternately (block, share, block, share...) so that
 * both see the same load; the cost of each is the CPU time of this process (the validator runs
 * in it) around each inject, so the rates are per core. Medians over the rounds.
 *
 * Command: npm run bench:pool -w @tensormine/validator (writes its section of docs/benchmarks.md)
 */

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSubmission,
  encodeHeader,
  formatPublicKey,
  fromHex,
  type HexChallenge,
  type HexSubmissionInput,
  hashMeetsTarget,
  hexPowHash,
  keyPairFromSecret,
  signRequest,
  solveBlock,
  taggedHash,
  targetFromHex,
  utf8,
} from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { createValidator, type Validator } from '../src/app.js';
import { fmt, median, table } from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');

const ROUNDS = 5;
const PER_ROUND = 300;
const key = keyPairFromSecret(taggedHash('bench/pool', utf8('member')));
const PUBKEY = formatPublicKey(key.publicKey);
/** The validators' clocks (Unix ms): each moves 10 s per block or per share. */
const soloClock = { now: Date.now() };
const clock = { now: Date.now() };

async function validator(options: Record<string, unknown>, clock: { now: number }): Promise<Validator> {
  const v = await createValidator({
    dataDir: ':memory:',
    logger: false,
    rateLimitPerSecond: 1_000_000,
    rateLimitBurst: 1_000_000,
    keyRateLimitPerSecond: 1_000_000,
    keyRateLimitBurst: 1_000_000,
    challengeTtlS: 3600,
    now: () => clock.now,
    ...options,
  });
  const body = JSON.stringify({ pubkey: PUBKEY, device_type: 'native' });
  const headers = signRequest({
    method: 'POST',
    path: '/devices/register',
    body,
    secretKey: key.secretKey,
    timestamp: clock.now,
  });
  await v.inject({
    method: 'POST',
    url: '/devices/register',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: body,
  });
  return v;
}

async function challenge(v: Validator, slot: number): Promise<HexChallenge> {
  const res = await v.inject({
    method: 'POST',
    url: '/api/hexchain/challenge',
    payload: { slot, slot_hash: 'bench-pool', miner_pubkey: PUBKEY },
  });
  if (res.statusCode !== 200) throw new Error(res.body);
  return res.json() as HexChallenge;
}

interface Cost {
  wallS: number;
  cpuUs: number;
}

async function timedPost(v: Validator, url: string, body: HexSubmissionInput, cost: Cost): Promise<void> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const res = await v.inject({ method: 'POST', url, payload: body as never });
  cost.wallS += Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  cost.cpuUs += cpu.user + cpu.system;
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.body}`);
}

/** A block for a fresh challenge of the solo validator, mined and signed (untimed). */
async function nextBlock(v: Validator, slot: number): Promise<HexSubmissionInput> {
  soloClock.now += 10_000; // one block per 10 s interval: the retarget keeps difficulty 16
  const c = await challenge(v, slot);
  const solved = solveBlock({
    challengeHash: fromHex(c.challenge_hash),
    coord: c.coord,
    minerPublicKey: key.publicKey,
    target: targetFromHex(c.target),
  });
  if (solved === undefined) throw new Error('unsolved');
  return buildSubmission({
    challengeId: c.id,
    challengeHash: fromHex(c.challenge_hash),
    coord: c.coord,
    nonce: solved.nonce,
    keyPair: key,
  });
}

/** PER_ROUND shares of one challenge of the pooled validator (not blocks), mined and signed. */
async function nextShares(v: Validator, slot: number): Promise<HexSubmissionInput[]> {
  const c = await challenge(v, slot);
  if (c.share_target === undefined || c.share_difficulty !== 16) {
    throw new Error(`expected share difficulty 16, got ${c.share_difficulty}`);
  }
  const challengeHash = fromHex(c.challenge_hash);
  const shareTarget = targetFromHex(c.share_target);
  const blockTarget = targetFromHex(c.target);
  const bodies: HexSubmissionInput[] = [];
  for (let nonce = 0; bodies.length < PER_ROUND; nonce++) {
    const pow = hexPowHash(
      encodeHeader({ coord: c.coord, challengeHash, minerPublicKey: key.publicKey, nonce }),
    );
    if (hashMeetsTarget(pow, shareTarget) && !hashMeetsTarget(pow, blockTarget)) {
      bodies.push(buildSubmission({ challengeId: c.id, challengeHash, coord: c.coord, nonce, keyPair: key }));
    }
  }
  return bodies;
}

/**
 * One round: PER_ROUND blocks and PER_ROUND shares, submitted alternately (block, share,
 * block, share...) so that both see the same machine load.
 */
async function round(solo: Validator, pooled: Validator, n: number): Promise<{ block: Cost; share: Cost }> {
  const shares = await nextShares(pooled, 1_000_000 + n);
  const block: Cost = { wallS: 0, cpuUs: 0 };
  const share: Cost = { wallS: 0, cpuUs: 0 };
  for (let i = 0; i < PER_ROUND; i++) {
    await timedPost(solo, '/api/hexchain/submit', await nextBlock(solo, n * PER_ROUND + i), block);
    clock.now += 10_000; // one share per vardiff interval: the share difficulty stays at 16
    await timedPost(pooled, '/api/hexchain/pool/share', shares[i]!, share);
  }
  return { block, share };
}

async function main(): Promise<void> {
  const started = Date.now();
  const solo = await validator({ hexDifficulty: 16n }, soloClock);
  // Block difficulty 4096; the member declares 1 H/s, so its first share difficulty is the
  // smallest, 16 (one share per 10 s interval at 1 H/s, clamped up to 16).
  const pooled = await validator({ hexDifficulty: 4096n, poolStrategy: 'pplns' }, clock);
  const join = JSON.stringify({ pubkey: PUBKEY, stake_amount: '0', hashrate: 1 });
  const headers = signRequest({
    method: 'POST',
    path: '/pool/join',
    body: join,
    secretKey: key.secretKey,
    timestamp: clock.now,
  });
  const joined = await pooled.inject({
    method: 'POST',
    url: '/pool/join',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: join,
  });
  if (joined.statusCode !== 200) throw new Error(joined.body);
  await round(solo, pooled, 100); // warm-up
  const rows: { block: Cost; share: Cost }[] = [];
  for (let n = 0; n < ROUNDS; n++) rows.push(await round(solo, pooled, n));
  const perCore = (c: Cost) => (PER_ROUND * 1e6) / c.cpuUs;
  const perWall = (c: Cost) => PER_ROUND / c.wallS;
  const b = median(rows.map((r) => perCore(r.block)));
  const s = median(rows.map((r) => perCore(r.share)));
  const ratios = rows.map((r) => perCore(r.share) / perCore(r.block));
  const seconds = (Date.now() - started) / 1000;
  const rates = (pick: (r: { block: Cost; share: Cost }) => number) =>
    rows.map((r) => fmt(pick(r))).join(', ');
  const result = table(
    [
      'what',
      'per round',
      'per core-second, by round',
      'median per core-second',
      'CPU per item',
      'wall rate, by round',
      'share/block ratio, by round',
      'median ratio',
    ],
    [
      [
        'verified blocks (POST /api/hexchain/submit)',
        String(PER_ROUND),
        rates((r) => perCore(r.block)),
        fmt(b),
        `${fmt(1e6 / b)} us`,
        rates((r) => perWall(r.block)),
        '',
        '1.00x',
      ],
      [
        'verified shares (POST /api/hexchain/pool/share)',
        String(PER_ROUND),
        rates((r) => perCore(r.share)),
        fmt(s),
        `${fmt(1e6 / s)} us`,
        rates((r) => perWall(r.share)),
        ratios.map((x) => x.toFixed(2)).join(', '),
        `**${median(ratios).toFixed(2)}x**`,
      ],
    ],
  );
  const body = `## Pool shares

Command: \`npm run bench:pool -w @tensormine/validator\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; the whole bench took ${fmt(seconds)} s). In process
(\`validator.inject\`, no sockets), so it measures the validator itself. Blocks: a solo validator
at hexchain difficulty 16, each block's challenge issued, mined and signed untimed, then
\`POST /api/hexchain/submit\` timed alone (verification, the block transaction with its ledger
entry and retarget). Shares: a \`pplns\` validator at block difficulty 4096 with one member at
share difficulty 16, shares (not blocks) mined and signed beforehand, each
\`POST /api/hexchain/pool/share\` timed alone (verification against the share target, the share
transaction: duplicate check, member counters, vardiff). Each round of ${PER_ROUND} of each alternates
block, share, block, share so both see the same load; the cost is the CPU time of the process
around each request, so the rates are per core. ${ROUNDS} rounds after a warm-up, medians.

${result}

A verified share costs the validator ${(b / s).toFixed(2)} of a verified block: both pay for the header
hash and the ed25519 check; a share skips the lattice, the ledger and the retarget but writes
its share row and the member's counters. A pool's load is therefore set by its share rate,
which vardiff holds near one share per member per \`share_interval_ms\`.`;
  writeSection(DOC_PATH, 'pool', body);
  console.log(result);
  console.log(`wrote the pool section of ${DOC_PATH} (${fmt(seconds)} s)`);
  await solo.close();
  await pooled.close();
}

await main();
