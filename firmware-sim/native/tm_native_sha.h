/*
 * tm_native_sha.h: SHA-256 compressions on the x86 SHA extensions (SHA-NI), for the native
 * kernels (internal: static inline functions, compiled for the kernels' target).
 *
 * The state is kept as the extensions want it: two vectors, ABEF (a in the highest lane) and
 * CDGH. A message group is 4 schedule words W[4g..4g+3], W[4g] in the lowest lane; group g
 * runs rounds 4g..4g+3 with two SHA256RNDS2. Groups 4..15 come from the four before through
 * SHA256MSG1 / SHA256MSG2 (FIPS 180-4 6.2.2 step 1). The round constants and the initial
 * state are the core's (tm_sha256_k, tm_sha256_iv).
 *
 * The searches compress several independent blocks at once (`lanes`), so that the latency of
 * one SHA256RNDS2 chain is hidden behind the others, and start from a state already advanced
 * over the groups that do not depend on the nonce (`first` > 0).
 */
#ifndef TM_NATIVE_SHA_H
#define TM_NATIVE_SHA_H

#include <immintrin.h>
#include <stdint.h>

#include "sha256.h"

#define TMN_TARGET __attribute__((target("sse4.1,ssse3,sha,avx2")))
#define TMN_INLINE static inline __attribute__((always_inline)) TMN_TARGET

/* Most blocks compressed side by side. */
#define TMN_MAX_LANES 4

typedef struct {
  __m128i abef;
  __m128i cdgh;
} tmn_state;

/* The round constants of group g. */
TMN_INLINE __m128i tmn_k(uint32_t g) { return _mm_loadu_si128((const __m128i *)(const void *)(tm_sha256_k + 4 * g)); }

/* h[0..7] (FIPS order) to ABEF / CDGH. */
TMN_INLINE tmn_state tmn_from_words(const uint32_t h[8]) {
  tmn_state s;
  __m128i dcba = _mm_loadu_si128((const __m128i *)(const void *)h);
  __m128i hgfe = _mm_loadu_si128((const __m128i *)(const void *)(h + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  s.abef = _mm_alignr_epi8(cdab, efgh, 8);
  s.cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  return s;
}

/* ABEF / CDGH to h[0..7]. */
TMN_INLINE void tmn_to_words(tmn_state s, uint32_t h[8]) {
  __m128i feba = _mm_shuffle_epi32(s.abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(s.cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)(void *)h, _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)(void *)(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}

/* The digest bytes (big-endian words) of a state. */
TMN_INLINE void tmn_to_bytes(tmn_state s, uint8_t out[32]) {
  const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i feba = _mm_shuffle_epi32(s.abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(s.cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)(void *)out, _mm_shuffle_epi8(_mm_blend_epi16(feba, dchg, 0xF0), bswap));
  _mm_storeu_si128((__m128i *)(void *)(out + 16), _mm_shuffle_epi8(_mm_alignr_epi8(dchg, feba, 8), bswap));
}

/* Digest word 0 (a) of a state. */
TMN_INLINE uint32_t tmn_word0(tmn_state s) { return (uint32_t)_mm_extract_epi32(s.abef, 3); }
/* Digest word 1 (b). */
TMN_INLINE uint32_t tmn_word1(tmn_state s) { return (uint32_t)_mm_extract_epi32(s.abef, 2); }

/* Four rounds of group g with message group m. */
TMN_INLINE void tmn_group(tmn_state *s, __m128i m, uint32_t g) {
  __m128i wk = _mm_add_epi32(m, tmn_k(g));
  s->cdgh = _mm_sha256rnds2_epu32(s->cdgh, s->abef, wk);
  wk = _mm_shuffle_epi32(wk, 0x0E);
  s->abef = _mm_sha256rnds2_epu32(s->abef, s->cdgh, wk);
}

/* The next message group from the four before it (oldest first). */
TMN_INLINE __m128i tmn_schedule(__m128i m0, __m128i m1, __m128i m2, __m128i m3) {
  return _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(m0, m1), _mm_alignr_epi8(m3, m2, 4)), m3);
}

/*
 * Rounds 4 * first .. 63 of `lanes` independent blocks, side by side. m[l][0..3] hold the
 * block's message groups 0..3 (all four are needed for the schedule, whatever `first` is);
 * they are overwritten. s[l] is the state after group first - 1 (or the chaining value when
 * first is 0); the caller adds the chaining value afterwards. `lanes` and `first` are
 * constants at every call, so the loops unroll into straight-line code.
 */
TMN_INLINE void tmn_rounds(tmn_state *s, __m128i (*m)[4], uint32_t lanes, uint32_t first) {
  uint32_t g, l;
#pragma GCC unroll 16
  for (g = first; g < 16; g++) {
#pragma GCC unroll 4
    for (l = 0; l < lanes; l++) {
      if (g >= 4) m[l][g & 3] = tmn_schedule(m[l][g & 3], m[l][(g + 1) & 3], m[l][(g + 2) & 3], m[l][(g + 3) & 3]);
      tmn_group(&s[l], m[l][g & 3], g);
    }
  }
}

/* state += chaining value (the feed-forward), both as ABEF / CDGH. */
TMN_INLINE void tmn_add(tmn_state *s, tmn_state h) {
  s->abef = _mm_add_epi32(s->abef, h.abef);
  s->cdgh = _mm_add_epi32(s->cdgh, h.cdgh);
}

/* A message group from 16 bytes read big-endian. */
TMN_INLINE __m128i tmn_load_be(const uint8_t *p) {
  const __m128i bswap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), bswap);
}

/* Compresses `blocks` consecutive 64-byte blocks into h (one chain). */
TMN_INLINE void tmn_blocks(tmn_state *h, const uint8_t *data, uint32_t blocks) {
  uint32_t b;
  for (b = 0; b < blocks; b++) {
    __m128i m[1][4];
    tmn_state s = *h;
    m[0][0] = tmn_load_be(data + 64 * b);
    m[0][1] = tmn_load_be(data + 64 * b + 16);
    m[0][2] = tmn_load_be(data + 64 * b + 32);
    m[0][3] = tmn_load_be(data + 64 * b + 48);
    tmn_rounds(&s, m, 1, 0);
    tmn_add(&s, *h);
    *h = s;
  }
}

#endif
