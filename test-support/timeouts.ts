/**
 * The one place where the test suite's time bounds live. Every project's vitest config takes
 * its test and hook timeouts from here (vitest.shared.ts), and every wait for a real process,
 * socket or page (test-support/wait.ts) takes its default bound from here: no test file sets
 * its own.
 *
 * The bounds are sized for a slow machine: a 2-core machine busy with other work (load 12-16,
 * which makes the suite about three times slower than on a quiet one) and `npm run test:stress`
 * (two CPU hogs per core beside the suite). They are bounds on a hang, not expectations: a
 * passing test never comes near them, and nothing a test asserts depends on how fast the
 * machine is (time-dependent behaviour runs on an injected clock, test-support/clock.ts).
 *
 * `TENSORMINE_TEST_TIMEOUT_SCALE` (a positive number, default 1) multiplies them all, for a
 * machine slower still (an emulator, a debugger attached).
 */
const scale = (() => {
  const raw = process.env.TENSORMINE_TEST_TIMEOUT_SCALE;
  if (raw === undefined || raw === '') return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`TENSORMINE_TEST_TIMEOUT_SCALE must be a positive number, not ${JSON.stringify(raw)}`);
  }
  return value;
})();

/** One test (vitest's `testTimeout` in every project). */
export const TEST_TIMEOUT_MS = 180_000 * scale;

/**
 * One hook (`hookTimeout`): starting servers, browsers, PostgreSQL databases, and stopping them;
 * also the global set-ups' teardown (`teardownTimeout`: stopping the run's PostgreSQL server).
 */
export const HOOK_TIMEOUT_MS = 180_000 * scale;

/**
 * A test that drives several real processes end to end (a validator killed and restarted, a
 * documentation walkthrough, a cluster under kill -9): given as the test's own timeout.
 */
export const SLOW_TEST_TIMEOUT_MS = 600_000 * scale;

/**
 * A long property run or simulation (hundreds of random operation sequences against a model,
 * hundreds of simulated pool blocks), or a long chain of programs run one after the other (a
 * documented command chain of about 20 `npx miner` commands): given as the test's own timeout.
 */
export const SOAK_TEST_TIMEOUT_MS = 900_000 * scale;

/**
 * How long a program the test starts (`npx miner`, npm start, a validator or a miner process:
 * npm, a shell, tsx compiling the sources) may take to be ready: the longest wait. Seen past
 * 90 s at a load of 40 on 2 cores.
 */
export const PROCESS_START_TIMEOUT_MS = 180_000 * scale;

/**
 * The high-availability topology of docs/cluster.md (scripts/ha-up.sh through
 * packages/validator/test/support/ha.ts: etcd, PostgreSQL under Patroni with its standby cloned,
 * HAProxy, the validator nodes, one after another) coming up, or going down, as a whole.
 */
export const HA_START_TIMEOUT_MS = 600_000 * scale;

/**
 * One step of that topology under test, waited for as a condition: a new primary after a kill,
 * writes going through again, the killed primary back as the synchronous standby (pg_rewind,
 * then a restart), the workload's first acknowledgements. Past WAIT_TIMEOUT_MS: Patroni, etcd,
 * PostgreSQL and the validators share the busy machine with the rest of the suite.
 */
export const HA_STEP_TIMEOUT_MS = 300_000 * scale;

/**
 * A test of that topology (given as its own timeout, and its file's set-up hook's): its steps
 * one after another, each bounded by HA_STEP_TIMEOUT_MS, so that a step that hangs fails with
 * its own name first.
 */
export const HA_TEST_TIMEOUT_MS = 1_200_000 * scale;

/** The default bound of a wait for a condition (test-support/wait.ts). */
export const WAIT_TIMEOUT_MS = 90_000 * scale;

/** How long a global set-up may take to bring up a shared service (a PostgreSQL server, a browser). */
export const SERVICE_START_TIMEOUT_MS = 120_000 * scale;
