import Type, { type Static, type TSchema } from 'typebox';

/**
 * `miner mine --json`: the machine interface. One JSON object per line on stdout, each with
 * `time` (ISO 8601), `type` and `message` (the line a person would read), and the fields of
 * its type below. These TypeBox schemas are the one definition: the tests validate every
 * line against `JsonEventSchema`, and docs/cli.md's table is generated from them
 * (`npm run generate`). Fields may be added; none is renamed or removed.
 */

const Base = {
  time: Type.String({ format: 'date-time', description: 'When, ISO 8601 (UTC).' }),
  message: Type.String({ description: 'The same event as the line a person reads.' }),
};

const Nullable = (schema: TSchema, description: string) => Type.Union([schema, Type.Null()], { description });

const HashsPerSecond = (description: string) => Nullable(Type.Number({ minimum: 0 }), description);

const Found = Type.Object(
  {
    id: Type.String(),
    challengeId: Type.String(),
    nonce: Type.Integer({ minimum: 0 }),
    device: Type.String(),
    worker: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { description: 'The result: its id, challenge, nonce, and the device (and CPU worker) that found it.' },
);

const event = <T extends string>(type: T, description: string, fields: Record<string, TSchema> = {}) =>
  Type.Object({ ...Base, type: Type.Literal(type), ...fields }, { title: type, description });

const Result = {
  found: Found,
  accepted: Type.Integer({ minimum: 0, description: 'Results accepted so far (this one included).' }),
  rejected: Type.Integer({ minimum: 0, description: 'Results rejected so far.' }),
  difficulty: Type.Number({ description: 'Expected hashes per result of its job (the share difficulty).' }),
  latencyMs: Type.Number({ description: 'Submission round trip, ms.' }),
};

export const JSON_EVENTS = [
  event('start', 'Mining starts: what runs, where results go.', {
    version: Type.String({ description: 'The miner version.' }),
    node: Type.String({ description: 'The Node.js version.' }),
    pid: Type.Integer({ description: 'The process id (what a supervisor signals).' }),
    key: Type.String({ description: 'The public key mined for (64 hex digits).' }),
    validators: Type.Array(Type.String(), { description: 'The validator URLs, failover order.' }),
    local: Type.Boolean({ description: 'The validator runs in this process (--local).' }),
    protocol: Type.String({ description: '`auto`, `4.0` or `4.1`.' }),
    threads: Nullable(Type.Integer({ minimum: 1 }), 'CPU worker threads; null with --no-cpu.'),
    intensity: Nullable(Type.Number(), 'The CPU duty cycle in (0, 1]; null with --no-cpu.'),
    devices: Type.Array(Type.String(), { description: 'The --device arguments (serial boards).' }),
    journal: Type.String({ description: 'The journal file.' }),
    journalPending: Type.Integer({ minimum: 0, description: 'Results in the journal from an earlier run.' }),
    apiUrl: Nullable(Type.String(), 'The control API, when on.'),
  }),
  event('hashrate', 'Periodic (every minute; also on `h`): the rates in hashes per second.', {
    unit: Type.Literal('H/s'),
    '10s': HashsPerSecond('Over the last 10 s; while warming up, over the samples so far.'),
    '60s': HashsPerSecond('Over the last 60 s; null for the first minute.'),
    '15m': HashsPerSecond('Over the last 15 min; null for the first 15 minutes.'),
    max: HashsPerSecond('The highest 10 s rate seen.'),
    warmingUp: Type.Boolean({ description: 'True while the 10 s window is not full yet.' }),
    devices: Type.Array(
      Type.Object({
        id: Type.String(),
        '10s': HashsPerSecond('10 s rate'),
        '60s': HashsPerSecond('60 s rate'),
      }),
      { description: 'Per device (cpu, each board).' },
    ),
  }),
  event('job', 'New work dispatched to the devices.', {
    challengeId: Type.String(),
    protocolVersion: Type.Union([Type.Literal('4.0'), Type.Literal('4.1')]),
    difficulty: Type.Number({ description: 'Expected hashes per result.' }),
    expiresAtMs: Type.Number({ description: 'When the work expires, Unix ms.' }),
    devices: Type.Array(Type.String(), { description: 'The devices mining it.' }),
  }),
  event('accepted', 'The validator accepted a result.', {
    ...Result,
    details: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: "The validator's answer." }),
    ),
  }),
  event('rejected', 'The validator rejected a result (not retried).', {
    ...Result,
    code: Type.String({ description: 'The error code (docs/errors.md).' }),
    detail: Type.String({ description: "The validator's message." }),
  }),
  event('journaled', 'A result could not be delivered; it stays in the journal and is retried.', {
    found: Found,
    reason: Type.String(),
  }),
  event('resubmitting', 'Journaled results are being submitted again.', {
    count: Type.Integer({ minimum: 0 }),
  }),
  event('expired', 'A journaled result was dropped: its challenge expired.', { found: Found }),
  event('connection-lost', 'A validator stopped answering.', {
    url: Type.Optional(Type.String({ description: 'The validator.' })),
    reason: Type.String(),
    retryInMs: Type.Number(),
  }),
  event('connection-restored', 'A validator answers again (or another one took over).', {
    url: Type.Optional(Type.String({ description: 'The validator that answers.' })),
    downMs: Type.Number(),
  }),
  event('stale', 'The work went stale (the lattice moved, failover); new work is fetched.', {
    reason: Type.String(),
  }),
  event('shares-dropped', 'Pool shares were dropped unsent (at most one event a second per reason).', {
    reason: Type.String({
      description:
        '`queue-full` (more than 4096 waiting behind the 32 in flight: the oldest goes), `expired` (their challenge expired while queued), `stopped` (queued at shutdown).',
    }),
    count: Type.Integer({ minimum: 1, description: 'Shares dropped by this event.' }),
    total: Type.Integer({ minimum: 0, description: 'Shares dropped since the start.' }),
    queued: Type.Integer({ minimum: 0, description: 'Shares still waiting.' }),
  }),
  event('device-error', 'A device reported a problem.', { device: Type.String(), detail: Type.String() }),
  event('device-state', 'A device changed state (errors, attach, detach; not routine idle/ok).', {
    device: Type.String(),
    state: Type.String(),
  }),
  event('device-notice', 'A board came, went, came back, rebooted, failed its self-test or has a bad link.', {
    device: Type.String({ description: 'The unit, e.g. `serial:02a1b2c3d4e50000`.' }),
    backend: Type.String({ description: 'The backend it belongs to (e.g. `serial`).' }),
    kind: Type.String({
      description: '`attached`, `lost`, `back`, `rebooted`, `self-test-failed`, `link-degraded`.',
    }),
    reason: Type.String({ description: 'Why, in words.' }),
    chipId: Type.Optional(Type.String()),
    port: Type.Optional(Type.String()),
  }),
  event('paused', 'Mining paused (p, or the control API).'),
  event('resumed', 'Mining resumed.'),
  event('error', 'An unexpected problem (mining goes on).', { detail: Type.String() }),
  event('note', 'Anything else worth a line (the control API address, a journal repair, ...).'),
  event('stop', 'Mining stopped: the workers are stopped and the journal is flushed. The last line.', {
    reason: Type.String({ description: 'Why: SIGTERM, SIGINT, SIGHUP, quit (q), EPIPE, ...' }),
    accepted: Type.Integer({ minimum: 0 }),
    rejected: Type.Integer({ minimum: 0 }),
    journalPending: Type.Integer({
      minimum: 0,
      description: 'Results left in the journal for the next run.',
    }),
    uptimeSeconds: Type.Integer({ minimum: 0 }),
  }),
] as const;

/** Any line of `miner mine --json`. */
export const JsonEventSchema = Type.Union([...JSON_EVENTS], { title: 'MinerJsonEvent' });
export type JsonEvent = Static<typeof JsonEventSchema>;

export const JSON_EVENTS_START = '<!-- json-events:start -->';
export const JSON_EVENTS_END = '<!-- json-events:end -->';

/** The table of docs/cli.md: every event type with its fields. */
export function jsonEventsTable(): string {
  const rows = JSON_EVENTS.map((event) => {
    const schema = event as unknown as {
      title: string;
      description: string;
      properties: Record<string, TSchema>;
    };
    const props = schema.properties;
    const fields = Object.keys(props)
      .filter((k) => k !== 'time' && k !== 'type' && k !== 'message')
      .map((k) => `\`${k}\``)
      .join(', ');
    return `| \`${schema.title}\` | ${schema.description} | ${fields || '(none)'} |`;
  });
  return ['| type | when | fields (besides `time`, `type`, `message`) |', '|---|---|---|', ...rows].join(
    '\n',
  );
}

/** `text` with the table between the markers replaced. */
export function withJsonEventsTable(text: string): string {
  const from = text.indexOf(JSON_EVENTS_START);
  const to = text.indexOf(JSON_EVENTS_END);
  if (from < 0 || to < from)
    throw new Error(`expected ${JSON_EVENTS_START} ... ${JSON_EVENTS_END} in docs/cli.md`);
  return `${text.slice(0, from + JSON_EVENTS_START.length)}\n${jsonEventsTable()}\n${text.slice(to)}`;
}
