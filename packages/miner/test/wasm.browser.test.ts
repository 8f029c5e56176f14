/**
 * The WebAssembly SIMD kernels in a real browser (Debian's Chromium, driven by playwright-core):
 * the generated module runs there as it is (it imports nothing) and gives the same answers as
 * in Node (the hexchain scan, the accumulators, the passes over them), so a web miner can use
 * it. Chromium is installed by .ci/run.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testBrowser } from '../../../test-support/services.ts';
import { prepareHexchain } from '../src/kernels/hexchain.js';
import { HEXCHAIN_PARAMS, MAC_LAYOUT, POST_LAYOUT, WASM_BASE64 } from '../src/kernels/wasm.generated.js';
import { WasmKernels } from '../src/kernels/wasm.js';

let browser: Browser;

beforeAll(async () => {
  browser = await testBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('WebAssembly SIMD kernels in Chromium', () => {
  test('the hexchain scan and the tensor accumulators give the same answers as in Node', async () => {
    const header = Uint8Array.from({ length: 88 }, (_, i) => (i * 37 + 11) & 0xff);
    const { params } = prepareHexchain({ header, target: new Uint8Array(32) }, 'js');
    const t0 = 0x00ffffff; // about 1 nonce in 256 passes the first-word test
    const seed = Array.from({ length: 8 }, (_, i) => (0x9e3779b9 * (i + 1)) | 0);
    const input = Array.from({ length: 64 * 64 }, (_, i) => ((i * 131) % 256) - 128);

    // In Node, through the kernel API.
    const node = new WasmKernels();
    const hits: number[] = [];
    for (let lo = 0; hits.length < 20; ) {
      const hit = node.scanHexchain(params, lo, lo + 100_000, t0);
      if (hit < 0) break;
      hits.push(hit);
      lo = hit + 1;
    }
    const z = new Int32Array(64 * 64);
    node.accumulate(Int8Array.from(input), 64, false, 0, Int32Array.from(seed));
    node.readZ(z, z.length);
    const zConv = new Int32Array(8 * 64 * 64);
    node.accumulate(Int8Array.from(input), 64, true, 8, Int32Array.from(seed));
    node.readZ(zConv, zConv.length);
    // The passes over the conv accumulators (still in memory): fold and stats, fired and MML.
    const lanes = new Int32Array(8);
    const stats = new Float64Array(3);
    node.postStats(zConv.length, lanes, stats);
    const below = stats[0]! / zConv.length + 100;
    const fired = new Uint8Array(zConv.length / 8);
    const bits = node.postFired(zConv.length, Math.floor(below), fired);

    // In the browser, the raw module: the same calls by hand.
    const page = await browser.newPage();
    await page.goto('about:blank');
    const inBrowser = await page.evaluate(
      async ({ base64, params, t0, seed, input, layout, hexParams, post, below }) => {
        const wa = (
          globalThis as unknown as {
            WebAssembly: {
              validate(b: Uint8Array): boolean;
              instantiate(b: Uint8Array, i: object): Promise<{ instance: { exports: unknown } }>;
            };
          }
        ).WebAssembly;
        const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
        const simd = wa.validate(bytes);
        const { instance } = await wa.instantiate(bytes, {});
        const e = instance.exports as {
          memory: { buffer: ArrayBuffer };
          scanHexchain(lo: number, count: number, t0: number): number;
          expandWeights(blocks: number): void;
          macMatmul(n: number, swap: number): void;
          macConv(n: number, f: number, swap: number): void;
          postStats(count: number): void;
          postFired(count: number, below: number): number;
        };
        const words = new Int32Array(e.memory.buffer);
        const mem = new Int8Array(e.memory.buffer);
        words.set(params, hexParams >> 2);
        const hits: number[] = [];
        for (let lo = 0; hits.length < 20; ) {
          const hit = e.scanHexchain(lo, 100_000, t0);
          if (hit < 0) break;
          hits.push(lo + hit);
          lo = lo + hit + 1;
        }
        const bswap = (v: number) =>
          ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);
        const run = (conv: boolean) => {
          mem.fill(0, layout.x, layout.z);
          const stride = conv ? 72 : 64;
          const at = conv ? layout.x + stride + 1 : layout.x;
          for (let r = 0; r < 64; r++) mem.set(input.slice(r * 64, r * 64 + 64), at + r * stride);
          seed.forEach((v, i) => {
            words[(layout.seed >> 2) + i] = bswap(v);
          });
          e.expandWeights(conv ? 3 : 128);
          if (conv) e.macConv(64, 8, 0);
          else e.macMatmul(64, 0);
          return Array.from(words.subarray(layout.z >> 2, (layout.z >> 2) + (conv ? 8 : 1) * 64 * 64));
        };
        const zm = run(false);
        const zc = run(true);
        e.postStats(zc.length);
        const lanes = Array.from(words.subarray(post.stats >> 2, (post.stats >> 2) + 8));
        const bits = e.postFired(zc.length, below);
        const fired = Array.from(new Uint8Array(e.memory.buffer, post.fired, zc.length / 8));
        return { simd, hits, z: zm, zConv: zc, lanes, bits, fired };
      },
      {
        base64: WASM_BASE64,
        params: Array.from(params),
        t0,
        seed,
        input,
        layout: MAC_LAYOUT,
        hexParams: HEXCHAIN_PARAMS,
        post: POST_LAYOUT,
        below: Math.floor(below),
      },
    );
    await page.close();

    expect(inBrowser.simd).toBe(true);
    expect(hits.length).toBeGreaterThan(5);
    expect(inBrowser.hits).toEqual(hits);
    expect(inBrowser.z).toEqual(Array.from(z));
    expect(inBrowser.zConv).toEqual(Array.from(zConv));
    expect(inBrowser.lanes).toEqual(Array.from(lanes));
    expect(inBrowser.bits).toBe(bits);
    expect(inBrowser.fired).toEqual(Array.from(fired));
  });
});
