/**
 * mml_score: the minimum-message-length (description length) of the neural path, that is of
 * the bitmap of neurons that fired (pre-activation A[i] > 0), under one fixed integer code,
 * as a ratio to its raw size (one bit per neuron), in Q16 fixed point (value / 65536).
 *
 * The code is a run-length code: one bit for the value of the first bit, then the length L of
 * every maximal run of equal bits, in order, each as an Elias-gamma code of L:
 * 2 * floor(log2(L)) + 1 bits.
 *   bits  = 1 + sum over runs of (2 * floor(log2(L)) + 1)
 *   score = min(65536, floor(bits * 65536 / count))
 * A sparse or dense pattern (long runs) describes in few bits and scores low; an even, noisy
 * pattern scores 65536 (ratio 1, capped). The pattern is taken before the activation
 * function, so the score has the same distribution for relu, sigmoid and tanh challenges.
 * The score is an integer, exact everywhere; on the wire it travels as the JSON number
 * score / 65536, which every binary64 parser reads back exactly.
 */
export const MML_ONE_Q16 = 65536;

/**
 * The score of a bitmap of `count` bits packed least-significant bit first. The runs are
 * found 32 bits at a time: a bit that differs from the one before it starts a run, so the set
 * bits of v XOR (v << 1 | the previous word's last bit) are the runs' starts in that word
 * (mml.test.ts compares it with the bit-by-bit definition).
 */
export function mmlScoreQ16(bitmap: Uint8Array, count: number): number {
  let bits = 1;
  let start = 0; // where the current run began
  let carry = bitmap[0]! & 1; // the bit before the word: the first bit starts no new run
  for (let base = 0; base < count; base += 32) {
    const k = base >> 3;
    const v =
      (bitmap[k] ?? 0) |
      ((bitmap[k + 1] ?? 0) << 8) |
      ((bitmap[k + 2] ?? 0) << 16) |
      ((bitmap[k + 3] ?? 0) << 24);
    let starts = v ^ ((v << 1) | carry);
    if (count - base < 32) starts &= (1 << (count - base)) - 1;
    carry = v >>> 31;
    while (starts !== 0) {
      const at = base + 31 - Math.clz32(starts & -starts);
      bits += 2 * floorLog2(at - start) + 1;
      start = at;
      starts &= starts - 1;
    }
  }
  bits += 2 * floorLog2(count - start) + 1;
  return mmlScoreFromBits(bits, count);
}

/** The score of a description length of `bits` for `count` neurons: min(65536, floor(bits * 65536 / count)). */
export function mmlScoreFromBits(bits: number, count: number): number {
  const scaled = bits * MML_ONE_Q16;
  const score = (scaled - (scaled % count)) / count;
  return Math.min(score, MML_ONE_Q16);
}

/** floor(log2(v)) for 1 <= v < 2^31. */
export function floorLog2(v: number): number {
  return 31 - Math.clz32(v);
}

/** The wire number for a Q16 score: exactly q16 / 65536. */
export function q16ToNumber(q16: number): number {
  return q16 / MML_ONE_Q16;
}

/**
 * The Q16 integer for a wire number, or undefined when the number is not an exact multiple of
 * 1/65536 in [0, 1] (multiplying a binary64 by 2^16 is exact, so the test is exact).
 */
export function numberToQ16(value: number): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) return undefined;
  const q = value * MML_ONE_Q16;
  return Number.isInteger(q) ? q : undefined;
}
