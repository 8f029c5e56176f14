import { describe, expect, test } from 'vitest';
import {
  I32,
  MAC_PAGES,
  macFunctions,
  moduleBytes,
  op,
  POST_PAGES,
  postFunctions,
  sleb,
  uleb,
} from '../src/index.js';

/** The part of the WebAssembly JS API used here (the compiler's lib has no DOM types). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
  readonly Memory: abstract new (...args: never[]) => object;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

describe('the WebAssembly writer', () => {
  test('LEB128 encodes as the WebAssembly spec examples', () => {
    expect(uleb(0)).toEqual([0x00]);
    expect(uleb(127)).toEqual([0x7f]);
    expect(uleb(128)).toEqual([0x80, 0x01]);
    expect(uleb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(uleb(0xffffffff)).toEqual([0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(sleb(0)).toEqual([0x00]);
    expect(sleb(-1)).toEqual([0x7f]);
    expect(sleb(63)).toEqual([0x3f]);
    expect(sleb(64)).toEqual([0xc0, 0x00]);
    expect(sleb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
    expect(sleb(-(2 ** 31))).toEqual([0x80, 0x80, 0x80, 0x80, 0x78]);
  });

  test('a module with one function validates and runs', () => {
    const bytes = moduleBytes(
      [
        {
          name: 'add',
          params: [I32, I32],
          results: [I32],
          locals: [],
          body: [...op.localGet(0), ...op.localGet(1), ...op.i32Add],
        },
      ],
      1,
    );
    expect(wasm.validate(bytes)).toBe(true);
    const instance = new wasm.Instance(new wasm.Module(bytes), {});
    const add = instance.exports.add as (a: number, b: number) => number;
    expect(add(40, 2)).toBe(42);
    expect(instance.exports.memory).toBeInstanceOf(wasm.Memory);
  });

  test("the protocol's verifier core (multiply-accumulate and the passes over Z) validates", () => {
    const bytes = moduleBytes([...macFunctions(), ...postFunctions()], Math.max(MAC_PAGES, POST_PAGES));
    expect(wasm.validate(bytes)).toBe(true);
  });
});
