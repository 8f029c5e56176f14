/*
 * tm_native_cpu.c: what the CPU offers, and the library's own known-answer test. See
 * tm_native.h. Compiled without the kernels' target: safe to call on any x86-64 CPU.
 */
#include <cpuid.h>

#include "sha256.h"
#include "tm_native.h"
#include "tm_native_sha.h"
#include "tm_selftest.h"

#ifndef bit_SHA
#define bit_SHA (1u << 29)
#endif
#ifndef bit_AVX2
#define bit_AVX2 (1u << 5)
#endif

int32_t tm_native_abi(void) { return TM_NATIVE_ABI; }

uint32_t tm_native_cpu_features(void) {
  unsigned int a = 0, b = 0, c = 0, d = 0;
  uint32_t features = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  if (c & bit_SSSE3) features |= TM_NATIVE_SSSE3;
  if (c & bit_SSE4_1) features |= TM_NATIVE_SSE41;
  if ((c & bit_OSXSAVE) && (c & bit_AVX)) {
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 6u) == 6u) features |= TM_NATIVE_AVX; /* XMM and YMM state saved by the OS */
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if ((features & TM_NATIVE_AVX) && (b & bit_AVX2)) features |= TM_NATIVE_AVX2;
    if (b & bit_SHA) features |= TM_NATIVE_SHA;
  }
  return features;
}

/* A deterministic byte stream for the comparisons (xorshift32). */
static uint32_t next_random(uint32_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 17;
  *x ^= *x << 5;
  return *x;
}

/* The SHA-NI compression of `blocks` blocks against the core's portable one. */
TMN_TARGET static int32_t compare_compressions(const uint8_t *data, uint32_t blocks, const uint32_t start[8]) {
  uint32_t portable[8], native[8], i, b;
  tmn_state h = tmn_from_words(start);
  for (i = 0; i < 8; i++) portable[i] = start[i];
  for (b = 0; b < blocks; b++) tm_sha256_compress(portable, data + 64 * b);
  tmn_blocks(&h, data, blocks);
  tmn_to_words(h, native);
  for (i = 0; i < 8; i++) {
    if (native[i] != portable[i]) return 0;
  }
  return 1;
}

int32_t tm_native_self_test(void) {
  int32_t scratch_words[TM_SELFTEST_SCRATCH_WORDS];
  int8_t input[TM_SELFTEST_INPUT_BYTES];
  const tm_scratch scratch = {scratch_words, TM_SELFTEST_SCRATCH_WORDS};
  uint8_t data[4 * 64];
  uint32_t start[8], seed = 0x2545f491u, round, i;
  int32_t rc = tm_self_test(&scratch, input);
  if (rc != TM_OK) return rc;
  for (round = 0; round < 16; round++) {
    for (i = 0; i < sizeof data; i++) data[i] = (uint8_t)next_random(&seed);
    for (i = 0; i < 8; i++) start[i] = round == 0 ? tm_sha256_iv[i] : next_random(&seed);
    if (!compare_compressions(data, 1 + round % 4, start)) return 10;
  }
  return TM_OK;
}
