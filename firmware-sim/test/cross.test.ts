/**
 * The core on the boards' instruction sets: the vector suite bare metal on rv32imc (the
 * ESP32-C3's ISA) under qemu-system-riscv32 with semihosting, every case bit for bit, and the
 * ESP8266 (Xtensa LX106) build with warnings as errors. `.ci/run` installs the toolchains
 * (gcc-riscv64-unknown-elf, picolibc-riscv64-unknown-elf, qemu-system-misc, gcc-xtensa-lx106,
 * picolibc-xtensa-lx106-elf); without them these tests are skipped outside CI, and fail in CI.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packageDir } from './driver.ts';

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const rv32 = has('riscv64-unknown-elf-gcc') && has('qemu-system-riscv32');
const lx106 = has('xtensa-lx106-elf-gcc');
const inCi = process.env.CI === 'true';
const make = (target: string) =>
  execFileSync('make', ['-s', target], {
    cwd: packageDir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

if (!(rv32 && lx106) && !inCi) {
  console.warn(
    'firmware-sim cross tests skipped: apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf ' +
      'qemu-system-misc gcc-xtensa-lx106 picolibc-xtensa-lx106-elf',
  );
}

describe.skipIf(!rv32 && !inCi)('rv32imc, bare metal under qemu-system-riscv32', () => {
  it('reproduces every vector case bit for bit and passes the self-test', () => {
    const out = make('rv32-test');
    expect(out).toMatch(/^tm-selftest: core \d+\.\d+\.\d+ ok/m);
    const summary =
      /tm-vectors-bare: core \S+ on rv32imc \(qemu virt\): (\d+) of (\d+) vector cases bit for bit, self-test ok/.exec(
        out,
      );
    expect(summary, out).not.toBeNull();
    expect(Number(summary![1])).toBe(Number(summary![2]));
    expect(Number(summary![2])).toBeGreaterThan(700);
    expect(out).not.toMatch(/^FAIL/m);
  });

  it('counts the instructions per nonce of each search (qemu -icount, minstret)', () => {
    const out = make('rv32-icount');
    for (const name of [
      'hexchain-block',
      'hexchain-block-port',
      'tensor-esp32-matmul-32',
      'tensor-esp8266-matmul-16',
    ]) {
      const m = new RegExp(
        `^icount ${name} nonces=(\\d+) instructions=(\\d+) per_nonce=([\\d.]+)$`,
        'm',
      ).exec(out);
      expect(m, `${name} in ${out}`).not.toBeNull();
      expect(Number(m![3])).toBeGreaterThan(1000);
    }
    for (const name of ['ed25519-sign', 'ed25519-verify']) {
      const m = new RegExp(`^icount ${name} signatures=1 instructions=(\\d+)`, 'm').exec(out);
      expect(m, `${name} in ${out}`).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(100_000);
    }
    expect(out).toMatch(/^icount ed25519-verify .* valid=1$/m);
  });
});

describe.skipIf(!lx106 && !inCi)('Xtensa LX106 (ESP8266)', () => {
  it('builds the core and a firmware-shaped image with -Werror, and reports size and stack', () => {
    make('lx106');
    const report = make('cross-report');
    expect(report).toMatch(/\| Xtensa LX106 \(ESP8266\), gcc -O2 \| [\d,]+ \| [\d,]+/);
    expect(report).toMatch(/\| `tm_device_poll` \| \d+ \| \d+ \|/);
    expect(report).toMatch(/\| `tm_board_step` \| \d+ \| \d+ \|/);
    expect(report).toMatch(/\| `tm_ed25519_sign` \| \d+ \| \d+ \|/);
  });
});

describe('the Arduino sketch (Espressif toolchains cannot be installed here)', () => {
  it('compiles as C++ against stubs of the Arduino-ESP32 API, serial and Wi-Fi modes, and the lwIP port', () => {
    expect(make('sketch-check')).toMatch(
      /sketch-check: serial and Wi-Fi modes and the lwIP socket port compile/,
    );
  });
});
