/**
 * A minimal WebAssembly binary writer for the kernel generators (scripts/generate-wasm.ts of
 * the protocol and of the miner package):
 * one module with one memory, a few functions, their locals and their bodies as byte
 * sequences. Only what the kernels use is here: the MVP integer and control instructions
 * and the fixed-width SIMD (128-bit) instructions, named after the text format.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const I32 = 0x7f;
export const I64 = 0x7e;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof I64 | typeof V128;

/** Unsigned LEB128. */
export function uleb(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer. */
export function sleb(value: number): number[] {
  const out: number[] = [];
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const simd = (op: number) => [0xfd, ...uleb(op)];
const memarg = (align: number, offset: number) => [...uleb(align), ...uleb(offset)];

/** Instructions, by their text-format names. */
export const op = {
  block: (type = 0x40) => [0x02, type],
  loop: (type = 0x40) => [0x03, type],
  if: (type = 0x40) => [0x04, type],
  else: [0x05],
  end: [0x0b],
  br: (depth: number) => [0x0c, ...uleb(depth)],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  return: [0x0f],
  select: [0x1b],
  localGet: (i: number) => [0x20, ...uleb(i)],
  localSet: (i: number) => [0x21, ...uleb(i)],
  localTee: (i: number) => [0x22, ...uleb(i)],
  i32Load: (offset = 0) => [0x28, ...memarg(2, offset)],
  i32Load8S: (offset = 0) => [0x2c, ...memarg(0, offset)],
  i32Store8: (offset = 0) => [0x3a, ...memarg(0, offset)],
  i32Store: (offset = 0) => [0x36, ...memarg(2, offset)],
  i64Load: (offset = 0) => [0x29, ...memarg(3, offset)],
  i64Store: (offset = 0) => [0x37, ...memarg(3, offset)],
  i32Const: (v: number) => [0x41, ...sleb(v)],
  /** i64.const of a value in the 32-bit signed range (sign-extended). */
  i64Const: (v: number) => [0x42, ...sleb(v)],
  i32Eqz: [0x45],
  i32LtU: [0x49],
  i32LtS: [0x48],
  i32GeU: [0x4f],
  i32GtS: [0x4a],
  i32GtU: [0x4b],
  i32LeS: [0x4c],
  i32GeS: [0x4e],
  i32Ctz: [0x68],
  i32Popcnt: [0x69],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Mul: [0x6c],
  i32And: [0x71],
  i32Or: [0x72],
  i32Xor: [0x73],
  i32Shl: [0x74],
  i32ShrS: [0x75],
  i32ShrU: [0x76],
  i32Rotl: [0x77],
  i32Rotr: [0x78],
  i64Popcnt: [0x7b],
  i64And: [0x83],
  i64Or: [0x84],
  i64Xor: [0x85],
  i64Shl: [0x86],
  i64ShrU: [0x88],
  i32WrapI64: [0xa7],
  i64ExtendI32S: [0xac],
  i64ExtendI32U: [0xad],
  i64Add: [0x7c],
  i64Sub: [0x7d],
  v128Load: (offset = 0) => [...simd(0x00), ...memarg(4, offset)],
  v128Load8x8S: (offset = 0) => [...simd(0x01), ...memarg(3, offset)],
  v128Load32Splat: (offset = 0) => [...simd(0x09), ...memarg(2, offset)],
  v128Store: (offset = 0) => [...simd(0x0b), ...memarg(4, offset)],
  v128Const: (lanes: readonly number[]) => {
    const bytes = new Uint8Array(new Int32Array(lanes.map((l) => l | 0)).buffer);
    return [...simd(0x0c), ...bytes];
  },
  i8x16Shuffle: (lanes: readonly number[]) => [...simd(0x0d), ...lanes],
  i16x8Splat: simd(0x10),
  i32x4Splat: simd(0x11),
  i32x4ExtractLane: (lane: number) => [...simd(0x1b), lane],
  i64x2ExtractLane: (lane: number) => [...simd(0x1d), lane],
  i32x4GtS: simd(0x3b),
  i32x4LeU: simd(0x3e),
  i8x16Bitmask: simd(0x64),
  i8x16NarrowI16x8S: simd(0x65),
  i16x8NarrowI32x4S: simd(0x85),
  v128And: simd(0x4e),
  v128Or: simd(0x50),
  v128Xor: simd(0x51),
  v128Bitselect: simd(0x52),
  v128AnyTrue: simd(0x53),
  i32x4Bitmask: simd(0xa4),
  i32x4Shl: simd(0xab),
  i32x4ShrS: simd(0xac),
  i32x4ShrU: simd(0xad),
  i32x4Add: simd(0xae),
  i32x4Sub: simd(0xb1),
  i32x4Mul: simd(0xb5),
  i32x4MinS: simd(0xb6),
  i32x4MaxS: simd(0xb8),
  i32x4DotI16x8S: simd(0xba),
  i32x4ExtmulLowI16x8S: simd(0xbc),
  i32x4ExtmulHighI16x8S: simd(0xbd),
  i64x2ExtendLowI32x4S: simd(0xc7),
  i64x2ExtendHighI32x4S: simd(0xc8),
  i64x2Add: simd(0xce),
} as const;

/** Locals allocated after the parameters. */
export class Locals {
  readonly types: ValType[] = [];
  constructor(private readonly params: number) {}
  i32(): number {
    return this.add(I32);
  }
  i64(): number {
    return this.add(I64);
  }
  v128(): number {
    return this.add(V128);
  }
  private add(type: ValType): number {
    this.types.push(type);
    return this.params + this.types.length - 1;
  }
}

export interface FunctionDef {
  readonly name: string;
  readonly params: readonly ValType[];
  readonly results: readonly ValType[];
  /** Local types after the parameters. */
  readonly locals: readonly ValType[];
  readonly body: readonly number[];
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

/** A module exporting `memory` (`pages` 64 KiB pages, not shared) and the functions. */
export function moduleBytes(functions: readonly FunctionDef[], pages: number): Uint8Array {
  const types = functions.map((f) => [
    0x60,
    ...vec(f.params.map((p) => [p])),
    ...vec(f.results.map((r) => [r])),
  ]);
  const code = functions.map((f) => {
    // Run-length groups of local types.
    const groups: number[][] = [];
    for (let i = 0; i < f.locals.length; ) {
      let j = i;
      while (j < f.locals.length && f.locals[j] === f.locals[i]) j++;
      groups.push([...uleb(j - i), f.locals[i]!]);
      i = j;
    }
    const body = [...vec(groups), ...f.body, ...op.end];
    return [...uleb(body.length), ...body];
  });
  const name = (s: string) => {
    const b = [...new TextEncoder().encode(s)];
    return [...uleb(b.length), ...b];
  };
  const exports = [
    [...name('memory'), 0x02, 0],
    ...functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]),
  ];
  return Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, vec(types)),
    ...section(3, vec(functions.map((_, i) => uleb(i)))),
    ...section(5, vec([[0x00, ...uleb(pages)]])),
    ...section(7, vec(exports)),
    ...section(10, vec(code)),
  ]);
}

/** A counted loop: `i` from `start` while i < `end` (both pushed by the given code), step `step`. */
export function forLoop(
  i: number,
  start: readonly number[],
  end: readonly number[],
  step: number,
  body: readonly number[],
): number[] {
  return [
    ...start,
    ...op.localSet(i),
    ...op.block(),
    ...op.loop(),
    ...op.localGet(i),
    ...end,
    ...op.i32GeU,
    ...op.brIf(1),
    ...body,
    ...op.localGet(i),
    ...op.i32Const(step),
    ...op.i32Add,
    ...op.localSet(i),
    ...op.br(0),
    ...op.end,
    ...op.end,
  ];
}

/**
 * The source of a generated module file: the module as base64 plus `exports` (declarations),
 * formatted with Biome; written, or compared with the file (`--check`).
 */
export function writeGenerated(
  target: string,
  header: string,
  declarations: string,
  bytes: Uint8Array,
): void {
  const here = dirname(fileURLToPath(import.meta.url));
  const repo = join(here, '../../..');
  const base64 = Buffer.from(bytes).toString('base64');
  const lines: string[] = [];
  for (let at = 0; at < base64.length; at += 100) lines.push(`  '${base64.slice(at, at + 100)}'`);
  const source = `${header}
${declarations}
/** The module (${bytes.length} bytes), base64. */
export const WASM_BASE64 =
${lines.join(' +\n')};
`;
  const formatted = execFileSync(
    join(repo, 'node_modules/.bin/biome'),
    ['format', `--stdin-file-path=${relative(repo, target)}`],
    { cwd: repo, input: source, encoding: 'utf8' },
  );
  if (process.argv.includes('--check')) {
    const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (current !== formatted) {
      console.error(`${relative(repo, target)} is out of date: run npm run generate`);
      process.exit(1);
    }
    console.log(`${relative(repo, target)} is up to date`);
  } else {
    writeFileSync(target, formatted);
    console.log(`wrote ${relative(repo, target)}`);
  }
}
