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

/** v4.0 tensor cases: by iterations per case, then by case name. */
export const TENSOR_REFERENCE: Readonly<Record<number, Readonly<Record<string, string>>>> = {
  4096: {
    'tensor native matmul 64x64': 'e3bce9ca8732bdf6cbbf9beef9a87cd25cf0ecf3b50a59058ce4b1120df34a03',
    'tensor native conv 8x64x64': '4003cdffadac06e5e966b1a361ca22b3e3d82c07e77b323e40fbfafbdbba9a29',
    'tensor esp32 matmul 32x32': '1cb40afaf61a22b117f1e8857de548bfc28d3fbdd19216ccf9fa93d0eab8ddb3',
    'tensor esp32 conv 4x32x32': '2a7c5b8cef70cb864db38cf32381f6d4305994ccca6ad4651d69c76c35b7dca0',
    'tensor esp8266 matmul 16x16': 'e27ab954419cf6be4f79af25344a9e431b9f40fbbc309835d772b4212bfb9ad6',
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
