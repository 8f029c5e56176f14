import Type, { type Static } from 'typebox';
import { AmountSchema, nullable, SafeUintSchema, UrlSchema, withDescription } from './common.js';

/**
 * The miner's control API ({miner_api_url}, `miner mine --api-port`): AxeOS field names where
 * AxeOS has them (its units: GH/s), then ours, each with its unit in its name
 * (`hashesPerSecond`). Reads are open on a loopback address; writes take the control token.
 */

/** The CPU kernel settings, as `--kernel` takes them (packages/miner/src/kernels/choice.ts). */
export const MINER_KERNEL_CHOICES = ['auto', 'native', 'wasm', 'js'] as const;
export type MinerKernelChoice = (typeof MINER_KERNEL_CHOICES)[number];

export const MinerKernelChoiceSchema = Type.Union(
  [Type.Literal('auto'), Type.Literal('native'), Type.Literal('wasm'), Type.Literal('js')],
  {
    description:
      'The CPU kernel setting: native (C on SHA-NI and AVX2, built on first use), wasm (WebAssembly SIMD), js (generated JavaScript), or auto (native where it runs, else wasm). Results are identical.',
  },
);

const rate = (description: string) => nullable(Type.Number({ minimum: 0 }), description);
const GH = (window: string) => rate(`GH/s (AxeOS unit) over ${window}; null until the window has data.`);

export const HashrateWindowsSchema = Type.Object(
  {
    '10s': rate('H/s over the last 10 seconds.'),
    '60s': rate('H/s over the last 60 seconds.'),
    '15m': rate('H/s over the last 15 minutes.'),
    '10m': rate('H/s over the last 10 minutes.'),
    '1h': rate('H/s over the last hour.'),
    max: rate('The highest 10-second rate so far, H/s.'),
  },
  {
    title: 'HashrateWindows',
    description:
      'Hashes per second (nonce iterations for v4.0) over sliding windows of wall-clock time, as xmrig reports them; null = no data yet.',
  },
);
export type HashrateWindows = Static<typeof HashrateWindowsSchema>;

export const RejectReasonSchema = Type.Object(
  {
    message: Type.String({ maxLength: 64, description: "The validator's error code (docs/errors.md)." }),
    count: withDescription(SafeUintSchema, 'Results refused with it.'),
  },
  { title: 'RejectReason', description: 'Rejected results of one reason (AxeOS `sharesRejectedReasons`).' },
);

const isoTime = (description: string) =>
  nullable(Type.String({ maxLength: 32, description: 'An ISO 8601 time.' }), description);

export const MinerBoardSelfTestSchema = Type.Object(
  {
    reason: Type.String({
      maxLength: 256,
      description: 'Why it did not pass, e.g. hex: no RESULT within 3000 ms, or hex: wrong RESULT.',
    }),
    retryAt: isoTime(
      'When it is tried again (state self-test: the test only ran out of time); null when it failed for good.',
    ),
  },
  {
    title: 'MinerBoardSelfTest',
    description: "Why a board's known-answer self-test did not pass.",
  },
);
export type MinerBoardSelfTest = Static<typeof MinerBoardSelfTestSchema>;

export const MinerBoardSchema = Type.Object(
  {
    id: Type.String({ maxLength: 64, description: 'serial:<chip id>.' }),
    kind: Type.String({ maxLength: 32, description: 'The backend kind: serial.' }),
    chipId: nullable(Type.String({ maxLength: 32 }), 'The chip id, 16 hex digits.'),
    port: nullable(
      Type.String({ maxLength: 256 }),
      'The serial port, e.g. /dev/ttyUSB0; null while unplugged.',
    ),
    firmware: nullable(Type.String({ maxLength: 64 }), 'The firmware version the board reported.'),
    board: nullable(Type.String({ maxLength: 64 }), 'The board name it reported.'),
    state: Type.String({
      maxLength: 32,
      description:
        'ok, idle, paused, no device, self-test failed, self-test (its self-test timed out: tried again at selfTest.retryAt, no work meanwhile), starting or stopped.',
    }),
    selfTest: nullable(
      MinerBoardSelfTestSchema,
      'Set in the states self-test failed and self-test: why, and when it is tried again; else null.',
    ),
    hashRate: GH('10 s'),
    hashRate_1m: GH('60 s'),
    expectedHashrate: rate('GH/s (AxeOS unit): the best 60-second average so far.'),
    sharesAccepted: withDescription(SafeUintSchema, "The board's results the validator accepted."),
    sharesRejected: withDescription(SafeUintSchema, "The board's results the validator refused."),
    sharesRejectedReasons: Type.Array(RejectReasonSchema, {
      maxItems: 128,
      description: 'Rejected results counted by reason, most frequent first.',
    }),
    hardwareErrors: withDescription(
      SafeUintSchema,
      'Results the reference verifier rejected (the board computed wrongly; never submitted).',
    ),
    hashesPerSecond: HashrateWindowsSchema,
    totalHashes: withDescription(SafeUintSchema, 'Hashes since the board was first seen.'),
    found: withDescription(SafeUintSchema, 'Results the board reported.'),
    crcErrors: withDescription(SafeUintSchema, 'Frames dropped for a bad CRC.'),
    resyncs: withDescription(SafeUintSchema, 'Receiver resynchronisations.'),
    retransmissions: withDescription(SafeUintSchema, 'Frames sent again (host and board).'),
    reboots: withDescription(SafeUintSchema, 'Board reboots seen.'),
    linkLosses: withDescription(SafeUintSchema, 'Times the link was lost.'),
    lastFoundAt: isoTime('When the board last found a result.'),
  },
  { title: 'MinerBoard', description: 'An ESP32 board of the serial fleet, connected or not.' },
);
export type MinerBoard = Static<typeof MinerBoardSchema>;

export const MinerDeviceSchema = Type.Object(
  {
    id: Type.String({ maxLength: 64, description: 'The backend id: cpu, or serial for the boards.' }),
    kind: Type.String({ maxLength: 32, description: 'cpu or serial.' }),
    state: Type.String({
      maxLength: 32,
      description: 'ok, idle, paused, starting, stopped, error, no device.',
    }),
    hashesPerSecond: HashrateWindowsSchema,
    workers: Type.Array(HashrateWindowsSchema, {
      maxItems: 1024,
      description: 'Per CPU worker thread (empty for the boards).',
    }),
    totalHashes: withDescription(SafeUintSchema, 'Hashes since the device started.'),
    expectedHashesPerSecond: rate('H/s: the best 60-second average so far.'),
    lastFoundAt: isoTime('When the device last found a result.'),
    sharesAccepted: SafeUintSchema,
    sharesRejected: SafeUintSchema,
    sharesRejectedReasons: Type.Array(RejectReasonSchema, {
      maxItems: 128,
      description: 'Rejected results counted by reason, most frequent first.',
    }),
    boards: Type.Optional(
      Type.Array(MinerBoardSchema, { maxItems: 256, description: 'The serial fleet only: one per board.' }),
    ),
  },
  { title: 'MinerDevice', description: 'A mining backend: the CPU engine or the serial fleet.' },
);
export type MinerDevice = Static<typeof MinerDeviceSchema>;

export const MinerSystemInfoSchema = Type.Object(
  {
    hashRate: GH('10 s'),
    hashRate_1m: GH('60 s'),
    hashRate_10m: GH('10 min'),
    hashRate_1h: GH('1 h'),
    expectedHashrate: rate("GH/s (AxeOS unit): the sum of the devices' best 60-second averages."),
    sharesAccepted: withDescription(SafeUintSchema, 'Results accepted since the mining run started.'),
    sharesRejected: withDescription(
      SafeUintSchema,
      'Results refused since the mining run started (stale ones included).',
    ),
    sharesRejectedReasons: Type.Array(RejectReasonSchema, {
      maxItems: 128,
      description: 'Rejected results counted by reason, most frequent first.',
    }),
    sharesStale: withDescription(
      SafeUintSchema,
      'Of the refused results, those that came too late (share_stale, challenge_expired, coordinate_occupied), plus results dropped from the journal once their challenge expired.',
    ),
    bestDiff: Type.Number({
      minimum: 0,
      description:
        'The highest difficulty a result met (hexchain: (2^256 - 1) / pow_hash; v4.0: 2^64 / the paths within its distance).',
    }),
    bestSessionDiff: Type.Number({ minimum: 0, description: 'The same, for this mining run.' }),
    uptimeSeconds: withDescription(
      SafeUintSchema,
      'Since the mining run started (a restart starts a new run).',
    ),
    version: nullable(Type.String({ maxLength: 64 }), 'The miner software version.'),
    protocolVersion: nullable(Type.String({ maxLength: 8 }), 'The protocol of the current job: 4.0 or 4.1.'),
    validatorUrl: nullable(Type.String({ maxLength: 2048 }), 'The validator in use (its base URL).'),
    paused: Type.Boolean({ description: 'Every device is paused (POST /api/pause; /api/resume ends it).' }),
    connected: Type.Boolean({ description: 'Work comes and the validator in use answers.' }),
    hashesPerSecond: HashrateWindowsSchema,
    job: nullable(
      Type.Object(
        {
          challengeId: Type.String({ maxLength: 128, description: 'The challenge the job mines.' }),
          difficulty: Type.Number({
            minimum: 0,
            description: 'Expected hashes per result (a pooled job: per share).',
          }),
          expiresAt: Type.String({ maxLength: 32, description: 'An ISO 8601 time.' }),
        },
        { title: 'MinerJob' },
      ),
      'The job being mined; null between jobs.',
    ),
    latencyMs: Type.Object(
      {
        last: nullable(Type.Number({ minimum: 0 }), 'The last submission round trip, ms.'),
        average: nullable(Type.Number({ minimum: 0 }), 'The average round trip, ms.'),
      },
      { title: 'MinerLatency', description: 'Round trips of submissions to the validator in use.' },
    ),
    journalPending: withDescription(SafeUintSchema, 'Results waiting in the journal.'),
    devices: Type.Array(MinerDeviceSchema, {
      maxItems: 64,
      description: 'The CPU and every serial board, with their rates and results.',
    }),
  },
  {
    title: 'MinerSystemInfo',
    description:
      'The miner at a glance. AxeOS names and units first (hashRate*, expectedHashrate in GH/s, shares*, bestDiff, uptimeSeconds: what AxeOS dashboards read); ours say their unit in their name (hashesPerSecond: H/s).',
  },
);
export type MinerSystemInfo = Static<typeof MinerSystemInfoSchema>;

export const MinerConfigSchema = Type.Object(
  {
    cpu: Type.Boolean({ description: 'The CPU mines (false with --no-cpu).' }),
    threads: Type.Integer({ minimum: 1, maximum: 1024, description: 'CPU worker threads.' }),
    intensity: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      description: 'CPU duty cycle: each worker sleeps (1 - x) / x of its batch time.',
    }),
    kernel: MinerKernelChoiceSchema,
    kernelInUse: nullable(
      Type.Union([Type.Literal('native'), Type.Literal('wasm'), Type.Literal('js')]),
      'The kernel the workers run (null while the CPU does not mine).',
    ),
    validators: Type.Array(Type.String({ maxLength: 2048 }), {
      maxItems: 16,
      description: 'The validators (base URLs), in failover order.',
    }),
    local: Type.Boolean({ description: 'Mining against a validator in this process (mine --local).' }),
    pool: Type.Boolean({ description: "Mining in the validator's pool (shares, PPLNS payouts)." }),
    protocol: Type.String({ maxLength: 8, description: 'auto, 4.0 or 4.1.' }),
    devices: Type.Array(Type.String({ maxLength: 256 }), {
      maxItems: 64,
      description: 'Serial boards: auto and the ports given.',
    }),
    paused: Type.Boolean({ description: 'Every device is paused.' }),
  },
  {
    title: 'MinerConfig',
    description:
      'What the miner runs with now: its settings as started, then as changed by POST /api/config (in memory: a new start reads the flags, environment and config file again).',
  },
);
export type MinerConfig = Static<typeof MinerConfigSchema>;

export const MinerConfigChangeSchema = Type.Object(
  {
    threads: Type.Optional(MinerConfigSchema.properties.threads),
    intensity: Type.Optional(MinerConfigSchema.properties.intensity),
    kernel: Type.Optional(MinerKernelChoiceSchema),
    validators: Type.Optional(
      Type.Array(UrlSchema, {
        minItems: 1,
        maxItems: 16,
        uniqueItems: true,
        description: 'The validators, in failover order (not with --local).',
      }),
    ),
    pool: Type.Optional(
      Type.Boolean({
        description:
          'Mine in the pool (true) or solo (false); joining needs `stake` if the key is no member.',
      }),
    ),
    stake: Type.Optional(
      withDescription(
        AmountSchema,
        'PTM to join the pool with, when `pool` is true and the key is not a member.',
      ),
    ),
  },
  {
    title: 'MinerConfigChange',
    additionalProperties: false,
    minProperties: 1,
    description:
      'Settings to change now. intensity applies from the next batch; threads and kernel restart the CPU workers; validators and pool restart the mining run (new counters) with the new network settings, and the old ones stay if the new ones fail.',
  },
);
export type MinerConfigChange = Static<typeof MinerConfigChangeSchema>;

export const MinerConfigResultSchema = Type.Object(
  {
    config: MinerConfigSchema,
    applied: Type.Array(Type.String({ maxLength: 32 }), {
      maxItems: 8,
      description: 'The settings that changed.',
    }),
    restarted: Type.Union([Type.Literal('none'), Type.Literal('workers'), Type.Literal('run')], {
      description:
        'none: applied in place; workers: the CPU workers were restarted; run: the mining run was restarted.',
    }),
  },
  { title: 'MinerConfigResult', description: 'The configuration after a change, and what it took.' },
);
export type MinerConfigResult = Static<typeof MinerConfigResultSchema>;

export const MinerPausedSchema = Type.Object(
  { paused: Type.Boolean({ description: 'Every device is paused now.' }) },
  { title: 'MinerPaused', description: 'Whether every device is paused now.' },
);

export const MinerRestartSchema = Type.Object(
  {
    restarted: Type.Literal(true, { description: 'Always true; a failed restart is an error response.' }),
    config: MinerConfigSchema,
  },
  {
    title: 'MinerRestart',
    description:
      'The mining run was restarted: the devices stopped and started again, the validators were asked for new work, the counters start anew; the journal is kept.',
  },
);
