/**
 * Writes docs/api.md: every endpoint of every service and every schema with every field,
 * generated from ROUTES and the schema descriptions (the single source of truth), so the
 * reference cannot drift from the code. The OpenAPI document served by the validator at
 * /openapi.json is built from the same table.
 *   npx tsx packages/protocol/scripts/generate-api-docs.ts [--check]
 */
// biome-ignore-all lint/suspicious/noExplicitAny: walks arbitrary JSON Schema objects
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as S from '../src/schemas/index.js';
import { ROUTE_LIST } from '../src/schemas/index.js';

type J = Record<string, any>;
const PATTERNS: Record<string, string> = {
  [(S.Hex32Schema as J).pattern]: 'Hex32',
  [(S.Hex8Schema as J).pattern]: 'Hex8',
  [(S.SignatureHexSchema as J).pattern]: 'SignatureHex',
  [(S.AmountSchema as J).pattern]: 'Amount',
  [(S.SignedAmountSchema as J).pattern]: 'SignedAmount',
  [(S.PriceSchema as J).pattern]: 'Price',
  [(S.TokenSymbolSchema as J).pattern]: 'TokenSymbol',
  [(S.IdSchema as J).pattern]: 'Id',
  [(S.UrlSchema as J).pattern]: 'Url',
  [(S.SlotHashSchema as J).pattern]: 'SlotHash',
  [(S.ProtocolVersionSchema as J).pattern]: 'ProtocolVersion',
  [(S.WalletAddressSchema as J).pattern]: 'WalletAddress',
};
const named = new Map<object, string>();
for (const [k, v] of Object.entries(S as Record<string, unknown>)) {
  if (
    k.endsWith('Schema') &&
    typeof v === 'object' &&
    v !== null &&
    (v as J).type === 'object' &&
    (v as J).title
  )
    named.set(v, (v as J).title);
}
const queue: [string, J][] = [];
const seen = new Set<string>();
const TIME = /(_at|^timestamp|^last_seen|^lock_expiry|^valid_until)$/;
function typeOf(s: J, top = false, field = ''): string {
  if (field && /pubkey$/.test(field) && s.pattern === (S.Hex32Schema as J).pattern) return 'PublicKeyHex';
  if (field && TIME.test(field) && s.type === 'integer') return 'UnixSeconds';
  if (field && TIME.test(field) && s.anyOf) return 'UnixSeconds \\| null';
  if (!top && s.type === 'object' && s.title) {
    if (!seen.has(s.title)) {
      seen.add(s.title);
      queue.push([s.title, s]);
    }
    return `[${s.title}](#${s.title.toLowerCase()})`;
  }
  if (s.anyOf) {
    const parts = (s.anyOf as J[]).map((x) => typeOf(x));
    return parts.join(' \\| ');
  }
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum && s.enum.length > 20) return 'ErrorCode (one of the ERROR_CODES table)';
  if (s.enum) return (s.enum as unknown[]).map((x) => `\`${JSON.stringify(x)}\``).join(' \\| ');
  if (s.type === 'null') return 'null';
  if (s.type === 'string') {
    if (s.pattern && PATTERNS[s.pattern]) return PATTERNS[s.pattern]!;
    const b = [s.minLength !== undefined ? `${s.minLength}` : '0', s.maxLength ?? '∞'].join('..');
    return s.pattern ? `string (${b} chars, \`${s.pattern.replaceAll('|', '\\|')}\`)` : `string (${b} chars)`;
  }
  if (s.type === 'integer' || s.type === 'number') {
    if (s.multipleOf) return 'Q16Ratio';
    if (s.type === 'number' && s.minimum === 0 && s.maximum === 1) return 'Fraction';
    const lo = s.minimum,
      hi = s.maximum;
    if (lo === 0 && hi === Number.MAX_SAFE_INTEGER) return 'SafeUint';
    const range =
      lo === 0 && hi === Number.MAX_SAFE_INTEGER
        ? '0..2^53-1'
        : lo !== undefined || hi !== undefined
          ? `${lo ?? '-∞'}..${hi ?? '∞'}`
          : '';
    return `${s.type}${range ? ` ${range}` : ''}`;
  }
  if (s.type === 'boolean') return 'boolean';
  if (s.type === 'array') {
    if (s.minItems === 64 && s.maxItems === 64 && s.items?.maximum === 255) return 'SignatureBytes';
    const n =
      s.minItems === s.maxItems && s.minItems !== undefined ? `exactly ${s.maxItems}` : `≤ ${s.maxItems}`;
    return `${typeOf(s.items)}[] (${n})`;
  }
  if (s.type === 'object' && s.patternProperties)
    return `object {string: ${typeOf(Object.values(s.patternProperties)[0] as J)}}`;
  if (s.type === 'object') {
    return 'object (below)';
  }
  return 'any';
}
function fieldRows(s: J, prefix = ''): string[] {
  const rows: string[] = [];
  const req = new Set<string>(s.required ?? []);
  for (const [k, v] of Object.entries(s.properties ?? {}) as [string, J][]) {
    const opt = req.has(k) ? '' : ' (optional)';
    const desc = (v.description ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ');
    rows.push(`| \`${prefix}${k}\`${opt} | ${typeOf(v, false, k)} | ${desc} |`);
    if (v.type === 'object' && !v.title && v.properties) rows.push(...fieldRows(v, `${prefix}${k}.`));
    if (v.type === 'array' && v.items?.type === 'object' && !v.items.title)
      rows.push(...fieldRows(v.items, `${prefix}${k}[].`));
  }
  return rows;
}
const out: string[] = [];
const services = ['validator', 'status', 'terminal', 'hub'] as const;
const titles = {
  validator: 'Validator ({base_url})',
  status: 'Status proxy ({status_url})',
  terminal: 'Terminal backend ({terminal_url})',
  hub: 'Hub ({hub_url})',
};
const ref = (s: J | undefined): string =>
  s ? (s.title ? typeOf(s) : s.type === 'null' ? '302 redirect' : typeOf(s)) : '—';
for (const svc of services) {
  out.push(
    `### ${titles[svc]}`,
    '',
    '| Method | Path | operationId | Auth | Version | Request | Response 200 |',
    '|---|---|---|---|---|---|---|',
  );
  for (const r of ROUTE_LIST.filter((x) => x.service === svc)) {
    const sch = r.schema as J;
    const req =
      [
        sch.params && `params ${ref(sch.params)}`,
        sch.querystring && `query ${ref(sch.querystring)}`,
        sch.body && `body ${ref(sch.body)}`,
      ]
        .filter(Boolean)
        .join(', ') || '—';
    const res = sch.response[200] ? ref(sch.response[200]) : '302 redirect (Location header)';
    out.push(
      `| ${r.method} | \`${r.url}\` | ${r.operationId}${r.deprecated ? ' (deprecated)' : ''} | ${r.auth} | ${r.version} | ${req} | ${res} |`,
    );
  }
  out.push('');
}
// Refusals: the common stages, then each route that lists its own (the economy routes).
const refusalList = (list: readonly { code: string; when: string }[]) =>
  list.map((r) => `\`${r.code}\` (${r.when.replaceAll('|', '\\|')})`).join('; ');
out.push(
  '## Refusals',
  '',
  'Which error a request gets when several checks fail: the first that applies, in this order.',
  '',
  `1. Every route, before it runs: ${refusalList(S.COMMON_REFUSALS.request)}.`,
  '2. A signed route whose identical request (same headers, same body) was already executed: its stored answer, `x-tm-idempotent-replay: true` (economy operations; docs/economy.md).',
  `3. A signed route: ${refusalList(S.COMMON_REFUSALS.signed)}.`,
  "4. The route's own checks, in the order of the table below; the transaction of an exactly-once economy operation starts at `idempotency_conflict`.",
  '',
  `At any step: ${refusalList(S.COMMON_REFUSALS.any)}. Every code, its HTTP status and meaning: [errors.md](errors.md).`,
  '',
  '| Route | Its own refusals, in order |',
  '|---|---|',
);
for (const r of ROUTE_LIST.filter((x) => x.refusals !== undefined)) {
  const own = r.refusals!.length === 0 ? 'none' : refusalList(r.refusals!);
  out.push(`| ${r.method} \`${r.url}\` (${r.operationId}) | ${own} |`);
}
out.push(
  '',
  '## Schemas',
  '',
  'Every object a route takes or returns, with every field. Types name the primitives of the conventions above.',
  '',
);
const extra = [
  S.ErrorResponseSchema,
  S.AdsListSchema,
  S.SignedRequestHeadersSchema,
  ...Object.values(S.HEX_EVENT_SCHEMAS),
  // sent by the validator (and the status proxy) to a device's callback port, not a route
  S.DeviceCallbackSchema,
];
for (const e of extra) typeOf(e as J);
for (let i = 0; i < queue.length; i++) {
  const [name, s] = queue[i]!;
  out.push(
    `### ${name}`,
    '',
    s.description ?? '',
    '',
    '| Field | Type | Meaning |',
    '|---|---|---|',
    ...fieldRows(s),
    '',
  );
}
const target = join(dirname(fileURLToPath(import.meta.url)), '../../../docs/api.md');
const text = `# API reference

<!-- Generated by packages/protocol/scripts/generate-api-docs.ts from src/schemas: do not edit. -->

Every endpoint of the validator and its companion services, and every request and response
object with every field. Conventions (timestamps, amounts, hex, signatures, errors) are in
[protocol.md](protocol.md#2-wire-format); error codes in [errors.md](errors.md). A running
validator serves the same as OpenAPI 3.1 at \`/openapi.json\` (committed as
[openapi.json](openapi.json)).

${out.join('\n')}
`;
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  if (current !== text) {
    console.error('docs/api.md is out of date: run npm run generate');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
