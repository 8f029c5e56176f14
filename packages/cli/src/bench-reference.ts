/**
 * The published checksums of `miner bench` (xmrig's `--bench` verification): for an amount,
 * every correct kernel on every machine and thread count gives these. `miner bench` prints
 * `checksum ok` or `MISMATCH` against them (and exits 1 on a mismatch); amounts without a
 * reference print the checksum only. Regenerate after a consensus change with
 * `miner bench --json` at each amount (and review why they changed: they must not, otherwise).
 */

/** Hexchain case: by number of hashes. */
export const HEXCHAIN_REFERENCE: Readonly<Record<number, string>> = {
  1000000: '5b10def4d3513f0241e225050f11af05e033d4e9e0b57cd8076191099161fd1b',
  4194304: 'a058bc50a9d39b7e9a9a6421a9cc1dfcaea3f31a0e3f52bfd56ea119b7aec824',
};

/** v4.0 tensor cases (rule set 2: the accumulator fold): by iterations per case, then by case name. */
export const TENSOR_REFERENCE: Readonly<Record<number, Readonly<Record<string, string>>>> = {
  4096: {
    'tensor native matmul 64x64': '25eeab3ae7cbe9eba3bdd34bd533dd8ce9d96fbf1176bcd846d5235314f0bb4d',
    'tensor native conv 8x64x64': 'b3563396a2efa7102a64ac44065a4a8f256359c941a36d04efeec702f16a9ced',
    'tensor esp32 matmul 32x32': '50ea434cb8812925a1c3531236d097e3b7dff8ffa3f2e376ffb7347eeece6ee5',
    'tensor esp32 conv 4x32x32': '1b824da0047bbaf9b1d22d4e6a74cd8361984d042845edc2dd5dc6af5bb9d502',
    'tensor esp8266 matmul 16x16': '2690dd0424bade0fe918f1c9788e8abbdb7ce9a4b914282c920735042c4d0faa',
  },
};

/** The reference checksum of a bench case at these amounts, if one is published. */
export function referenceChecksum(
  caseName: string,
  amounts: { hexchainHashes: number; tensorIterations: number },
): string | undefined {
  if (caseName === 'hexchain') return HEXCHAIN_REFERENCE[amounts.hexchainHashes];
  return TENSOR_REFERENCE[amounts.tensorIterations]?.[caseName];
}
