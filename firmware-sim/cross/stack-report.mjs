#!/usr/bin/env node
/**
 * Code size, static RAM and worst-case stack of the core per cross target, as a Markdown
 * table (make cross-report; the figures in README.md come from it).
 *
 *   node cross/stack-report.mjs <build dir>
 *
 * - Code: the bytes of the core's own input sections (build/<target>/core/*.o) that the linker
 *   kept in the firmware-shaped image (cross/tm_image.c), from its link map: text and read-only
 *   data, what the board's flash holds for the core.
 * - Static RAM: .data + .bss of the image (the device state, the result store, the scratch and
 *   X for the target's largest tensor; the core itself has no globals).
 * - Stack: the deepest path of each entry point through gcc's call graph (-fcallgraph-info=su:
 *   per-function frames from -fstack-usage, and the direct calls). The core has no recursion.
 *   The receiver's frame handler (a pointer from tm_device_feed) is followed; a call through
 *   the board's callbacks (write, crc32, sha_port) counts 0 bytes beyond the call: add the
 *   port's own; a call to a function outside the core (memcpy, the
 *   libgcc helpers) counts 0 too, both are leaf functions with small frames.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const build = process.argv[2] ?? 'build';
const targets = [
  { dir: 'rv32', name: 'rv32imc (ESP32-C3 ISA), gcc -O2', device: 'esp32: N = 32, F = 4' },
  { dir: 'lx106', name: 'Xtensa LX106 (ESP8266), gcc -O2', device: 'esp8266: N = 16' },
];
const entries = [
  'tm_device_poll',
  'tm_device_feed',
  'tm_device_boot',
  'tm_search_tensor',
  'tm_compute_work',
  'tm_search_block',
  'tm_search_block_port',
  'tm_self_test',
  // the board on the network (its socket seam counts 0 bytes beyond the call, like the callbacks)
  'tm_board_step',
  'tm_board_serve',
  'tm_ed25519_sign',
  'tm_ed25519_verify',
];

function callGraph(dir) {
  const frames = new Map();
  const edges = new Map();
  const files = readdirSync(join(dir, 'core'))
    .filter((f) => f.endsWith('.ci'))
    .map((f) => join(dir, 'core', f));
  for (const file of files) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const node = /^node: \{ title: "([^"]+)" label: "[^"]*\\n(\d+) bytes \((static|dynamic[^)]*)\)"/.exec(
        line,
      );
      if (node) {
        if (node[3] !== 'static') throw new Error(`${node[1]}: a dynamic stack frame (${node[3]})`);
        frames.set(node[1], Number(node[2]));
      }
      const edge = /^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"/.exec(line);
      if (edge) {
        if (!edges.has(edge[1])) edges.set(edge[1], new Set());
        edges.get(edge[1]).add(edge[2]);
      }
    }
  }
  // The one call through a pointer inside the core: the receiver hands each frame to the
  // device's handler (tm_device_feed passes on_frame to tm_rx_feed).
  for (const [fn, callees] of edges) {
    if (/(^|:)rx_process$|^tm_rx_feed$/.test(fn) && callees.has('__indirect_call')) {
      for (const name of frames.keys()) if (name.endsWith('tm_proto.c:on_frame')) callees.add(name);
    }
  }
  const memo = new Map();
  const deepest = (fn, seen = new Set()) => {
    if (memo.has(fn)) return memo.get(fn);
    if (seen.has(fn)) throw new Error(`recursion through ${fn}`);
    seen.add(fn);
    let best = { bytes: 0, path: [] };
    for (const callee of edges.get(fn) ?? []) {
      const d = deepest(callee, seen);
      if (d.bytes > best.bytes) best = d;
    }
    seen.delete(fn);
    const own = frames.get(fn) ?? 0;
    const result = { bytes: own + best.bytes, path: frames.has(fn) ? [fn, ...best.path] : best.path };
    memo.set(fn, result);
    return result;
  };
  return deepest;
}

function imageSizes(dir) {
  const map = readFileSync(join(dir, 'tm-image.elf.map'), 'utf8');
  // Sections kept in the output: " .text.name  0xADDR  0xSIZE  path" (possibly wrapped after the name).
  const re = /^ (\.[\w.$]+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)/gm;
  const flat = map.replace(/^ (\.[\w.$]+)\n\s+0x/gm, ' $1 0x');
  const memoryMap = flat.indexOf('Linker script and memory map');
  const kept = flat.slice(Math.max(memoryMap, 0));
  let code = 0;
  let ram = 0;
  for (const m of kept.matchAll(re)) {
    const [, section, , size, file] = m;
    const bytes = Number.parseInt(size, 16);
    if (
      section.startsWith('.bss') ||
      section.startsWith('.sbss') ||
      section.startsWith('.data') ||
      section.startsWith('.sdata')
    ) {
      ram += bytes;
    } else if (
      file.includes('/core/') &&
      (section.startsWith('.text') ||
        section.startsWith('.rodata') ||
        section.startsWith('.srodata') ||
        section.startsWith('.literal'))
    ) {
      code += bytes;
    }
  }
  return { code, ram };
}

const rows = [];
const stackRows = [];
for (const t of targets) {
  const dir = join(build, t.dir);
  const { code, ram } = imageSizes(dir);
  const deepest = callGraph(dir);
  rows.push(`| ${t.name} | ${code.toLocaleString('en-US')} | ${ram.toLocaleString('en-US')} (${t.device}) |`);
  for (const e of entries) {
    const d = deepest(e);
    stackRows.push({ target: t.dir, entry: e, bytes: d.bytes, path: d.path.join(' > ') });
  }
}

const out = [];
out.push(
  '| Target | Core code in the image (text + rodata, bytes) | Static RAM of the image (data + bss, bytes) |',
);
out.push('|---|---|---|');
out.push(...rows);
out.push('');
out.push(
  '| Entry point | Worst-case stack rv32imc (bytes) | Worst-case stack LX106 (bytes) | Deepest path (rv32imc) |',
);
out.push('|---|---|---|---|');
for (const e of entries) {
  const rv = stackRows.find((r) => r.target === 'rv32' && r.entry === e);
  const lx = stackRows.find((r) => r.target === 'lx106' && r.entry === e);
  out.push(`| \`${e}\` | ${rv.bytes} | ${lx.bytes} | ${rv.path} |`);
}
process.stdout.write(`${out.join('\n')}\n`);
