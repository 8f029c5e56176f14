/*
 * tm_native_hexchain.c: the v4.1 hexchain nonce scan on SHA-NI. See tm_native.h.
 *
 * Per nonce, one compression of the header's second block from the midstate (as
 * tm_search_block). Its message groups are
 *   0: header bytes 64..80 (fixed for the job)
 *   1: the nonce's low word, its high word, 0x80000000, 0
 *   2: zeros;  3: zeros and the length, 704 bits
 * so rounds 0..3 are the same for every nonce: they run once per call, and each nonce runs
 * rounds 4..63. TMN_HEX_LANES nonces are compressed side by side.
 */
#include "tm_hexchain.h"
#include "tm_native.h"
#include "tm_native_sha.h"

#ifndef TMN_HEX_LANES
#define TMN_HEX_LANES 2u
#endif

#define TMN_HEX_MAX_COUNT 0x40000000u

typedef struct {
  tmn_state mid;    /* the midstate (the chaining value of the second block) */
  tmn_state after0; /* the state after rounds 0..3 of the second block */
  __m128i m0, m1, m3;
  uint32_t mid_a; /* word 0 of the midstate */
} hex_job;

static uint32_t bswap32(uint32_t v) {
  return (v << 24) | ((v & 0xff00u) << 8) | ((v >> 8) & 0xff00u) | (v >> 24);
}

TMN_INLINE void hex_prepare(const uint32_t p[13], hex_job *j) {
  j->mid = tmn_from_words(p);
  j->mid_a = p[0];
  j->m0 = _mm_loadu_si128((const __m128i *)(const void *)(p + 8));
  j->m1 = _mm_set_epi32(0, (int32_t)0x80000000u, (int32_t)p[12], 0);
  j->m3 = _mm_set_epi32((int32_t)(TM_HEX_HEADER_BYTES * 8u), 0, 0, 0);
  j->after0 = j->mid;
  tmn_group(&j->after0, j->m0, 0);
}

/* Rounds 4..63 of `lanes` nonces from lo; their states, without the feed-forward. */
TMN_INLINE void hex_lanes(const hex_job *j, uint32_t lo, tmn_state *s, uint32_t lanes) {
  __m128i m[TMN_MAX_LANES][4];
  uint32_t l;
  for (l = 0; l < lanes; l++) {
    s[l] = j->after0;
    m[l][0] = j->m0;
    m[l][1] = _mm_insert_epi32(j->m1, (int32_t)bswap32(lo + l), 0);
    m[l][2] = _mm_setzero_si128();
    m[l][3] = j->m3;
  }
  tmn_rounds(s, m, lanes, 1);
}

TMN_TARGET int32_t tm_native_hex_scan(const uint32_t params[13], uint32_t lo_start, uint32_t count, uint32_t t0) {
  hex_job j;
  uint32_t i = 0, l;
  if (count > TMN_HEX_MAX_COUNT) count = TMN_HEX_MAX_COUNT;
  hex_prepare(params, &j);
  for (; i + TMN_HEX_LANES <= count; i += TMN_HEX_LANES) {
    tmn_state s[TMN_HEX_LANES];
    hex_lanes(&j, lo_start + i, s, TMN_HEX_LANES);
    for (l = 0; l < TMN_HEX_LANES; l++) {
      if (tmn_word0(s[l]) + j.mid_a <= t0) return (int32_t)(i + l);
    }
  }
  for (; i < count; i++) {
    tmn_state s[1];
    hex_lanes(&j, lo_start + i, s, 1);
    if (tmn_word0(s[0]) + j.mid_a <= t0) return (int32_t)i;
  }
  return -1;
}

TMN_TARGET void tm_native_hex_hash(const uint32_t params[13], uint32_t lo, uint32_t out[8]) {
  hex_job j;
  tmn_state s[1];
  hex_prepare(params, &j);
  hex_lanes(&j, lo, s, 1);
  tmn_add(&s[0], j.mid);
  tmn_to_words(s[0], out);
}
