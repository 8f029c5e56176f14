/*
 * tm_native_tensor.c: the v4.0 tensor search on SHA-NI and AVX2. See tm_native.h and, for the
 * definitions, core/tm_tensor.h and docs/protocol.md section 3.
 *
 * One nonce, as tm_search_tensor does it (the same integers, another order of work):
 *   - seed: one compression of the seed message's second block from its midstate;
 *   - weights: expand(seed, ...), one compression per 32 bytes; the blocks share the seed as
 *     message words 0..7, so rounds 0..7 run once per nonce and TMN_EXPAND_LANES blocks are
 *     compressed side by side from there;
 *   - accumulators: int8 x int8 products summed exactly in int32 with VPMADDWD (two products
 *     per 32-bit lane; both operands widened to int16). matmul: the input's row pairs are
 *     precomputed per task as (X[i][2k], X[i][2k+1]) and broadcast, the weights' row pairs
 *     interleaved per nonce, 2 rows x 4 blocks of 8 columns at a time. conv: the nine taps in
 *     five pairs; the input's pairs of shifted windows are precomputed per task (zero border),
 *     the filter's tap pairs broadcast per nonce;
 *   - one pass over Z: the fold (its 8 lanes are one AVX2 vector), sum, minimum and maximum;
 *   - the accumulator hash (one block), the bias and the normalisation parameters;
 *   - the fired bitmap, 8 neurons per compare-and-movemask, written in place into the path
 *     message, then the path signature and its distance;
 *   - the MML score only when the distance passes, from the bitmap's run ends (64 bits per
 *     word, one step per run).
 */
#include <string.h>

#include "tm_native.h"
#include "tm_native_sha.h"
#include "tm_tensor.h"

#ifndef TMN_EXPAND_LANES
#define TMN_EXPAND_LANES 4u
#endif

#define TMN_TENSOR_MAGIC 0x544d4e31u /* "TMN1" */
#define TMN_ALIGN 64u
#define TMN_PATH_PREFIX 12u /* "PTM4r2/path" || 0x00 */
#define TMN_CONV_PAIRS 5u   /* the nine taps in pairs, the last with a zero */

/* The task, at the start of the caller's buffer (aligned); the arrays follow at the offsets. */
typedef struct {
  uint32_t magic;
  uint32_t bytes;
  uint32_t operation, dim, filters;
  uint32_t count;        /* outputs: N * N or F * N * N */
  uint32_t weight_bytes; /* N * N or 9 * F */
  uint32_t expand_blocks;
  uint32_t nb;      /* blocks of 8 columns: ceil(N / 8) */
  uint32_t zstride; /* 8 * nb */
  uint32_t rows;    /* rows of Z computed: matmul N rounded up to even, conv F * N */
  uint32_t kp;      /* matmul: pairs of k, ceil(N / 2) */
  uint32_t fired_bytes;
  uint32_t path_blocks;
  uint32_t acc_lanes_at; /* where the fold lanes go in the accumulator message */
  uint32_t path_t0, path_t1;
  uint32_t off_xp, off_w, off_zero, off_b, off_z, off_path;
  uint32_t seed_mid[8];
  uint8_t seed_block[64]; /* the seed message's second block, padded; the nonce at [10, 18) */
  uint8_t acc_block[64];  /* the accumulator message, padded; the lanes at acc_lanes_at */
  uint8_t path_target[8];
} tmn_tensor;

static uint32_t round_up(uint32_t v, uint32_t to) { return (v + to - 1u) / to * to; }

static uint8_t *aligned(void *state) {
  return (uint8_t *)(((uintptr_t)state + (TMN_ALIGN - 1u)) & ~(uintptr_t)(TMN_ALIGN - 1u));
}

static uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static uint32_t bswap32(uint32_t v) {
  return (v << 24) | ((v & 0xff00u) << 8) | ((v >> 8) & 0xff00u) | (v >> 24);
}

/* int32 lane holding two int16: lo in the low half, hi in the high half. */
static int32_t pair16(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)hi << 16) | ((uint32_t)lo & 0xffffu));
}

/* Lays out the offsets of a task in t; returns the bytes the caller's buffer needs. */
static uint32_t layout(tmn_tensor *t, uint32_t operation, uint32_t dim, uint32_t filters) {
  const uint32_t n = dim;
  uint32_t at = round_up((uint32_t)sizeof(tmn_tensor), TMN_ALIGN), path_len;
  if (dim < TM_MIN_TENSOR_DIM || dim > TM_MAX_TENSOR_DIM) return 0;
  if (operation != TM_OP_MATMUL && operation != TM_OP_CONV) return 0;
  if (operation == TM_OP_CONV && (filters < 1 || filters > TM_MAX_CONV_FILTERS)) return 0;
  if (operation == TM_OP_MATMUL) filters = 0;
  t->operation = operation;
  t->dim = n;
  t->filters = filters;
  t->count = operation == TM_OP_CONV ? filters * n * n : n * n;
  t->weight_bytes = operation == TM_OP_CONV ? 9u * filters : n * n;
  t->expand_blocks = (t->weight_bytes + 31u) / 32u;
  t->nb = (n + 7u) / 8u;
  t->zstride = 8u * t->nb;
  t->kp = (n + 1u) / 2u;
  t->rows = operation == TM_OP_CONV ? filters * n : n + (n & 1u);
  t->fired_bytes = (t->count + 7u) / 8u;
  path_len = TMN_PATH_PREFIX + 32u + t->fired_bytes;
  t->path_blocks = (path_len + 9u + 63u) / 64u;
  t->acc_lanes_at = operation == TM_OP_CONV ? 18u : 16u;
  /* matmul: (N rounded to even) rows x kp pairs; conv: N rows x nb blocks x 5 pair vectors */
  t->off_xp = at;
  at += round_up(operation == TM_OP_CONV ? n * t->nb * TMN_CONV_PAIRS * 32u : t->rows * t->kp * 4u, TMN_ALIGN);
  t->off_w = at; /* the expanded weights, plus room for 16-byte reads past the last row */
  at += round_up(32u * t->expand_blocks + 64u, TMN_ALIGN);
  t->off_zero = at; /* a zero row (odd N) */
  at += 64u;
  t->off_b = at; /* matmul: kp x nb interleaved vectors; conv: F x 5 broadcast pairs */
  at += round_up(operation == TM_OP_CONV ? filters * TMN_CONV_PAIRS * 32u : t->kp * t->nb * 32u, TMN_ALIGN);
  t->off_z = at;
  at += round_up(t->rows * t->zstride * 4u + 32u, TMN_ALIGN);
  t->off_path = at;
  at += round_up(64u * t->path_blocks + 64u, TMN_ALIGN);
  return at + TMN_ALIGN; /* the slack to align the caller's buffer */
}

uint32_t tm_native_tensor_bytes(uint32_t operation, uint32_t dim, uint32_t filters) {
  tmn_tensor t;
  return layout(&t, operation, dim, filters);
}

int32_t tm_native_tensor_init(void *state, uint32_t bytes, const uint8_t challenge_hash[32], const uint8_t pubkey[32],
                              uint32_t operation, uint32_t dim, uint32_t filters, const int8_t *input,
                              const uint8_t path_target[8]) {
  tmn_tensor *t;
  uint8_t *base;
  uint32_t need, i, j, n = dim;
  tm_sha256_ctx seed;
  if (state == 0 || challenge_hash == 0 || pubkey == 0 || input == 0 || path_target == 0) return TM_ERR_ARGUMENT;
  base = aligned(state);
  t = (tmn_tensor *)(void *)base;
  memset(t, 0, sizeof *t);
  need = layout(t, operation, dim, filters);
  if (need == 0) return TM_ERR_ARGUMENT;
  if (bytes < need) return TM_ERR_SCRATCH;
  memset(base + sizeof *t, 0, need - TMN_ALIGN - (uint32_t)sizeof *t);
  t->bytes = need;

  /* seed = taggedHash("PTM4/work", C || K || u64le(nonce)): 82 bytes; block 0 is fixed. */
  tm_tagged_init(&seed, "PTM4/work");
  tm_sha256_update(&seed, challenge_hash, 32);
  tm_sha256_update(&seed, pubkey, 32);
  for (i = 0; i < 8; i++) t->seed_mid[i] = seed.h[i];
  for (i = 0; i < seed.block_used; i++) t->seed_block[i] = seed.block[i]; /* key bytes 22..32 */
  t->seed_block[18] = 0x80;
  t->seed_block[62] = (uint8_t)((82u * 8u) >> 8);
  t->seed_block[63] = (uint8_t)(82u * 8u);

  /* acc_hash = taggedHash("PTM4r2/acc", u8(rank) || u16le(d)... || 8 lanes u32le): one block */
  memcpy(t->acc_block, "PTM4r2/acc", 11); /* the tag and its 0x00 */
  if (operation == TM_OP_CONV) {
    const uint8_t shape[7] = {3, (uint8_t)filters, 0, (uint8_t)n, 0, (uint8_t)n, 0};
    memcpy(t->acc_block + 11, shape, 7);
  } else {
    const uint8_t shape[5] = {2, (uint8_t)n, 0, (uint8_t)n, 0};
    memcpy(t->acc_block + 11, shape, 5);
  }
  t->acc_block[t->acc_lanes_at + 32u] = 0x80;
  t->acc_block[62] = (uint8_t)(((t->acc_lanes_at + 32u) * 8u) >> 8);
  t->acc_block[63] = (uint8_t)((t->acc_lanes_at + 32u) * 8u);

  /* path_signature = taggedHash("PTM4r2/path", acc_hash || fired)[0..8], padded in place */
  {
    uint8_t *path = base + t->off_path;
    const uint32_t len = TMN_PATH_PREFIX + 32u + t->fired_bytes;
    const uint64_t bits = (uint64_t)len * 8u;
    memcpy(path, "PTM4r2/path", 12);
    path[len] = 0x80;
    for (i = 0; i < 8; i++) path[64u * t->path_blocks - 1u - i] = (uint8_t)(bits >> (8u * i));
  }
  memcpy(t->path_target, path_target, 8);
  t->path_t0 = be32(path_target);
  t->path_t1 = be32(path_target + 4);

  if (operation == TM_OP_CONV) {
    /* For row i, block jb, pair p: lane c holds taps 2p and 2p + 1 of output (i, 8 jb + c):
     * tap t = 3a + b reads X[i + a - 1][j + b - 1], zero outside the input. */
    int32_t *xp = (int32_t *)(void *)(base + t->off_xp);
    for (i = 0; i < n; i++) {
      uint32_t jb, p, c;
      for (jb = 0; jb < t->nb; jb++) {
        for (p = 0; p < TMN_CONV_PAIRS; p++) {
          for (c = 0; c < 8; c++) {
            int32_t v[2] = {0, 0};
            uint32_t q;
            j = 8u * jb + c;
            for (q = 0; q < 2; q++) {
              const uint32_t tap = 2u * p + q;
              if (tap < 9u && j < n) {
                const int32_t r = (int32_t)i + (int32_t)(tap / 3u) - 1, col = (int32_t)j + (int32_t)(tap % 3u) - 1;
                if (r >= 0 && r < (int32_t)n && col >= 0 && col < (int32_t)n) v[q] = input[(uint32_t)r * n + (uint32_t)col];
              }
            }
            xp[((i * t->nb + jb) * TMN_CONV_PAIRS + p) * 8u + c] = pair16(v[0], v[1]);
          }
        }
      }
    }
  } else {
    /* Row i, pair k: (X[i][2k], X[i][2k + 1]), zero past the input (odd N). */
    int32_t *xp = (int32_t *)(void *)(base + t->off_xp);
    for (i = 0; i < t->rows; i++) {
      uint32_t k;
      for (k = 0; k < t->kp; k++) {
        const int32_t lo = i < n ? input[i * n + 2u * k] : 0;
        const int32_t hi = i < n && 2u * k + 1u < n ? input[i * n + 2u * k + 1u] : 0;
        xp[i * t->kp + k] = pair16(lo, hi);
      }
    }
  }
  t->magic = TMN_TENSOR_MAGIC;
  return TM_OK;
}

/* ---- one nonce ---------------------------------------------------------------------------- */

/* The work seed of a nonce, as the 8 words of its digest. */
TMN_INLINE void seed_words(tmn_tensor *t, uint64_t nonce, uint32_t seed[8]) {
  uint32_t i;
  tmn_state h = tmn_from_words(t->seed_mid);
  for (i = 0; i < 8; i++) t->seed_block[10u + i] = (uint8_t)(nonce >> (8u * i));
  tmn_blocks(&h, t->seed_block, 1);
  tmn_to_words(h, seed);
}

/* expand(seed, 32 * blocks) into out: block c is SHA-256(seed || u32le(c)), one block each. */
TMN_INLINE void expand_lanes(const tmn_state *common, __m128i m0, __m128i m1, uint32_t c, uint8_t *out, uint32_t lanes) {
  const tmn_state iv = tmn_from_words(tm_sha256_iv);
  tmn_state s[TMN_MAX_LANES];
  __m128i m[TMN_MAX_LANES][4];
  uint32_t l;
  for (l = 0; l < lanes; l++) {
    s[l] = *common;
    m[l][0] = m0;
    m[l][1] = m1;
    m[l][2] = _mm_set_epi32(0, 0, (int32_t)0x80000000u, (int32_t)bswap32(c + l));
    m[l][3] = _mm_set_epi32(36 * 8, 0, 0, 0);
  }
  tmn_rounds(s, m, lanes, 2);
  for (l = 0; l < lanes; l++) {
    tmn_add(&s[l], iv);
    tmn_to_bytes(s[l], out + 32u * (c + l));
  }
}

TMN_INLINE void expand(const uint32_t seed[8], uint8_t *out, uint32_t blocks) {
  const __m128i m0 = _mm_loadu_si128((const __m128i *)(const void *)seed);
  const __m128i m1 = _mm_loadu_si128((const __m128i *)(const void *)(seed + 4));
  tmn_state common = tmn_from_words(tm_sha256_iv);
  uint32_t c = 0;
  tmn_group(&common, m0, 0);
  tmn_group(&common, m1, 1);
  for (; c + TMN_EXPAND_LANES <= blocks; c += TMN_EXPAND_LANES) expand_lanes(&common, m0, m1, c, out, TMN_EXPAND_LANES);
  for (; c < blocks; c++) expand_lanes(&common, m0, m1, c, out, 1);
}

/* matmul: the weights' row pairs interleaved: B[k][jb] lane c = (W[2k][8jb + c], W[2k + 1][8jb + c]). */
TMN_INLINE void matmul_weights(const tmn_tensor *t, const uint8_t *base) {
  const int8_t *w = (const int8_t *)(base + t->off_w), *zero = (const int8_t *)(base + t->off_zero);
  __m256i *b = (__m256i *)(void *)(base + t->off_b);
  const uint32_t n = t->dim, nb = t->nb;
  uint32_t k, jb;
  for (k = 0; k < t->kp; k++) {
    const int8_t *ra = w + 2u * k * n, *rb = 2u * k + 1u < n ? w + (2u * k + 1u) * n : zero;
    for (jb = 0; jb < nb; jb += 2) {
      const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(ra + 8u * jb));
      const __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(rb + 8u * jb));
      _mm256_store_si256(b + k * nb + jb, _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(a, c)));
      if (jb + 1u < nb) _mm256_store_si256(b + k * nb + jb + 1u, _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(a, c)));
    }
  }
}

/*
 * The pass over Z (docs/protocol.md 3.3): the fold (8 lanes of 32 bits, Z[i] into lane i mod 8
 * as s = rotl32(s ^ Z[i], 13) * 0x9E3779B1: the 8 lanes are one vector), and the sum, minimum
 * and maximum. It is a chain of dependent multiplies, so it runs inside the multiply-accumulate
 * loops where the outputs come in order (N a multiple of 8): the out-of-order core overlaps the
 * chain with the products.
 */
typedef struct {
  __m256i s, lo, hi, sum32, sum64;
  uint32_t vectors;
} tmn_fold;

typedef struct {
  int64_t sum;
  int32_t min, max;
} tmn_stats;

TMN_INLINE void fold_init(tmn_fold *f) {
  f->s = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  f->lo = _mm256_set1_epi32(INT32_MAX);
  f->hi = _mm256_set1_epi32(INT32_MIN);
  f->sum32 = _mm256_setzero_si256();
  f->sum64 = _mm256_setzero_si256();
  f->vectors = 0;
}

TMN_INLINE void fold_flush(tmn_fold *f) {
  f->sum64 = _mm256_add_epi64(f->sum64, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(f->sum32)));
  f->sum64 = _mm256_add_epi64(f->sum64, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(f->sum32, 1)));
  f->sum32 = _mm256_setzero_si256();
}

/* The next 8 outputs, in output order. */
TMN_INLINE void fold_add(tmn_fold *f, __m256i z) {
  const __m256i x = _mm256_xor_si256(f->s, z);
  f->s = _mm256_mullo_epi32(_mm256_or_si256(_mm256_slli_epi32(x, 13), _mm256_srli_epi32(x, 19)),
                            _mm256_set1_epi32((int32_t)0x9E3779B1u));
  f->lo = _mm256_min_epi32(f->lo, z);
  f->hi = _mm256_max_epi32(f->hi, z);
  f->sum32 = _mm256_add_epi32(f->sum32, z);
  if ((++f->vectors & 255u) == 0) fold_flush(f); /* |Z| <= 2^21: 256 additions fit int32 */
}

/* The lanes, sum, minimum and maximum of the vectors folded, then of z[from, count) one by one. */
TMN_INLINE void fold_finish(tmn_fold *f, const int32_t *z, uint32_t from, uint32_t count, uint32_t lanes[8],
                            tmn_stats *st) {
  int64_t part[4];
  int32_t mins[8], maxs[8];
  uint32_t i;
  fold_flush(f);
  _mm256_storeu_si256((__m256i *)(void *)lanes, f->s);
  _mm256_storeu_si256((__m256i *)(void *)part, f->sum64);
  _mm256_storeu_si256((__m256i *)(void *)mins, f->lo);
  _mm256_storeu_si256((__m256i *)(void *)maxs, f->hi);
  st->sum = part[0] + part[1] + part[2] + part[3];
  st->min = INT32_MAX;
  st->max = INT32_MIN;
  for (i = 0; i < 8; i++) {
    if (mins[i] < st->min) st->min = mins[i];
    if (maxs[i] > st->max) st->max = maxs[i];
  }
  for (i = from; i < count; i++) {
    const uint32_t x = lanes[i & 7u] ^ (uint32_t)z[i];
    lanes[i & 7u] = ((x << 13) | (x >> 19)) * 0x9E3779B1u;
    st->sum += z[i];
    if (z[i] < st->min) st->min = z[i];
    if (z[i] > st->max) st->max = z[i];
  }
}

/* matmul: Z rows i and i + 1, column blocks jb .. jb + cols - 1 (2 x 4 accumulators at most). */
TMN_INLINE void matmul_block(const tmn_tensor *t, const int32_t *xp, const __m256i *b, int32_t *z, uint32_t i,
                             uint32_t jb, uint32_t cols) {
  __m256i a0[4], a1[4];
  const int32_t *x0 = xp + i * t->kp, *x1 = x0 + t->kp;
  uint32_t k, c;
  for (c = 0; c < cols; c++) a0[c] = a1[c] = _mm256_setzero_si256();
  for (k = 0; k < t->kp; k++) {
    const __m256i v0 = _mm256_set1_epi32(x0[k]), v1 = _mm256_set1_epi32(x1[k]);
    const __m256i *bk = b + k * t->nb + jb;
    for (c = 0; c < cols; c++) {
      const __m256i w = _mm256_load_si256(bk + c);
      a0[c] = _mm256_add_epi32(a0[c], _mm256_madd_epi16(v0, w));
      a1[c] = _mm256_add_epi32(a1[c], _mm256_madd_epi16(v1, w));
    }
  }
  for (c = 0; c < cols; c++) {
    _mm256_store_si256((__m256i *)(void *)(z + i * t->zstride + 8u * (jb + c)), a0[c]);
    _mm256_store_si256((__m256i *)(void *)(z + (i + 1u) * t->zstride + 8u * (jb + c)), a1[c]);
  }
}

/* matmul, two rows at a time; each pair of rows folded (from L1) when `fold` is given. */
TMN_INLINE void matmul(const tmn_tensor *t, const uint8_t *base, int32_t *z, tmn_fold *fold) {
  const int32_t *xp = (const int32_t *)(const void *)(base + t->off_xp);
  const __m256i *b = (const __m256i *)(const void *)(base + t->off_b);
  uint32_t i, jb, v;
  matmul_weights(t, base);
  for (i = 0; i < t->rows; i += 2) {
    for (jb = 0; jb + 4u <= t->nb; jb += 4) matmul_block(t, xp, b, z, i, jb, 4);
    switch (t->nb - jb) {
      case 3:
        matmul_block(t, xp, b, z, i, jb, 3);
        break;
      case 2:
        matmul_block(t, xp, b, z, i, jb, 2);
        break;
      case 1:
        matmul_block(t, xp, b, z, i, jb, 1);
        break;
      default:
        break;
    }
    if (fold != 0) {
      const __m256i *zr = (const __m256i *)(const void *)(z + i * t->zstride);
      for (v = 0; v < 2u * t->nb; v++) fold_add(fold, _mm256_load_si256(zr + v));
    }
  }
}

/* conv: Z[f][i][8 jb + c] = sum of the five tap pairs of (i, jb) times the filter's pairs. */
TMN_INLINE void conv(const tmn_tensor *t, uint8_t *base, int32_t *z, tmn_fold *fold) {
  const int8_t *w = (const int8_t *)(base + t->off_w);
  const __m256i *xp = (const __m256i *)(const void *)(base + t->off_xp);
  const uint32_t n = t->dim, nb = t->nb;
  uint32_t f, i, jb;
  for (f = 0; f < t->filters; f++) {
    const int8_t *kf = w + 9u * f;
    const __m256i k0 = _mm256_set1_epi32(pair16(kf[0], kf[1])), k1 = _mm256_set1_epi32(pair16(kf[2], kf[3]));
    const __m256i k2 = _mm256_set1_epi32(pair16(kf[4], kf[5])), k3 = _mm256_set1_epi32(pair16(kf[6], kf[7]));
    const __m256i k4 = _mm256_set1_epi32(pair16(kf[8], 0));
    for (i = 0; i < n; i++) {
      int32_t *zr = z + (f * n + i) * t->zstride;
      const __m256i *x = xp + i * nb * TMN_CONV_PAIRS;
      for (jb = 0; jb < nb; jb++, x += TMN_CONV_PAIRS) {
        __m256i s = _mm256_add_epi32(_mm256_madd_epi16(_mm256_load_si256(x), k0),
                                     _mm256_madd_epi16(_mm256_load_si256(x + 1), k1));
        s = _mm256_add_epi32(s, _mm256_add_epi32(_mm256_madd_epi16(_mm256_load_si256(x + 2), k2),
                                                 _mm256_madd_epi16(_mm256_load_si256(x + 3), k3)));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_load_si256(x + 4), k4));
        _mm256_store_si256((__m256i *)(void *)(zr + 8u * jb), s);
        if (fold != 0) fold_add(fold, s);
      }
    }
  }
}

/* Z, its fold lanes and its statistics: fused when the rows are whole vectors, else Z is
 * packed (rows of N) and folded after. */
TMN_INLINE void accumulate(tmn_tensor *t, uint8_t *base, int32_t *z, uint32_t lanes[8], tmn_stats *st) {
  tmn_fold fold;
  uint32_t r, v;
  fold_init(&fold);
  if (t->zstride == t->dim) {
    if (t->operation == TM_OP_CONV) {
      conv(t, base, z, &fold);
    } else {
      matmul(t, base, z, &fold);
    }
    fold_finish(&fold, z, t->count, t->count, lanes, st);
    return;
  }
  if (t->operation == TM_OP_CONV) {
    conv(t, base, z, 0);
  } else {
    matmul(t, base, z, 0);
  }
  /* pack the rows (forward: nothing is overwritten before it is read) */
  for (r = 1; r < (t->operation == TM_OP_CONV ? t->rows : t->dim); r++) {
    memmove(z + r * t->dim, z + r * t->zstride, 4u * t->dim);
  }
  for (v = 0; v < t->count / 8u; v++) fold_add(&fold, _mm256_loadu_si256((const __m256i *)(const void *)(z + 8u * v)));
  fold_finish(&fold, z, 8u * (t->count / 8u), t->count, lanes, st);
}

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && a < 0) q -= 1;
  return q;
}

/* Bit i of the fired bitmap: Z[i] >= cutoff (tm_tensor.c fired_bitmap), LSB first. */
TMN_INLINE void fired_bits(const int32_t *z, uint32_t count, int32_t cutoff, uint8_t *fired) {
  const __m256i below = _mm256_set1_epi32(cutoff - 1);
  const uint32_t vectors = count / 8u;
  uint32_t v, i;
  for (v = 0; v < vectors; v++) {
    const __m256i gt = _mm256_cmpgt_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(z + 8u * v)), below);
    fired[v] = (uint8_t)_mm256_movemask_ps(_mm256_castsi256_ps(gt));
  }
  if (count % 8u != 0) {
    uint32_t byte = 0;
    for (i = 0; 8u * vectors + i < count; i++) byte |= (uint32_t)(z[8u * vectors + i] >= cutoff) << i;
    fired[vectors] = (uint8_t)byte;
  }
}

static uint32_t floor_log2(uint64_t v) { return 63u - (uint32_t)__builtin_clzll(v); }

/*
 * MML(fired, count) in Q16 (tm_mml_score_q16): bits = 1 + the sum over maximal runs of
 * 2 * floor(log2(length)) + 1. A run ends at i when bit i differs from bit i + 1; the words'
 * transition masks give those positions, consecutive ends the run lengths. Reads whole 8-byte
 * words: the buffer has room past the bitmap (the path message's padding).
 */
static uint32_t mml_q16(const uint8_t *fired, uint32_t count) {
  const uint32_t words = (count + 63u) / 64u;
  uint64_t bits = 1, score;
  int64_t last = -1;
  uint32_t q;
  for (q = 0; q < words; q++) {
    uint64_t w, next = 0, ends;
    const int64_t valid = (int64_t)count - 1 - 64 * (int64_t)q; /* ends at positions <= count - 2 */
    memcpy(&w, fired + 8u * q, 8);
    if (q + 1u < words) next = fired[8u * (q + 1u)] & 1u;
    ends = w ^ ((w >> 1) | (next << 63));
    if (valid < 64) ends &= valid <= 0 ? 0 : (((uint64_t)1 << valid) - 1u);
    while (ends != 0) {
      const int64_t end = 64 * (int64_t)q + __builtin_ctzll(ends);
      bits += 2u * floor_log2((uint64_t)(end - last)) + 1u;
      last = end;
      ends &= ends - 1u;
    }
  }
  bits += 2u * floor_log2((uint64_t)((int64_t)count - 1 - last)) + 1u;
  score = bits * TM_MML_ONE_Q16 / count;
  return score > TM_MML_ONE_Q16 ? TM_MML_ONE_Q16 : (uint32_t)score;
}

/*
 * One nonce up to the path distance: seed, weights, Z, fold, accumulator hash, normalisation,
 * fired bitmap (into the path message), path signature. Returns the distance; the path words in
 * path[2], the seed and accumulator hash in seed_out / acc_out when given.
 */
static __attribute__((noinline)) TMN_TARGET uint32_t one_nonce(tmn_tensor *t, uint8_t *base, uint64_t nonce, uint32_t path[2], uint8_t *seed_out,
                              uint8_t *acc_out) {
  uint32_t seed[8], lanes[8], s = 0, r;
  int32_t *z = (int32_t *)(void *)(base + t->off_z);
  uint8_t *msg = base + t->off_path;
  tmn_stats st;
  tmn_state h;
  int32_t bias, cutoff;
  int64_t mean, spread, cut;

  seed_words(t, nonce, seed);
  if (seed_out != 0) {
    for (r = 0; r < 8; r++) {
      seed_out[4 * r] = (uint8_t)(seed[r] >> 24);
      seed_out[4 * r + 1] = (uint8_t)(seed[r] >> 16);
      seed_out[4 * r + 2] = (uint8_t)(seed[r] >> 8);
      seed_out[4 * r + 3] = (uint8_t)seed[r];
    }
  }
  expand(seed, base + t->off_w, t->expand_blocks);
  accumulate(t, base, z, lanes, &st);
  /* SHA256RNDS2 and SHA256MSG1/2 have only legacy SSE encodings: clear the upper halves of
   * the YMM registers before them, or every one waits on the AVX2 state (vzeroupper). */
  _mm256_zeroupper();

  memcpy(t->acc_block + t->acc_lanes_at, lanes, 32); /* u32le: x86 is little-endian */
  h = tmn_from_words(tm_sha256_iv);
  tmn_blocks(&h, t->acc_block, 1);
  tmn_to_bytes(h, msg + TMN_PATH_PREFIX);
  if (acc_out != 0) memcpy(acc_out, msg + TMN_PATH_PREFIX, 32);

  /* bias = int8(acc[31]) >> 1 (floor); m = floor(sum / count); s: max|Z - m| >> s <= 127 */
  {
    const int32_t a = (int32_t)msg[TMN_PATH_PREFIX + 31u] - (int32_t)((msg[TMN_PATH_PREFIX + 31u] & 0x80u) << 1);
    bias = (a - (a & 1)) / 2;
  }
  mean = floor_div(st.sum, (int64_t)t->count);
  spread = (int64_t)st.max - mean > mean - (int64_t)st.min ? (int64_t)st.max - mean : mean - (int64_t)st.min;
  while ((spread >> s) > 127) s++;
  cut = mean + (int64_t)(1 - bias) * ((int64_t)1 << s);
  cutoff = cut > INT32_MAX ? INT32_MAX : (int32_t)cut; /* never reached: |Z| <= 2^21 */
  fired_bits(z, t->count, cutoff, msg + TMN_PATH_PREFIX + 32u);
  _mm256_zeroupper();

  h = tmn_from_words(tm_sha256_iv);
  tmn_blocks(&h, msg, t->path_blocks);
  path[0] = tmn_word0(h);
  path[1] = tmn_word1(h);
  return (uint32_t)__builtin_popcount(path[0] ^ t->path_t0) + (uint32_t)__builtin_popcount(path[1] ^ t->path_t1);
}

static tmn_tensor *task_of(void *state, uint8_t **base) {
  tmn_tensor *t;
  if (state == 0) return 0;
  *base = aligned(state);
  t = (tmn_tensor *)(void *)*base;
  return t->magic == TMN_TENSOR_MAGIC ? t : 0;
}

TMN_TARGET int32_t tm_native_tensor_search(void *state, uint64_t start, uint64_t count, uint32_t mml_max_q16,
                                           int32_t distance_max, double out[4]) {
  uint8_t *base;
  tmn_tensor *t = task_of(state, &base);
  uint64_t nonce = start, tried = 0;
  uint32_t path[2];
  if (t == 0 || out == 0) return TM_ERR_ARGUMENT;
  out[TM_NATIVE_OUT_ITERATIONS] = 0;
  if (start > TM_MAX_NONCE) return TM_ERR_NONCE;
  while (tried < count && nonce <= TM_MAX_NONCE) {
    const uint32_t distance = one_nonce(t, base, nonce, path, 0, 0);
    tried++;
    if ((int64_t)distance <= (int64_t)distance_max) {
      const uint32_t mml = mml_q16(base + t->off_path + TMN_PATH_PREFIX + 32u, t->count);
      if (mml <= mml_max_q16) {
        out[TM_NATIVE_OUT_NONCE] = (double)nonce;
        out[TM_NATIVE_OUT_ITERATIONS] = (double)tried;
        out[TM_NATIVE_OUT_MML] = (double)mml;
        out[TM_NATIVE_OUT_DISTANCE] = (double)distance;
        return TM_FOUND;
      }
    }
    nonce++;
  }
  out[TM_NATIVE_OUT_ITERATIONS] = (double)tried;
  return TM_NOT_FOUND;
}

TMN_TARGET int32_t tm_native_tensor_probe(void *state, uint64_t nonce, uint8_t out[80]) {
  uint8_t *base;
  tmn_tensor *t = task_of(state, &base);
  uint32_t path[2], distance, mml, i;
  if (t == 0 || out == 0) return TM_ERR_ARGUMENT;
  if (nonce > TM_MAX_NONCE) return TM_ERR_NONCE;
  distance = one_nonce(t, base, nonce, path, out + TM_NATIVE_PROBE_SEED, out + TM_NATIVE_PROBE_ACC);
  mml = mml_q16(base + t->off_path + TMN_PATH_PREFIX + 32u, t->count);
  for (i = 0; i < 4; i++) {
    out[TM_NATIVE_PROBE_PATH + i] = (uint8_t)(path[0] >> (24u - 8u * i));
    out[TM_NATIVE_PROBE_PATH + 4u + i] = (uint8_t)(path[1] >> (24u - 8u * i));
    out[TM_NATIVE_PROBE_MML + i] = (uint8_t)(mml >> (8u * i));
    out[TM_NATIVE_PROBE_DISTANCE + i] = (uint8_t)(distance >> (8u * i));
  }
  return TM_OK;
}
