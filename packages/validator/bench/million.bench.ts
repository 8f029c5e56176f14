/**
 * A node that holds a million blocks (issue 24): grows a lattice of valid blocks to 1,000,
 * 100,000 and 1,000,000 blocks directly through the storage interface (node:sqlite, batched),
 * and at each size starts the built validator (`dist/bin.js start`) on it and measures: the start
 * (spawn to the first GET /health answered 200), its resident memory, and the cost of issuing a
 * challenge and of accepting a block (sequential requests; wall time per request and the node's
 * CPU per request). Ends with a verdict line and one JSON line.
 *
 *   npm run bench:million -w @tensormine/validator    (builds, then writes its section of docs/benchmarks.md)
 *
 * The blocks are valid: each on the frontier at its time, with its parents and depth, a
 * challenge hash committing to them, a proof of work at the difficulty in force (16, the
 * minimum, held there by the retarget, which runs every 12 blocks and is recorded like the
 * node does), blocks 10 s apart; the grower keeps the node's own in-memory lattice state and
 * writes its snapshot every 10,000 blocks, as a running node does (not at the size measured, so
 * that the start replays the most a node ever replays). `--sizes 1000,20000` measures other
 * sizes (ascending); `--budget-min 40` stops growing after 40 minutes and measures the size reached;
 * `--keep` leaves the data directory in place (to start a node on it by hand).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildSubmission,
  cellSelector,
  chooseTargetCell,
  depthFromParents,
  difficultyAfterBlock,
  formatPublicKey,
  fromHex,
  type HexChallenge,
  hexBlockHash,
  hexChallengeHash,
  keyPairFromSecret,
  parentsRoot,
  RETARGET_WINDOW_BLOCKS,
  shouldRetarget,
  solveBlock,
  taggedHash,
  targetFromDifficulty,
  targetFromHex,
  targetToHex,
  toHex,
  u64le,
  utf8,
} from '@tensormine/protocol';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { LatticeState } from '../src/services/hexchain/lattice-state.js';
import { HEX_GENESIS_TIME_META_KEY, SNAPSHOT_EVERY, SNAPSHOTS_KEPT } from '../src/services/hexchain/load.js';
import { openSqliteStorage } from '../src/store/sqlite.js';
import type { HexChallengeRecord } from '../src/store/types.js';
import { NODE_ADMIN_TOKEN, type Node, startNode, stopNodes } from '../test/support/cluster-nodes.js';
import { fmt, median, processCpuMs, request, table } from './support.js';

const DOC_PATH = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/benchmarks.md');
const SIZES = (() => {
  const at = process.argv.indexOf('--sizes');
  const list = at < 0 ? '1000,100000,1000000' : String(process.argv[at + 1]);
  return list.split(',').map((s) => Number(s));
})();
/**
 * `--budget-min 40`: stop growing after this many minutes in all (on a loaded machine) and
 * measure at the size reached, said so in the table; every size's row is written as it is measured.
 */
const BUDGET_MS = (() => {
  const at = process.argv.indexOf('--budget-min');
  return at < 0 ? Number.POSITIVE_INFINITY : Number(process.argv[at + 1]) * 60_000;
})();
const BENCH_STARTED = performance.now();
/** `--keep`: leave the grown data directory in place (its path is printed), to start a node on it by hand. */
const KEEP = process.argv.includes('--keep');
/** Blocks written per transaction while growing. */
const GROW_BATCH = 5_000;
/** The grower's SQLite page cache: the indexes of a million blocks stay in it (see grow()). */
const GROW_CACHE_MIB = 1024;
/** A progress line every this many blocks grown. */
const PROGRESS_EVERY = 50_000;
/** Requests of each kind measured per size (after a warm-up of 20). */
const OPS = 200;
const INTERVAL_MS = 10_000;
const MINER = keyPairFromSecret(taggedHash('bench/million', utf8('miner')));
const MINER_KEY = formatPublicKey(MINER.publicKey);

interface Grower {
  state: LatticeState;
  difficulty: bigint;
  /** Acceptance time of the blocks by height (for the retarget's window start). */
  readonly times: number[];
  readonly genesisMs: number;
  /** The newest block's time: the next one comes INTERVAL_MS later. */
  lastMs: number;
}

/** Appends blocks up to `target` through the storage interface. */
async function grow(path: string, grower: Grower, target: number): Promise<number> {
  const storage = await openSqliteStorage({ path, cacheSizeMiB: GROW_CACHE_MIB });
  const started = performance.now();
  try {
    if (grower.state.appliedHeight === 0) {
      await storage.transaction(async (tx) => {
        await tx.meta.set(HEX_GENESIS_TIME_META_KEY, String(grower.genesisMs));
        await tx.devices.upsert({
          deviceId: 'dev-bench-million',
          pubkey: MINER_KEY,
          deviceType: 'native',
          port: null,
          registeredAt: Math.floor(grower.genesisMs / 1000),
          lastSeen: Math.floor(grower.genesisMs / 1000),
          callbackAddress: null,
          callbackMode: 'none',
          hashrate: null,
        });
      });
    }
    let lap = performance.now();
    let lapHeight = grower.state.appliedHeight;
    while (grower.state.appliedHeight < target && performance.now() - BENCH_STARTED < BUDGET_MS) {
      if (grower.state.appliedHeight % PROGRESS_EVERY === 0 && grower.state.appliedHeight > 0) {
        const now = performance.now();
        const perBlock = ((now - lap) * 1000) / PROGRESS_EVERY;
        console.log(
          `grown to ${fmt(grower.state.appliedHeight)} blocks (${perBlock.toFixed(0)} µs per block lately)`,
        );
        lap = now;
      }
      const end = Math.min(target, grower.state.appliedHeight + GROW_BATCH);
      await storage.transaction(async (tx) => {
        for (let height = grower.state.appliedHeight + 1; height <= end; height++) {
          const { state } = grower;
          const serial = await tx.hexChallenges.nextSerial();
          const entropy = taggedHash('bench/million/entropy', u64le(serial));
          const coord = chooseTargetCell(state.lattice.frontier(), cellSelector(serial, 'million', entropy));
          const parents = state.lattice.parentsOf(coord);
          const powTarget = targetFromDifficulty(grower.difficulty);
          const challengeHash = hexChallengeHash({
            coord,
            slot: serial,
            slotHash: 'million',
            target: powTarget,
            parentsRoot: parentsRoot(parents),
            entropy,
          });
          const atMs = grower.lastMs + INTERVAL_MS;
          grower.lastMs = atMs;
          const challenge: HexChallengeRecord = {
            id: `h-${toHex(challengeHash).slice(0, 24)}`,
            serial,
            coord,
            slot: serial,
            slotHash: 'million',
            challengeHash: toHex(challengeHash),
            target: targetToHex(powTarget),
            difficulty: grower.difficulty,
            entropy: toHex(entropy),
            parents: parents.map((p) => ({ coord: p.coord, blockHash: toHex(p.blockHash), depth: p.depth })),
            depth: depthFromParents(parents),
            minerPubkey: MINER_KEY,
            issuedAt: Math.floor(atMs / 1000) - 1,
            expiresAt: Math.floor(atMs / 1000) + 59,
          };
          const solved = solveBlock({
            challengeHash,
            coord,
            minerPublicKey: MINER.publicKey,
            target: powTarget,
          });
          if (solved === undefined) throw new Error('unsolved');
          await tx.hexChallenges.insert(challenge);
          const appended = await tx.blocks.append({
            coord,
            blockHash: toHex(hexBlockHash(solved.header)),
            powHash: toHex(solved.powHash),
            depth: challenge.depth,
            parents: parents.map((p) => p.coord),
            minerPubkey: MINER_KEY,
            nonce: solved.nonce,
            challengeId: challenge.id,
            slot: serial,
            difficulty: grower.difficulty,
            timestampMs: atMs,
          });
          if (appended === undefined || appended.block.height !== height)
            throw new Error(`height ${height} not appended`);
          state.add(appended.block);
          grower.times[height] = atMs;
          if (shouldRetarget(height, RETARGET_WINDOW_BLOCKS)) {
            const start = height - RETARGET_WINDOW_BLOCKS;
            grower.difficulty = difficultyAfterBlock({
              difficulty: grower.difficulty,
              height,
              blockTimeMs: BigInt(atMs),
              windowStartTimeMs: BigInt(start === 0 ? grower.genesisMs : (grower.times[start] as number)),
              windowBlocks: RETARGET_WINDOW_BLOCKS,
              intervalMs: BigInt(INTERVAL_MS),
            });
            await tx.blocks.setDifficulty(grower.difficulty, { kind: 'retarget', atMs });
          }
          // The snapshots a start can read (a node writes one every SNAPSHOT_EVERY blocks; the
          // grower skips those no start reads), never at the height measured next: its start
          // then replays the SNAPSHOT_EVERY blocks above the previous one, the most a node replays.
          const nearTarget = target - height < 10 * SNAPSHOT_EVERY;
          if (height % SNAPSHOT_EVERY === 0 && height !== target && (nearTarget || height % 10_000 === 0)) {
            await tx.blocks.putSnapshot(
              { height, state: JSON.stringify(state.snapshot()), createdAtMs: atMs },
              SNAPSHOTS_KEPT,
            );
          }
        }
      });
    }
  } finally {
    await storage.close();
  }
  return (performance.now() - started) / 1000;
}

function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

interface Measured {
  blocks: number;
  /** The size asked for (more than `blocks` when the time budget ran out). */
  planned: number;
  growS: number;
  dbMiB: number;
  /** Blocks above the newest snapshot: what the start replayed. */
  replayed: number;
  snapshotKiB: number;
  startS: number;
  /** The node's CPU time until then. */
  startCpuS: number;
  rssMiB: number;
  /** RSS after the measured requests. */
  rssAfterMiB: number;
  frontier: number;
  challengeMs: number;
  challengeCpuUs: number;
  submitMs: number;
  submitCpuUs: number;
}

/** The newest lattice snapshot the start will read (its height and size). */
async function snapshotOf(path: string, blocks: number): Promise<{ height: number; bytes: number }> {
  const storage = await openSqliteStorage({ path });
  try {
    const stored = await storage.read((tx) => tx.blocks.latestSnapshot(blocks));
    return { height: stored?.height ?? 0, bytes: stored === undefined ? 0 : Buffer.byteLength(stored.state) };
  } finally {
    await storage.close();
  }
}

/** Starts the bin on the grown data directory and measures it. */
async function measure(dataDir: string, blocks: number, growS: number, planned: number): Promise<Measured> {
  const snapshot = await snapshotOf(join(dataDir, 'validator.db'), blocks);
  const started = performance.now();
  const node: Node = await startNode({
    nodeId: `million-${blocks}`,
    env: { TENSORMINE_DATA_DIR: dataDir, TENSORMINE_LOG_LEVEL: 'error', TENSORMINE_HEX_DIFFICULTY: '16' },
    entry: 'built',
  });
  try {
    return {
      ...(await measureNode(node, dataDir, blocks, growS, started)),
      planned,
      replayed: blocks - snapshot.height,
      snapshotKiB: snapshot.bytes / 1024,
    };
  } catch (error) {
    await new Promise((r) => setTimeout(r, 500));
    console.error(`--- ${node.nodeId}:\n${node.output().slice(-3000)}`);
    throw error;
  }
}

async function measureNode(
  node: Node,
  dataDir: string,
  blocks: number,
  growS: number,
  started: number,
): Promise<Omit<Measured, 'planned' | 'replayed' | 'snapshotKiB'>> {
  await request(node.url, 'GET', '/health');
  const startS = (performance.now() - started) / 1000;
  const startCpuS = (processCpuMs(node.child.pid) ?? 0) / 1000;
  const rss = rssMiB(node.child.pid);
  const status = await request<{ occupied: number; frontier_size: number }>(
    node.url,
    'GET',
    '/api/hexchain/status',
  );
  if (status.occupied !== blocks + 1)
    throw new Error(`the node holds ${status.occupied - 1} blocks, not ${blocks}`);
  const challengeMs: number[] = [];
  const submitMs: number[] = [];
  let challengeCpu = 0;
  let submitCpu = 0;
  for (let i = 0; i < 20 + OPS; i++) {
    const pid = node.child.pid;
    // Blocks come much faster than the 10 s interval here and each retarget would raise the
    // difficulty: put it back to 16 (untimed) before each window.
    if (i % RETARGET_WINDOW_BLOCKS === 0) {
      await request(node.url, 'POST', '/admin/config', {
        body: JSON.stringify({ hexchain_difficulty: 16 }),
        headers: { authorization: `Bearer ${NODE_ADMIN_TOKEN}` },
      });
    }
    let cpu0 = processCpuMs(pid) ?? 0;
    let t0 = performance.now();
    const c = await request<HexChallenge>(node.url, 'POST', '/api/hexchain/challenge', {
      body: JSON.stringify({ slot: 5_000_000 + i, slot_hash: 'million', miner_pubkey: MINER_KEY }),
    });
    const issued = performance.now() - t0;
    const issuedCpu = (processCpuMs(pid) ?? 0) - cpu0;
    const challengeHash = fromHex(c.challenge_hash);
    const solved = solveBlock({
      challengeHash,
      coord: c.coord,
      minerPublicKey: MINER.publicKey,
      target: targetFromHex(c.target),
    });
    if (solved === undefined) throw new Error('unsolved');
    const body = JSON.stringify(
      buildSubmission({
        challengeId: c.id,
        challengeHash,
        coord: c.coord,
        nonce: solved.nonce,
        keyPair: MINER,
      }),
    );
    cpu0 = processCpuMs(pid) ?? 0;
    t0 = performance.now();
    await request(node.url, 'POST', '/api/hexchain/submit', { body });
    if (i >= 20) {
      challengeMs.push(issued);
      challengeCpu += issuedCpu;
      submitMs.push(performance.now() - t0);
      submitCpu += (processCpuMs(pid) ?? 0) - cpu0;
    }
  }
  const measured: Omit<Measured, 'planned' | 'replayed' | 'snapshotKiB'> = {
    blocks,
    growS,
    dbMiB: statSync(join(dataDir, 'validator.db')).size / 1024 / 1024,
    startS,
    startCpuS,
    rssMiB: rss,
    rssAfterMiB: rssMiB(node.child.pid),
    frontier: status.frontier_size,
    challengeMs: median(challengeMs),
    challengeCpuUs: (challengeCpu * 1000) / OPS,
    submitMs: median(submitMs),
    submitCpuUs: (submitCpu * 1000) / OPS,
  };
  await node.stop();
  return measured;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tm-million-'));
  const path = join(dataDir, 'validator.db');
  const genesisMs = Date.now() - (Math.max(...SIZES) + 10 * OPS) * INTERVAL_MS;
  const grower: Grower = {
    state: new LatticeState(),
    difficulty: 16n,
    times: [],
    genesisMs,
    lastMs: genesisMs,
  };
  const results: Measured[] = [];
  try {
    for (const size of SIZES) {
      // The measured blocks (OPS + warm-up per size) count: grow to the size from where they left it.
      const have = grower.state.appliedHeight;
      const growS = await grow(path, grower, Math.max(size, have));
      const reached = grower.state.appliedHeight;
      // The node's blocks were appended after the grower's: the grower continues after them.
      const m = await measure(dataDir, reached, growS, size);
      results.push(m);
      await resync(path, grower);
      console.log(
        `${fmt(m.blocks)} blocks: grown in ${m.growS.toFixed(1)} s, start ${m.startS.toFixed(2)} s, RSS ${m.rssMiB.toFixed(0)} MiB, challenge ${m.challengeMs.toFixed(2)} ms, submit ${m.submitMs.toFixed(2)} ms`,
      );
      const last = reached < size || size === SIZES.at(-1);
      report(results, last);
      if (reached < size) break;
    }
  } finally {
    await stopNodes();
    if (KEEP) console.log(`kept the data directory ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The targets of issue 24 (docs/benchmarks.md says them). */
const TARGET_BYTES_PER_BLOCK = 1024;
const TARGET_START_S = 5;
/** Flat: the cost at the largest size at most this many times the cost at the smallest. */
const FLAT_RATIO = 1.5;

/** Writes the section of docs/benchmarks.md for the sizes measured so far. */
function report(results: readonly Measured[], final: boolean): void {
  const first = results[0]!;
  const last = results.at(-1)!;
  const perBlock = ((last.rssMiB - first.rssMiB) * 1024 * 1024) / Math.max(1, last.blocks - first.blocks);
  const challengeRatio = last.challengeCpuUs / first.challengeCpuUs;
  const submitRatio = last.submitCpuUs / first.submitCpuUs;
  const rows = results.map((r) => [
    r.blocks < r.planned ? `${fmt(r.blocks)} (of ${fmt(r.planned)}: time budget)` : fmt(r.blocks),
    `${r.growS.toFixed(0)} s`,
    `${fmt(r.dbMiB)} MiB`,
    `${fmt(r.replayed)} (${fmt(r.snapshotKiB)} KiB)`,
    `${r.startS.toFixed(2)} s (${r.startCpuS.toFixed(2)} s)`,
    `${fmt(r.rssMiB)} / ${fmt(r.rssAfterMiB)} MiB`,
    fmt(r.frontier),
    `${r.challengeMs.toFixed(2)} ms, ${fmt(r.challengeCpuUs)} µs`,
    `${r.submitMs.toFixed(2)} ms, ${fmt(r.submitCpuUs)} µs`,
  ]);
  const ok = (pass: boolean) => (pass ? 'met' : 'NOT met');
  const verdict =
    `verdict: ${fmt(last.blocks)} blocks; memory per block ${perBlock.toFixed(0)} bytes (target <= ${TARGET_BYTES_PER_BLOCK}: ${ok(perBlock <= TARGET_BYTES_PER_BLOCK)}); ` +
    `start ${last.startS.toFixed(2)} s (target <= ${TARGET_START_S} s: ${ok(last.startS <= TARGET_START_S)}); ` +
    `challenge CPU ${challengeRatio.toFixed(2)}x and submit CPU ${submitRatio.toFixed(2)}x of ${fmt(first.blocks)} blocks' (flat, target <= ${FLAT_RATIO}x: ${ok(challengeRatio <= FLAT_RATIO && submitRatio <= FLAT_RATIO)})`;
  const totalMin = (performance.now() - BENCH_STARTED) / 60_000;
  const body = `## A node holding a million blocks

Command: \`npm run bench:million -w @tensormine/validator${Number.isFinite(BUDGET_MS) ? ` -- --budget-min ${BUDGET_MS / 60_000}` : ''}\` (packages/validator/bench/million.bench.ts; it builds the validator first${final ? `; ran ${totalMin.toFixed(0)} min in all` : ''}).
${machineLine()}. A lattice of valid blocks (each on the frontier at its time, with its parents,
depth, challenge and proof of work at difficulty 16, retargeted every 12 blocks, 10 s apart) is
grown through the storage interface on node:sqlite (${fmt(GROW_BATCH)} blocks per transaction). A node writes a
lattice snapshot every ${fmt(SNAPSHOT_EVERY)} blocks; the grower writes those a start can read, but not at the
size measured: the start then replays the ${fmt(SNAPSHOT_EVERY)} blocks above the previous one, the most a node
ever replays. At each size the
built validator (\`dist/bin.js start\`, plain Node, as an operator runs it) starts on the database.
Start: from spawn to the first \`GET /health\` answered 200, and the node's CPU time until then. RSS: the node's after start / after
the requests. Challenge and submit: ${OPS} of each, one at a time after 20 of warm-up, median wall
time per request and the node's CPU per request.

${table(['blocks', 'grown in', 'database', 'replayed at start (snapshot)', 'start (its CPU)', 'RSS after start / after requests', 'frontier cells', 'challenge (median, CPU)', 'submit (median, CPU)'], rows)}

Memory per block between ${fmt(first.blocks)} and ${fmt(last.blocks)} blocks: ${perBlock.toFixed(1)} bytes of RSS (the in-memory
lattice state keeps the frontier and the boundary blocks, which grow with the perimeter, about
the square root of the blocks; the blocks are read from the storage).

\`${verdict}\``;
  writeSection(DOC_PATH, 'million', body);
  console.log(body);
  if (final) {
    console.log(verdict);
    console.log(
      JSON.stringify({
        million: results.map((r) => ({
          blocks: r.blocks,
          grow_s: Math.round(r.growS),
          start_s: Number(r.startS.toFixed(2)),
          start_cpu_s: Number(r.startCpuS.toFixed(2)),
          rss_mib: Math.round(r.rssMiB),
          replayed: r.replayed,
          challenge_cpu_us: Math.round(r.challengeCpuUs),
          submit_cpu_us: Math.round(r.submitCpuUs),
        })),
        bytes_per_block: Math.round(perBlock),
      }),
    );
  }
}

/** Reloads the grower's state from the storage after the node appended blocks of its own. */
async function resync(path: string, grower: Grower): Promise<void> {
  const storage = await openSqliteStorage({ path });
  try {
    await storage.read(async (tx) => {
      const head = await tx.blocks.head();
      for (;;) {
        const blocks = await tx.blocks.list(grower.state.appliedHeight, 10_000);
        for (const b of blocks) {
          grower.state.add(b);
          grower.times[b.height] = b.timestampMs;
        }
        if (blocks.length < 10_000) break;
      }
      grower.lastMs = grower.times[head.height] ?? grower.lastMs;
    });
    // The node's own blocks came fast and raised the difficulty: an operator puts it back to
    // 16 (a recorded admin write, as POST /admin/config does).
    await storage.transaction((tx) => tx.blocks.setDifficulty(16n, { kind: 'admin', atMs: grower.lastMs }));
    grower.difficulty = 16n;
  } finally {
    await storage.close();
  }
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopNodes();
  process.exit(1);
});
