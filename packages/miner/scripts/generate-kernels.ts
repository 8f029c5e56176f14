/**
 * Generates src/kernels/sha256.generated.ts: SHA-256 compressions specialised for a message
 * block in which only one word changes between calls (the hexchain nonce, the counter of
 * `expand`). Everything that does not depend on that word is computed once per call, before
 * the loop: the rounds before the word first enters, the constant part of the round where it
 * enters, the schedule words (and parts of words) that do not depend on it, and every sum of
 * constants. The loop body is the remaining rounds, unrolled with the eight working variables
 * renamed round by round instead of shifted.
 *
 *   npx tsx packages/miner/scripts/generate-kernels.ts          (writes the file)
 *   npx tsx packages/miner/scripts/generate-kernels.ts --check  (fails when it is out of date)
 *
 * The output is formatted with Biome, so that `biome check` and `--check` agree.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHA256_K } from '@tensormine/protocol/sha256-words';

/** A message or schedule word: a number known now, a value fixed for the call, or the loop's. */
type Word =
  | { readonly kind: 'literal'; readonly value: number }
  | { readonly kind: 'fixed'; readonly name: string }
  | { readonly kind: 'loop'; readonly name: string };

interface Spec {
  /** The JSDoc and signature, up to and including the opening brace. */
  readonly head: string;
  /** Lines that bind the fixed inputs (message words, initial state). */
  readonly inputs: readonly string[];
  readonly message: readonly Word[];
  /** Expressions of the initial state a..h (fixed for the call). */
  readonly initial: readonly string[];
  readonly loopHead: string;
  /** Lines at the top of the loop body that bind the loop's message word. */
  readonly loopWord: readonly string[];
  /** Lines that consume the final working variables (a..h after the last round). */
  readonly finish: (finalNames: readonly string[]) => readonly string[];
  readonly tail: readonly string[];
}

const literal = (value: number): Word => ({ kind: 'literal', value: value | 0 });
const fixed = (name: string): Word => ({ kind: 'fixed', name });
const loopWord = (name: string): Word => ({ kind: 'loop', name });

const rotr = (x: string, n: number) => `((${x} >>> ${n}) | (${x} << ${32 - n}))`;
const sigma0 = (x: string) => `(${rotr(x, 7)} ^ ${rotr(x, 18)} ^ (${x} >>> 3))`;
const sigma1 = (x: string) => `(${rotr(x, 17)} ^ ${rotr(x, 19)} ^ (${x} >>> 10))`;
const bigSigma0 = (x: string) => `(${rotr(x, 2)} ^ ${rotr(x, 13)} ^ ${rotr(x, 22)})`;
const bigSigma1 = (x: string) => `(${rotr(x, 6)} ^ ${rotr(x, 11)} ^ ${rotr(x, 25)})`;
const ch = (e: string, f: string, g: string) => `(${g} ^ (${e} & (${f} ^ ${g})))`;
const maj = (a: string, b: string, c: string) => `((${a} & ${b}) | (${c} & (${a} | ${b})))`;
const sigma0Value = (x: number) => ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
const sigma1Value = (x: number) => ((x >>> 17) | (x << 15)) ^ ((x >>> 19) | (x << 13)) ^ (x >>> 10);

/** Emits one specialised compression loop. */
function specialise(spec: Spec): string {
  const prelude: string[] = [...spec.inputs];
  const body: string[] = [];
  const w: Word[] = [...spec.message];

  // The message schedule, symbolically: W[i] = W[i-16] + s0(W[i-15]) + W[i-7] + s1(W[i-2]).
  const scheduleLines = new Map<number, string>();
  for (let i = 16; i < 64; i++) {
    let constant = 0;
    const fixedTerms: string[] = [];
    const loopTerms: string[] = [];
    const term = (word: Word, f?: (x: string) => string, fv?: (x: number) => number) => {
      if (word.kind === 'literal') constant = (constant + (fv ? fv(word.value) : word.value)) | 0;
      else (word.kind === 'fixed' ? fixedTerms : loopTerms).push(f ? f(word.name) : word.name);
    };
    term(w[i - 16]!);
    term(w[i - 15]!, sigma0, sigma0Value);
    term(w[i - 7]!);
    term(w[i - 2]!, sigma1, sigma1Value);
    const name = `w${i}`;
    const fixedSum = [...fixedTerms, ...(constant === 0 ? [] : [constant])];
    if (loopTerms.length === 0) {
      if (fixedTerms.length === 0) {
        w[i] = literal(constant);
      } else {
        prelude.push(`const ${name} = (${fixedSum.join(' + ')}) | 0;`);
        w[i] = fixed(name);
      }
      continue;
    }
    let rest = '';
    if (fixedSum.length === 1) {
      rest = ` + ${fixedSum[0]}`;
    } else if (fixedSum.length > 1) {
      prelude.push(`const k${i} = (${fixedSum.join(' + ')}) | 0;`);
      rest = ` + k${i}`;
    }
    scheduleLines.set(i, `const ${name} = (${loopTerms.join(' + ')}${rest}) | 0;`);
    w[i] = loopWord(name);
  }

  // Rounds whose state and word are fixed run once, before the loop.
  let names = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((n) => `p${n}`);
  prelude.push(`let ${names.map((n, i) => `${n} = ${spec.initial[i]}`).join(', ')};`);
  let round = 0;
  const roundLines = (kw: string, into: string[]) => {
    const [a, b, c, d, e, f, g, h] = names as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    into.push(`{`);
    into.push(`  const t1 = (${h} + ${bigSigma1(e)} + ${ch(e, f, g)} + ${kw}) | 0;`);
    into.push(`  ${d} = (${d} + t1) | 0;`);
    into.push(`  ${h} = (t1 + ${bigSigma0(a)} + ${maj(a, b, c)}) | 0;`);
    into.push(`}`);
    names = [h, a, b, c, d, e, f, g];
  };
  const roundConstant = (i: number): string => {
    const word = w[i]!;
    if (word.kind === 'literal') return `${(SHA256_K[i]! + word.value) | 0}`;
    if (word.kind === 'fixed') {
      prelude.push(`const kw${i} = (${SHA256_K[i]!} + ${word.name}) | 0;`);
      return `kw${i}`;
    }
    return `${SHA256_K[i]!} + ${word.name}`;
  };
  for (; round < 64 && w[round]!.kind !== 'loop'; round++) {
    roundLines(roundConstant(round), prelude);
  }

  // The round where the loop's word enters: everything but that word is fixed.
  const [a, b, c, , e, f, g, h] = names as [string, string, string, string, string, string, string, string];
  prelude.push(`const r${round} = (${h} + ${bigSigma1(e)} + ${ch(e, f, g)} + ${SHA256_K[round]!}) | 0;`);
  prelude.push(`const u${round} = (${bigSigma0(a)} + ${maj(a, b, c)}) | 0;`);
  const loopNames = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  body.push(...spec.loopWord);
  body.push(`let ${loopNames.map((n, i) => `${n} = ${names[i]}`).join(', ')};`);
  names = loopNames;
  body.push(`{`);
  body.push(`  const t1 = (r${round} + ${(w[round] as { name: string }).name}) | 0;`);
  body.push(`  ${names[3]} = (${names[3]} + t1) | 0;`);
  body.push(`  ${names[7]} = (t1 + u${round}) | 0;`);
  body.push(`}`);
  names = [names[7]!, ...names.slice(0, 7)];
  for (round++; round < 64; round++) {
    const line = scheduleLines.get(round);
    if (line !== undefined) body.push(line);
    roundLines(roundConstant(round), body);
  }
  body.push(...spec.finish(names));

  return [
    spec.head,
    ...prelude.map((l) => `  ${l}`),
    `  ${spec.loopHead}`,
    ...body.map((l) => `    ${l}`),
    '  }',
    ...spec.tail.map((l) => `  ${l}`),
    '}',
  ].join('\n');
}

const hexchain: Spec = {
  head: `/**
 * The hexchain nonce search: one SHA-256 compression per nonce on the second block of the
 * 88-byte header, from the midstate of the first. Returns the first low nonce word \`lo\` in
 * [loStart, loEnd) whose first digest word (the most significant 32 bits of pow_hash, read
 * big-endian) is <= t0, or -1. The caller checks the other words (equal first words are rare).
 *
 * \`p\`: p[0..8) the midstate; p[8..12) block words 0..3 (header bytes 64..80, big-endian);
 * p[12] block word 5, the byte-swapped high 32 bits of the nonce (fixed for the call).
 * Block word 4 is the byte-swapped low 32 bits of the nonce (u64le at header bytes 80..88);
 * words 6..15 are the padding of an 88-byte message: 0x80000000, zeros, 704 bits.
 */
export function scanHexchain(p: Int32Array, loStart: number, loEnd: number, t0: number): number {`,
  inputs: [
    'const m0 = p[0]!, m1 = p[1]!, m2 = p[2]!, m3 = p[3]!, m4 = p[4]!, m5 = p[5]!, m6 = p[6]!, m7 = p[7]!;',
    'const c0 = p[8]!, c1 = p[9]!, c2 = p[10]!, c3 = p[11]!, w5 = p[12]!;',
  ],
  message: [
    fixed('c0'),
    fixed('c1'),
    fixed('c2'),
    fixed('c3'),
    loopWord('w4'),
    fixed('w5'),
    literal(0x80000000),
    ...Array.from({ length: 8 }, () => literal(0)),
    literal(88 * 8),
  ],
  initial: ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7'],
  loopHead: 'for (let lo = loStart; lo < loEnd; lo++) {',
  loopWord: ['const w4 = ((lo & 0xff) << 24) | ((lo & 0xff00) << 8) | ((lo >>> 8) & 0xff00) | (lo >>> 24);'],
  finish: (n) => [`if (((m0 + ${n[0]}) >>> 0) <= t0) return lo;`],
  tail: ['return -1;'],
};

const IV_HEX = [
  '0x6a09e667',
  '0xbb67ae85',
  '0x3c6ef372',
  '0xa54ff53a',
  '0x510e527f',
  '0x9b05688c',
  '0x1f83d9ab',
  '0x5be0cd19',
];

const expand: Spec = {
  head: `/**
 * \`expand(seed, 32 * blocks)\` as digest words: out[8i..8i+8) = SHA-256(seed || u32le(i)) for
 * i in [0, blocks), each digest as 8 big-endian words. \`seed\` is the 32-byte seed as 8
 * big-endian words. The message is one block: words 0..7 the seed (fixed for the call), word 8
 * the byte-swapped counter, then the padding of a 36-byte message (0x80000000, zeros, 288 bits).
 */
export function expandWords(seed: Int32Array, out: Int32Array, blocks: number): void {`,
  inputs: [
    'const s0 = seed[0]!, s1 = seed[1]!, s2 = seed[2]!, s3 = seed[3]!, s4 = seed[4]!, s5 = seed[5]!, s6 = seed[6]!, s7 = seed[7]!;',
  ],
  message: [
    ...Array.from({ length: 8 }, (_, i) => fixed(`s${i}`)),
    loopWord('w8'),
    literal(0x80000000),
    ...Array.from({ length: 5 }, () => literal(0)),
    literal(36 * 8),
  ],
  initial: IV_HEX,
  loopHead: 'for (let i = 0, o = 0; i < blocks; i++, o += 8) {',
  loopWord: ['const w8 = ((i & 0xff) << 24) | ((i & 0xff00) << 8) | ((i >>> 8) & 0xff00) | (i >>> 24);'],
  finish: (n) => n.map((name, k) => `out[o + ${k}] = (${IV_HEX[k]} + ${name}) | 0;`),
  tail: [],
};

const header = `// GENERATED by scripts/generate-kernels.ts (npm run generate -w @tensormine/miner). Do not edit.
// The plain compression is in @tensormine/protocol/sha256-words; sha256.test.ts checks both against node:crypto.
`;

const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, '../src/kernels/sha256.generated.ts');
const repo = join(here, '../../..');
const source = `${header}\n${specialise(hexchain)}\n\n${specialise(expand)}\n`;
const formatted = execFileSync(
  join(repo, 'node_modules/.bin/biome'),
  ['format', `--stdin-file-path=${relative(repo, target)}`],
  { cwd: repo, input: source, encoding: 'utf8' },
);

if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8');
  if (current !== formatted) {
    console.error(`${relative(repo, target)} is out of date: run npm run generate -w @tensormine/miner`);
    process.exit(1);
  }
  console.log(`${relative(repo, target)} is up to date`);
} else {
  writeFileSync(target, formatted);
  console.log(`wrote ${relative(repo, target)}`);
}
