#!/usr/bin/env node
/**
 * Writes a C include of vector cases for the bare-metal vector run (cross/tm_vectors_bare.c):
 * every command of the host vector suite (test/vectors.test.ts) with the exact answer line the
 * vectors of packages/protocol/vectors/ require, so a target without a file system or a pipe
 * (qemu-system-riscv32, a board) checks the same values bit for bit.
 *
 *   node cross/gen-vector-cases.mjs <out.h>
 *
 * In an expected answer, a field `*` matches any one field (the work seed of a search's
 * solution, which the vectors do not list), and a trailing `*` any rest (`error*`).
 * Deterministic: the SHA-256 messages are derived from a counter, not random.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const vectorsDir = join(dirname(fileURLToPath(import.meta.url)), '../../packages/protocol/vectors');
const load = (name) => JSON.parse(readFileSync(join(vectorsDir, name), 'utf8'));
const tensor = load('tensor.vectors.json');
const hexchain = load('hexchain.vectors.json');

const sha256 = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const u64le = (n) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};
const i32le = (n) => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
};
const hex = (s) => Buffer.from(s, 'hex');
const tagged = (tag, ...parts) => sha256(Buffer.from(tag, 'ascii'), Buffer.from([0]), ...parts);

/** @type {{ cmd: string; expect: string; what: string }[]} */
const cases = [];
const add = (what, cmd, expect) => cases.push({ what, cmd, expect: String(expect) });

// SHA-256: FIPS 180-4 examples, every length 0..300, and 4096 bytes.
for (const text of ['', 'abc', 'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq']) {
  const m = Buffer.from(text);
  add(`SHA-256 "${text}"`, `sha256 ${m.toString('hex')}`.trim(), sha256(m).toString('hex'));
}
const message = (n) => {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i += 32) sha256(u64le(n), u64le(i)).copy(out, i);
  return out;
};
for (const n of [...Array.from({ length: 301 }, (_, i) => i), 4096]) {
  const m = message(n);
  add(`SHA-256 of ${n} bytes`, `sha256 ${m.toString('hex')}`.trim(), sha256(m).toString('hex'));
}

// v4.0
for (const r of tensor.activations)
  add(`activations of ${r.a}`, `act ${r.a}`, `${r.relu} ${r.sigmoid} ${r.tanh}`);
for (const r of tensor.normalize)
  add(`normalize ${r.z.length}`, `normalize ${r.z.join(',')}`, r.out.join(','));
for (const r of tensor.mml) add(`mml ${r.bitmap_hex}`, `mml ${r.bitmap_hex} ${r.count}`, r.score_q16);

const key = tensor.miner_public_key;
const work = (w) =>
  `${w.work_seed} ${w.tensor_result_hash} ${w.mml_score_q16} ${w.path_signature} ${w.path_distance} ${w.computation_hash} ${w.accumulator_hash}`;
for (const v of tensor.challenges) {
  const label = `${v.input.deviceType} ${v.operation} ${v.activation}`;
  const task = (x = v.input_tensor_hex) =>
    `${v.operation} ${v.activation} ${v.dim} ${v.filters} ${v.challenge_hash} ${x} ${v.path_target}`;
  add(`${label}: X`, `input ${v.challenge_hash} ${v.dim}`, v.input_tensor_hex);
  add(`${label}: path target`, `path_target ${v.challenge_hash}`, v.path_target);
  for (const n of v.nonces) add(`${label}: nonce ${n.nonce}`, `work ${task()} ${key} ${n.nonce}`, work(n));
  const n0 = v.nonces[0];
  add(`${label}: nonce ${n0.nonce}, X derived`, `work ${task('-')} ${key} ${n0.nonce}`, work(n0));
  const p = v.solution.proof;
  // The vectors give the solution's proof fields, not its work seed: taken from the listed
  // nonces when the solution is one of them, else any field matches.
  const listed = v.nonces.find((n) => n.nonce === p.computation_nonce);
  const solution = {
    work_seed: listed?.work_seed ?? '*',
    tensor_result_hash: p.tensor_result_hash,
    mml_score_q16: Math.round(p.mml_score * 65536),
    path_signature: p.path_signature,
    path_distance: p.path_distance,
    computation_hash: p.computation_hash,
    accumulator_hash: listed?.accumulator_hash ?? '*',
  };
  add(
    `${label}: search`,
    `search ${task()} ${key} 0 1000 ${v.mml_threshold_q16} ${v.path_distance_max}`,
    `found ${p.computation_nonce} ${v.solution.iterations} ${work(solution)}`,
  );
  add(`${label}: shortcut cross-check`, `crosscheck ${task()} ${key} 1000 64`, 'ok 64');
}
{
  const v = tensor.challenges[0];
  const task = `${v.operation} ${v.activation} ${v.dim} ${v.filters} ${v.challenge_hash} ${v.input_tensor_hex} ${v.path_target}`;
  add('nonce 2^53 refused', `work ${task} ${key} 9007199254740992`, 'error tm_compute_work failed');
}

// v4.1
const headerCmd = (c, hash, pub, nonce) => `header ${c.q} ${c.r} ${c.s} ${hash} ${pub} ${nonce}`;
const blockHash = (header) => tagged('PTM41/block', hex(header)).toString('hex');
for (const v of [...hexchain.headers, ...hexchain.chain.steps, ...hexchain.solved]) {
  add(
    `header nonce ${v.nonce}`,
    headerCmd(v.coord, v.challenge_hash, v.miner_pubkey, v.nonce),
    `${v.header} ${v.pow_hash} ${v.block_hash}`,
  );
  if (blockHash(v.header) !== v.block_hash)
    throw new Error('block hash rule changed: update gen-vector-cases');
}
const zero = '00'.repeat(32);
for (const c of hexchain.coordinates) {
  const i = c.input;
  if (typeof i !== 'object' || i === null) continue;
  if (!['q', 'r', 's'].every((k) => Number.isInteger(i[k]) && Math.abs(i[k]) < 2 ** 31)) continue;
  let expect = 'error*';
  if (c.valid) {
    const h = Buffer.concat([
      hex('00010400'),
      i32le(i.q),
      i32le(i.r),
      i32le(i.s),
      hex(zero),
      hex(zero),
      u64le(0),
    ]);
    expect = `${h.toString('hex')} ${sha256(h).toString('hex')} ${blockHash(h.toString('hex'))}`;
  }
  add(`coordinate ${i.q},${i.r},${i.s}`, headerCmd(i, zero, zero, 0), expect);
}
for (const v of hexchain.hash_meets_target)
  add(`meets ${v.hash}`, `meets ${v.hash} ${v.target}`, v.meets ? 1 : 0);
const blocks = [
  ...hexchain.solved.map((v) => ({ ...v, name: `solved D=${v.difficulty}` })),
  ...hexchain.chain.steps.map((v, i) => ({
    ...v,
    target: hexchain.chain.target,
    start_nonce: 0,
    name: `step ${i}`,
  })),
];
for (const v of blocks) {
  const prefix = v.header.slice(0, 160);
  const found = `found ${v.nonce} ${v.nonce - v.start_nonce + 1} ${v.pow_hash}`;
  add(`${v.name}: search`, `search_block ${prefix} ${v.target} ${v.start_nonce} 100000`, found);
  // The same search through the SHA-256 port seam (core/tm_sha_port.h) with the software port.
  add(`${v.name}: search via port`, `search_block_port ${prefix} ${v.target} ${v.start_nonce} 100000`, found);
}
{
  const v = hexchain.solved[hexchain.solved.length - 1];
  const prefix = v.header.slice(0, 160);
  add(
    'block range without solution',
    `search_block ${prefix} ${v.target} 0 ${v.nonce}`,
    `not_found ${v.nonce}`,
  );
  add(
    'block range of one',
    `search_block ${prefix} ${v.target} ${v.nonce} 1`,
    `found ${v.nonce} 1 ${v.pow_hash}`,
  );
}

// SHA-512, ed25519 (RFC 8032 section 7.1 and the protocol's signatures) and the board's
// messages: signed requests, submissions, device callbacks (docs/protocol.md 4.17).
const sha512 = (m) => createHash('sha512').update(m).digest('hex');
for (const text of ['', 'abc']) {
  const m = Buffer.from(text);
  add(`SHA-512 "${text}"`, `sha512 ${m.toString('hex')}`.trim(), sha512(m));
}
for (const n of [111, 112, 127, 128, 129, 255, 256, 1000]) {
  const m = message(n);
  add(`SHA-512 of ${n} bytes`, `sha512 ${m.toString('hex')}`, sha512(m));
}
const rfc8032 = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../test/rfc8032.vectors.json'), 'utf8'),
);
for (const v of rfc8032.vectors) {
  add(`RFC 8032 ${v.name}: public key`, `ed25519_public ${v.secret_key}`, v.public_key);
  add(
    `RFC 8032 ${v.name}: signature`,
    `ed25519_sign ${v.secret_key} ${v.message}`.trim(),
    `${v.public_key} ${v.signature}`,
  );
  add(`RFC 8032 ${v.name}: verify`, `ed25519_verify ${v.public_key} ${v.signature} ${v.message}`.trim(), 1);
  const bad = `${v.signature.slice(0, 2)}${(Number.parseInt(v.signature.slice(2, 4), 16) ^ 1).toString(16).padStart(2, '0')}${v.signature.slice(4)}`;
  add(
    `RFC 8032 ${v.name}: one bit of R changed`,
    `ed25519_verify ${v.public_key} ${bad} ${v.message}`.trim(),
    0,
  );
}
const signedRequests = load('signed-requests.vectors.json');
for (const r of signedRequests.requests) {
  if (/\s/.test(r.path) || r.method !== r.method.trim()) continue; // the driver splits on spaces
  const h = r.headers;
  add(
    `signed request: ${r.name}`,
    `request_sign ${r.secret_key} ${r.method} ${r.path} ${r.body_hex === '' ? '-' : r.body_hex} ${r.timestamp} ${r.nonce}`,
    `x-tm-pubkey: ${h['x-tm-pubkey']};x-tm-timestamp: ${h['x-tm-timestamp']};x-tm-nonce: ${h['x-tm-nonce']};x-tm-signature: ${h['x-tm-signature']};`,
  );
}
for (const s of hexchain.submissions) {
  const header = s.message.slice(-176);
  const idLen = Buffer.from(s.message, 'hex').readUInt16LE(13);
  const id = Buffer.from(s.message, 'hex')
    .subarray(15, 15 + idLen)
    .toString('utf8');
  add(`submission ${id}`, `submission_sign ${s.miner_secret_key_test_only} ${id} ${header}`, s.signature);
}
const callbacks = load('device-callbacks.vectors.json');
for (const c of callbacks.verification) {
  add(`device callback: ${c.name}`, `notify_verify ${c.key} ${c.signature} ${c.body_hex}`, c.valid ? 1 : 0);
}

const cString = (s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const longest = Math.max(...cases.map((c) => c.cmd.length));
const out = [
  '/* Generated by cross/gen-vector-cases.mjs from packages/protocol/vectors and test/rfc8032.vectors.json: do not edit. */',
  '#ifndef TM_VECTOR_CASES_H',
  '#define TM_VECTOR_CASES_H',
  `#define TM_VECTOR_CASE_COUNT ${cases.length}u`,
  `#define TM_VECTOR_CASE_LONGEST ${longest}u`,
  'static const tm_vector_case tm_vector_cases[TM_VECTOR_CASE_COUNT] = {',
  ...cases.map((c) => `  {${cString(c.what)},\n   ${cString(c.cmd)},\n   ${cString(c.expect)}},`),
  '};',
  '#endif',
  '',
];
writeFileSync(process.argv[2] ?? '/dev/stdout', out.join('\n'));
