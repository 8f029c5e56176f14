#!/usr/bin/env node
// npm run test:stress [-- --runs N] [-- --hogs-per-core N] [-- <vitest arguments>]
//
// Runs the test suite (vitest run, the same config as `npm test`) while CPU hogs keep every core
// busy: two busy-looping processes per core by default, started before the run and stopped
// after it (also when the run is interrupted). A test that passes on a quiet machine but fails
// here depends on how fast the machine is: that is the bug to fix (docs/testing.md, "How to
// write a test here"). Reports each run's failures (file, test, first line of the error) and the
// load, and exits non-zero when any run failed.
//
//   --runs N             run the suite N times in a row (default 1); every run is reported
//   --hogs-per-core N    CPU hogs per core (default 2; 0 runs without load, for a comparison)
//   anything else        passed to vitest (e.g. --project validator, a file filter)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const { runs, hogsPerCore, vitestArgs } = parseArgs(process.argv.slice(2));
const cores = availableParallelism();
const hogCount = hogsPerCore * cores;

/** @type {import('node:child_process').ChildProcess[]} */
const hogs = [];
let stopping = false;

function startHogs() {
  for (let i = 0; i < hogCount; i++) {
    // A busy loop on the same Node as the suite; it exits when this script's pipe closes.
    const hog = spawn(
      process.execPath,
      [
        '-e',
        'process.stdin.on("close", () => process.exit(0)); process.stdin.resume(); setImmediate(function spin() { const end = Date.now() + 50; while (Date.now() < end); setImmediate(spin); });',
      ],
      { stdio: ['pipe', 'ignore', 'ignore'] },
    );
    hogs.push(hog);
  }
}

async function stopHogs() {
  await Promise.all(
    hogs.splice(0).map(
      (hog) =>
        new Promise((resolve) => {
          if (hog.exitCode !== null || hog.signalCode !== null) return resolve(undefined);
          hog.once('exit', () => resolve(undefined));
          hog.kill('SIGKILL');
        }),
    ),
  );
}

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\ntest:stress: ${signal}: stopping the CPU hogs and the run`);
    if (current) current.kill(signal);
    void stopHogs().then(() => process.exit(130));
  });
}

/** @type {import('node:child_process').ChildProcess | undefined} */
let current;

function runSuite(outputFile) {
  return new Promise((resolve) => {
    const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
    current = spawn(
      process.execPath,
      [
        vitest,
        'run',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${outputFile}`,
        ...vitestArgs,
      ],
      { cwd: root, stdio: 'inherit' },
    );
    current.once('exit', (code, signal) => {
      current = undefined;
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

/** The failed tests of a vitest JSON report: file, full name, first line of the first message. */
function failures(outputFile) {
  let report;
  try {
    report = JSON.parse(readFileSync(outputFile, 'utf8'));
  } catch {
    return { summary: undefined, failed: [] };
  }
  const failed = [];
  for (const file of report.testResults ?? []) {
    const name = relative(root, file.name);
    const failedTests = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failedTests) {
      failed.push({ file: name, test: t.fullName, error: firstLine(t.failureMessages?.[0]) });
    }
    // A file that failed outside its tests (a hook, an import, an unhandled error).
    if (file.status === 'failed' && failedTests.length === 0) {
      failed.push({ file: name, test: '(the file itself)', error: firstLine(file.message) });
    }
  }
  return {
    summary: {
      // numTotalTestSuites also counts every describe block: the files are the test results
      files: (report.testResults ?? []).length,
      tests: report.numTotalTests,
      passed: report.numPassedTests,
      failed: report.numFailedTests,
    },
    failed,
  };
}

function firstLine(text) {
  return String(text ?? '')
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim()
    .slice(0, 300);
}

function parseArgs(args) {
  let runs = 1;
  let hogsPerCore = 2;
  const vitestArgs = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] = arg.split('=', 2);
    const value = () => {
      const raw = inline ?? args[++i];
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 0) {
        console.error(`test:stress: ${flag} needs a whole number, not ${raw}`);
        process.exit(2);
      }
      return n;
    };
    if (flag === '--runs') runs = Math.max(1, value());
    else if (flag === '--hogs-per-core') hogsPerCore = value();
    else vitestArgs.push(arg);
  }
  return { runs, hogsPerCore, vitestArgs };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const dir = mkdtempSync(join(tmpdir(), 'tensormine-stress-'));
const results = [];
try {
  for (let run = 1; run <= runs && !stopping; run++) {
    console.log(
      `test:stress: run ${run} of ${runs}: ${hogCount} CPU hogs (${hogsPerCore} per core, ${cores} cores); load before: ${load()}`,
    );
    startHogs();
    const started = performance.now();
    const outputFile = join(dir, `run-${run}.json`);
    let code;
    try {
      code = await runSuite(outputFile);
    } finally {
      await stopHogs();
    }
    const seconds = (performance.now() - started) / 1000;
    const { summary, failed } = failures(outputFile);
    results.push({ run, code, seconds, summary, failed, load: load() });
  }
} finally {
  await stopHogs();
  rmSync(dir, { recursive: true, force: true });
}

console.log('\ntest:stress: summary');
for (const r of results) {
  const counts = r.summary
    ? `${r.summary.passed} passed, ${r.summary.failed} failed of ${r.summary.tests} tests in ${r.summary.files} files`
    : 'no report (vitest failed before reporting)';
  console.log(
    `  run ${r.run}: ${r.code === 0 ? 'PASSED' : 'FAILED'} in ${r.seconds.toFixed(0)} s: ${counts}; load after: ${r.load}`,
  );
  for (const f of r.failed) console.log(`    ${f.file} > ${f.test}\n      ${f.error ?? ''}`);
}
const failedRuns = results.filter((r) => r.code !== 0).length;
console.log(
  failedRuns === 0
    ? `test:stress: all ${results.length} runs passed under load`
    : `test:stress: ${failedRuns} of ${results.length} runs failed`,
);
process.exit(failedRuns === 0 && results.length === runs ? 0 : 1);
