/**
 * The replug soak: a simulated board unplugged and plugged in again CYCLES times (default 100)
 * while it mines, alternating between two ports, and what the host makes of it. Written to the
 * `serial-replug` section of docs/benchmarks.md.
 *
 *   npm run bench:replug -w @tensormine/serial            (CYCLES=20 for a short run)
 *
 * One cycle: the board (firmware-sim's tm-sim on one end of a socat pseudo-terminal pair) mines
 * until the host has a new result from it on this plug, then its process is killed (the unplug:
 * its port goes silent, its RAM is gone) and a new tm-sim with the same chip id starts on the
 * other pair (the replug on another USB socket). The host must say `lost`, then `back` on the
 * new port with the same board id, and mine on. Checked at the end, over every cycle:
 *   - lost results: RESULT frames the boards sent (tm-sim logs each one, retransmissions
 *     included) whose nonce the host never emitted as `found`: must be 0;
 *   - duplicated results: `found` events with an id already emitted: must be 0 (a board that
 *     mines a range again after a replug finds the same nonce; the host drops it, counted);
 *   - identity: one board, the same id after every cycle, its `back` notice on the new port.
 * The link timings are shortened (heartbeat 800 ms instead of 3 s) so that 100 cycles take a
 * few minutes; the logic under test is the same.
 */
import { fileURLToPath } from 'node:url';
import type { DeviceNotice, FoundResult } from '@tensormine/miner';
import { machineLine, writeSection } from '../../protocol/bench/harness.js';
import { SerialFleet } from '../src/fleet.js';
import { hexJob, until } from '../test/fake-board.js';
import { e2eUnavailable, ptyPair, type Sim, startSim, stopAll } from '../test/pty.js';

const DOC = fileURLToPath(new URL('../../../docs/benchmarks.md', import.meta.url));
const CYCLES = Number(process.env.CYCLES ?? 100);
const CHIP = '02a1b2c3d4e5f00d';
const SIM_ARGS = ['--chip-id', CHIP, '--rate-cap', '50000,2000', '--calibrate-ms', '20'];
const TIMING = {
  heartbeatTimeoutMs: 800,
  probeAfterMs: 300,
  probeIntervalMs: 100,
  reconnectMinMs: 100,
  reconnectMaxMs: 400,
  helloWaitMs: 1000,
  selfTestMinMs: 1000,
};

/** Results of the soak's job a board sent (the self-tests' nonces lie above 2^40). */
const mined = (s: Sim) => s.resultNonces().filter((n) => n < 1e8).length;

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function main(): Promise<void> {
  const unavailable = e2eUnavailable();
  if (unavailable) throw new Error(unavailable);
  const started = Date.now();
  const pairs = [await ptyPair(), await ptyPair()];
  const fleet = new SerialFleet({
    ports: pairs.map((p) => p.host),
    jobMs: 500,
    pollIntervalMs: 200,
    timing: TIMING,
  });
  const found: FoundResult[] = [];
  const notices: DeviceNotice[] = [];
  fleet.on('found', (f) => found.push(f));
  fleet.on('error', () => {});
  fleet.on('notice', (n) => notices.push(n));
  await fleet.start();
  fleet.setJob({ ...hexJob('soak', 2000), stopOnFound: false });

  const sims: Sim[] = [];
  const lostMs: number[] = [];
  const backMs: number[] = [];
  let identityKept = 0;
  let foundAtPlug = 0;
  let sim = startSim(pairs[0]!.device, SIM_ARGS);
  sims.push(sim);
  await until(() => notices.some((n) => n.kind === 'attached'), 15_000, 'attached');
  const id = fleet.backends()[0]!.id;
  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const plug = pairs[cycle % 2]!;
    // Mine on this plug until the host has a new result from it.
    await until(() => found.length > foundAtPlug, 20_000, `a result in cycle ${cycle}`);
    const before = notices.length;
    const unplugAt = Date.now();
    await sim.stop();
    await until(() => notices.slice(before).some((n) => n.kind === 'lost'), 10_000, `lost in cycle ${cycle}`);
    lostMs.push(Date.now() - unplugAt);
    const plugAt = Date.now();
    foundAtPlug = found.length;
    sim = startSim(plug.device, SIM_ARGS);
    sims.push(sim);
    await until(() => notices.slice(before).some((n) => n.kind === 'back'), 20_000, `back in cycle ${cycle}`);
    backMs.push(Date.now() - plugAt);
    const back = notices.slice(before).find((n) => n.kind === 'back')!;
    if (back.unit === id && back.port === plug.host && fleet.backends().length === 1) identityKept++;
    if (cycle % 10 === 0) console.log(`cycle ${cycle}: ${found.length} results so far`);
  }
  await until(() => mined(sim) > 0, 20_000, 'a result after the last cycle');
  // Let the last results and their retransmissions arrive.
  await new Promise((r) => setTimeout(r, 1500));
  const sent = new Set(sims.flatMap((s) => s.resultNonces()).filter((n) => n < 1e8)); // not the self-tests'
  const emitted = new Set(found.map((f) => f.nonce));
  const lost = [...sent].filter((n) => !emitted.has(n));
  const duplicated = found.length - new Set(found.map((f) => f.id)).size;
  const board = fleet.boards()[0]!;
  await fleet.stop();
  await stopAll();
  const seconds = Math.round((Date.now() - started) / 1000);

  const body = [
    '## Serial bridge: replug soak',
    '',
    `Command: \`npm run bench:replug -w @tensormine/serial\` (measured ${new Date().toISOString().slice(0, 10)} on ${machineLine()}; ${CYCLES} cycles took ${seconds} s).`,
    '',
    'A simulated board (`firmware-sim/build/tm-sim --rate-cap 50000,2000`) mining a hexchain job is unplugged',
    '(its process killed: the port goes silent and the board forgets everything) and plugged in again on the',
    'other of two socat pseudo-terminal pairs, once per cycle, as soon as the host has a new result from that plug. Link',
    'timings shortened for the soak (heartbeat 800 ms, reconnect backoff 100-400 ms); the bridge logic is the default.',
    '',
    '| cycles | results sent by the boards | emitted as `found` | lost | duplicated | identity kept (same id, `back` on the new port) | results the host dropped as already found |',
    '|---|---|---|---|---|---|---|',
    `| ${CYCLES} | ${sent.size} | ${found.length} | **${lost.length}** | **${duplicated}** | **${identityKept} / ${CYCLES}** | ${board.stats.duplicates} |`,
    '',
    '| from | to | median | p95 | max | median as a share of the heartbeat timeout |',
    '|---|---|---|---|---|---|',
    `| unplug | \`lost\` notice | ${quantile(lostMs, 0.5)} ms | ${quantile(lostMs, 0.95)} ms | ${Math.max(...lostMs)} ms | ${(quantile(lostMs, 0.5) / TIMING.heartbeatTimeoutMs).toFixed(2)}x |`,
    `| replug | \`back\` notice (handshake and self-test done) | ${quantile(backMs, 0.5)} ms | ${quantile(backMs, 0.95)} ms | ${Math.max(...backMs)} ms | ${(quantile(backMs, 0.5) / TIMING.heartbeatTimeoutMs).toFixed(2)}x |`,
    '',
    `Board counters after the soak: link losses ${board.counters.linkLosses}, reboots ${board.counters.reboots}, CRC errors ${board.counters.crcErrors}, resyncs ${board.counters.resyncs}, retransmissions ${board.counters.retransmissions}.`,
  ].join('\n');
  writeSection(DOC, 'serial-replug', body);
  console.log(body);
  if (lost.length > 0 || duplicated > 0 || identityKept !== CYCLES) {
    console.error(
      `FAILED: lost ${lost.join(', ') || 0}, duplicated ${duplicated}, identity ${identityKept}/${CYCLES}`,
    );
    process.exitCode = 1;
  }
}

main().catch(async (error) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
