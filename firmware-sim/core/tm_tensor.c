/*
 * tm_tensor.c: v4.0 proof of tensor work. See tm_tensor.h and docs/protocol.md section 3.
 *
 * Integer ranges (N <= 64, F <= 8): inputs and weights are int8; an accumulator sums at most 64
 * products of two int8, so |Z| <= 2^20 and fits int32; the tensor sum has at most 32,768 terms,
 * |sum| < 2^36, and is int64. Signed right shifts are never applied to negative values (that is
 * implementation-defined in C99): floor division by 2^s goes through an offset that makes the
 * operand non-negative.
 */
#include "tm_tensor.h"

#include "sha256.h"

/* floor(d / 2^s) for |d| < 2^23 and s <= 23, without shifting a negative value:
 * floor((d + 2^23) / 2^s) - 2^23 / 2^s, exact because 2^s divides 2^23. */
#define FLOOR_SHIFT_OFFSET INT32_C(0x800000)
static int32_t floor_shift(int32_t d, uint32_t s) {
  return (int32_t)((uint32_t)(d + FLOOR_SHIFT_OFFSET) >> s) - (int32_t)((uint32_t)FLOOR_SHIFT_OFFSET >> s);
}

/* floor(a / b) for b > 0 (C99 division truncates toward zero). */
static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && a < 0) q -= 1;
  return q;
}

static int32_t clamp_int8(int32_t v) { return v < -128 ? -128 : (v > 127 ? 127 : v); }

/* A byte read as a two's-complement int8, without an implementation-defined conversion. */
static int32_t int8_of(uint8_t b) { return (int32_t)b - (int32_t)((b & 0x80u) << 1); }

static void put_u64le(uint8_t out[8], uint64_t v) {
  uint32_t i;
  for (i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (8 * i));
}

int32_t tm_relu(int32_t a) { return a > 0 ? a : 0; }

int32_t tm_sigmoid(int32_t a) {
  int32_t v = a + 64;
  return v < 0 ? 0 : (v > 127 ? 127 : v);
}

int32_t tm_tanh(int32_t a) { return clamp_int8(a * 4); }

static uint32_t floor_log2(uint32_t v) {
  uint32_t r = 0;
  while (v > 1) {
    v >>= 1;
    r++;
  }
  return r;
}

uint32_t tm_mml_score_q16(const uint8_t *bitmap, uint32_t count) {
  uint32_t bits = 1, run = 1, i = 1;
  uint32_t previous = bitmap[0] & 1u;
  uint64_t score;
  while (i < count) {
    /* A whole byte equal to the current run extends it by 8. */
    if ((i & 7u) == 0 && i + 8 <= count && bitmap[i >> 3] == (previous ? 0xffu : 0x00u)) {
      run += 8;
      i += 8;
      continue;
    }
    if ((((uint32_t)bitmap[i >> 3] >> (i & 7u)) & 1u) == previous) {
      run++;
    } else {
      bits += 2 * floor_log2(run) + 1;
      previous ^= 1u;
      run = 1;
    }
    i++;
  }
  bits += 2 * floor_log2(run) + 1;
  score = ((uint64_t)bits * TM_MML_ONE_Q16) / count;
  return score > TM_MML_ONE_Q16 ? TM_MML_ONE_Q16 : (uint32_t)score;
}

uint32_t tm_path_distance(const uint8_t a[8], const uint8_t b[8]) {
  uint32_t d = 0, i;
  for (i = 0; i < 8; i++) {
    uint32_t x = (uint32_t)(a[i] ^ b[i]);
    while (x) {
      x &= x - 1;
      d++;
    }
  }
  return d;
}

/* The mean m and shift s of normalize, from the sum, minimum and maximum of Z.
 * max|Z[i] - m| = max(max - m, m - min) since min <= m <= max. */
static void normalize_params(int64_t sum, int32_t min, int32_t max, uint32_t count, int32_t *mean,
                             uint32_t *shift) {
  int64_t m = floor_div(sum, (int64_t)count);
  int64_t hi = (int64_t)max - m, lo = m - (int64_t)min;
  int64_t max_abs = hi > lo ? hi : lo;
  uint32_t s = 0;
  while ((max_abs >> s) > 127) s++;
  *mean = (int32_t)m;
  *shift = s;
}

#define NORMALIZE_INPUT_LIMIT INT32_C(0x200000) /* 2^21 */

int32_t tm_normalize(const int32_t *z, uint32_t count, int8_t *out) {
  int64_t sum = 0;
  int32_t min, max, mean;
  uint32_t i, s;
  if (count == 0) return TM_ERR_ARGUMENT;
  min = max = z[0];
  for (i = 0; i < count; i++) {
    if (z[i] > NORMALIZE_INPUT_LIMIT || z[i] < -NORMALIZE_INPUT_LIMIT) return TM_ERR_ARGUMENT;
    sum += z[i];
    if (z[i] < min) min = z[i];
    if (z[i] > max) max = z[i];
  }
  normalize_params(sum, min, max, count, &mean, &s);
  for (i = 0; i < count; i++) out[i] = (int8_t)floor_shift(z[i] - mean, s);
  return TM_OK;
}

int32_t tm_task_check(const tm_task *t) {
  if (t == 0 || t->input == 0) return TM_ERR_ARGUMENT;
  if (t->dim < TM_MIN_TENSOR_DIM || t->dim > TM_MAX_TENSOR_DIM) return TM_ERR_ARGUMENT;
  if (t->operation != TM_OP_MATMUL && t->operation != TM_OP_CONV) return TM_ERR_ARGUMENT;
  if (t->activation > TM_ACT_TANH) return TM_ERR_ARGUMENT;
  if (t->operation == TM_OP_CONV && (t->filters < 1 || t->filters > TM_MAX_CONV_FILTERS)) return TM_ERR_ARGUMENT;
  return TM_OK;
}

uint32_t tm_output_count(const tm_task *t) {
  uint32_t nn = (uint32_t)t->dim * t->dim;
  return t->operation == TM_OP_CONV ? nn * t->filters : nn;
}

static uint32_t weight_bytes(const tm_task *t) {
  return t->operation == TM_OP_CONV ? 9u * t->filters : (uint32_t)t->dim * t->dim;
}

uint32_t tm_scratch_words(const tm_task *t) {
  if (tm_task_check(t) != TM_OK) return 0;
  return TM_SCRATCH_WORDS_FOR((uint32_t)t->operation, (uint32_t)t->dim, (uint32_t)t->filters);
}

void tm_derive_input(const uint8_t challenge_hash[32], uint16_t dim, int8_t *out) {
  tm_sha256_ctx ctx;
  uint8_t seed[32];
  tm_tagged_init(&ctx, "PTM4/input");
  tm_sha256_update(&ctx, challenge_hash, 32);
  tm_sha256_final(&ctx, seed);
  /* int8_t is two's complement by definition: the bytes are the int8 values. */
  tm_expand(seed, (uint8_t *)out, (uint32_t)dim * dim);
}

void tm_derive_path_target(const uint8_t challenge_hash[32], uint8_t out[8]) {
  tm_sha256_ctx ctx;
  uint8_t digest[32];
  uint32_t i;
  tm_tagged_init(&ctx, "PTM4/path-target");
  tm_sha256_update(&ctx, challenge_hash, 32);
  tm_sha256_final(&ctx, digest);
  for (i = 0; i < 8; i++) out[i] = digest[i];
}

int32_t tm_task_init(tm_task *task, const uint8_t challenge_hash[32], uint8_t operation, uint8_t activation,
                     uint16_t dim, uint8_t filters, int8_t *input_buffer) {
  uint32_t i;
  for (i = 0; i < 32; i++) task->challenge_hash[i] = challenge_hash[i];
  task->operation = operation;
  task->activation = activation;
  task->dim = dim;
  task->filters = operation == TM_OP_CONV ? filters : 0;
  task->input = input_buffer;
  if (tm_task_check(task) != TM_OK) return TM_ERR_ARGUMENT;
  tm_derive_input(challenge_hash, dim, input_buffer);
  tm_derive_path_target(challenge_hash, task->path_target);
  return TM_OK;
}

static void work_seed_prefix(tm_sha256_ctx *ctx, const uint8_t challenge_hash[32], const uint8_t pubkey[32]) {
  tm_tagged_init(ctx, "PTM4/work");
  tm_sha256_update(ctx, challenge_hash, 32);
  tm_sha256_update(ctx, pubkey, 32);
}

static void work_seed_finish(const tm_sha256_ctx *prefix, uint64_t nonce, uint8_t out[32]) {
  tm_sha256_ctx ctx = *prefix;
  uint8_t n[8];
  put_u64le(n, nonce);
  tm_sha256_update(&ctx, n, 8);
  tm_sha256_final(&ctx, out);
}

void tm_work_seed(const uint8_t challenge_hash[32], const uint8_t pubkey[32], uint64_t nonce, uint8_t out[32]) {
  tm_sha256_ctx ctx;
  work_seed_prefix(&ctx, challenge_hash, pubkey);
  work_seed_finish(&ctx, nonce, out);
}

/* The working memory of one iteration, carved from the caller's scratch. */
typedef struct {
  int32_t *z;      /* count accumulators */
  int8_t *w;       /* weight bytes */
  uint8_t *fired;  /* (count + 7) / 8 bytes */
  uint32_t count;
} layout;

static int32_t carve(const tm_task *t, const tm_scratch *scratch, layout *l) {
  if (tm_task_check(t) != TM_OK || scratch == 0 || scratch->words == 0) return TM_ERR_ARGUMENT;
  if (scratch->n_words < tm_scratch_words(t)) return TM_ERR_SCRATCH;
  l->count = tm_output_count(t);
  l->z = scratch->words;
  l->w = (int8_t *)(void *)(scratch->words + l->count);
  l->fired = (uint8_t *)(void *)(scratch->words + l->count) + weight_bytes(t);
  return TM_OK;
}

typedef struct {
  int64_t sum;
  int32_t min;
  int32_t max;
} acc_stats;

static void row_stats(const int32_t *z, uint32_t n, acc_stats *st) {
  uint32_t j;
  int64_t sum = 0;
  int32_t min = st->min, max = st->max;
  for (j = 0; j < n; j++) {
    sum += z[j];
    if (z[j] < min) min = z[j];
    if (z[j] > max) max = z[j];
  }
  st->sum += sum;
  st->min = min;
  st->max = max;
}

/* Z[i][j] = sum_k X[i][k] * W[k][j], row by row (the sum is exact in any order). */
static void matmul(const int8_t *restrict x, const int8_t *restrict w, uint32_t n, int32_t *restrict z,
                   acc_stats *restrict st) {
  uint32_t i, j, k;
  for (i = 0; i < n; i++) {
    int32_t *restrict zr = z + i * n;
    const int8_t *restrict xr = x + i * n;
    for (j = 0; j < n; j++) zr[j] = 0;
    for (k = 0; k < n; k++) {
      const int32_t xv = xr[k];
      const int8_t *restrict wr = w + k * n;
      /* Blocks of 16 with a constant trip count, which compilers vectorise at -O2. */
      for (j = 0; j + 16 <= n; j += 16) {
        int32_t *restrict zb = zr + j;
        const int8_t *restrict wb = wr + j;
        uint32_t t;
        for (t = 0; t < 16; t++) zb[t] += xv * (int32_t)wb[t];
      }
      for (; j < n; j++) zr[j] += xv * (int32_t)wr[j];
    }
    row_stats(zr, n, st);
  }
}

/* Z[f][i][j] = sum_{a,b in 0..2} X[i+a-1][j+b-1] * K[f][a][b], X outside the input is 0. */
static void conv3x3(const int8_t *restrict x, const int8_t *restrict kernels, uint32_t n, uint32_t filters,
                    int32_t *restrict z, acc_stats *restrict st) {
  uint32_t f, i, j, a, b;
  for (f = 0; f < filters; f++) {
    const int8_t *kf = kernels + 9 * f;
    for (i = 0; i < n; i++) {
      int32_t *restrict zr = z + (f * n + i) * n;
      for (j = 0; j < n; j++) zr[j] = 0;
      for (a = 0; a < 3; a++) {
        const int8_t *restrict xr;
        if ((a == 0 && i == 0) || (a == 2 && i + 1 == n)) continue; /* row i + a - 1 outside */
        xr = x + (i + a - 1) * n;
        for (b = 0; b < 3; b++) {
          const int32_t kv = kf[3 * a + b];
          /* Z[j] += K * X[row][j + b - 1] for the j with 0 <= j + b - 1 < n */
          const uint32_t lo = b == 0 ? 1u : 0u, len = n - 1 + (b == 1 ? 1u : 0u);
          int32_t *restrict zs = zr + lo;
          const int8_t *restrict xs = xr + lo + b - 1; /* lo + b >= 1 */
          for (j = 0; j + 16 <= len; j += 16) {
            int32_t *restrict zb = zs + j;
            const int8_t *restrict xb = xs + j;
            uint32_t t;
            for (t = 0; t < 16; t++) zb[t] += kv * (int32_t)xb[t];
          }
          if (j + 8 <= len) {
            int32_t *restrict zb = zs + j;
            const int8_t *restrict xb = xs + j;
            uint32_t t;
            for (t = 0; t < 8; t++) zb[t] += kv * (int32_t)xb[t];
            j += 8;
          }
          for (; j < len; j++) zs[j] += kv * (int32_t)xs[j];
        }
      }
      row_stats(zr, n, st);
    }
  }
}

/* u8(rank) || u16le(d) for each dimension: the shape prefix of the accumulator hash. */
static uint32_t shape_header(const tm_task *t, uint8_t header[7]) {
  uint32_t len;
  if (t->operation == TM_OP_CONV) {
    header[0] = 3;
    header[1] = t->filters;
    header[2] = 0;
    len = 7;
  } else {
    header[0] = 2;
    len = 5;
  }
  header[len - 4] = (uint8_t)(t->dim & 0xffu);
  header[len - 3] = (uint8_t)(t->dim >> 8);
  header[len - 2] = (uint8_t)(t->dim & 0xffu);
  header[len - 1] = (uint8_t)(t->dim >> 8);
  return len;
}

/*
 * acc_hash = taggedHash("PTM4r2/acc", shape || fold lanes as u32le). The fold: 8 lanes of 32
 * bits, lane l starting at l; Z[i] goes into lane i mod 8 as
 * s = rotl32(s ^ (uint32)Z[i], 13) * 0x9E3779B1 (mod 2^32), in output order.
 */
static void accumulator_hash(const tm_task *t, const layout *l, uint8_t out[32]) {
  tm_sha256_ctx ctx;
  uint8_t header[7], lanes_le[32];
  uint32_t s[8], i;
  for (i = 0; i < 8; i++) s[i] = i;
  for (i = 0; i < l->count; i++) {
    const uint32_t x = s[i & 7u] ^ (uint32_t)l->z[i];
    s[i & 7u] = ((x << 13) | (x >> 19)) * UINT32_C(0x9E3779B1);
  }
  for (i = 0; i < 8; i++) {
    lanes_le[4 * i] = (uint8_t)s[i];
    lanes_le[4 * i + 1] = (uint8_t)(s[i] >> 8);
    lanes_le[4 * i + 2] = (uint8_t)(s[i] >> 16);
    lanes_le[4 * i + 3] = (uint8_t)(s[i] >> 24);
  }
  tm_tagged_init(&ctx, "PTM4r2/acc");
  tm_sha256_update(&ctx, header, shape_header(t, header));
  tm_sha256_update(&ctx, lanes_le, 32);
  tm_sha256_final(&ctx, out);
}

/* Seed -> weights -> accumulators -> their hash; returns the bias and the normalize parameters. */
static void tensor_core(const tm_task *t, const uint8_t seed[32], const layout *l, uint8_t acc[32], int32_t *bias,
                        int32_t *mean, uint32_t *shift) {
  acc_stats st;
  st.sum = 0;
  st.min = INT32_MAX;
  st.max = INT32_MIN;
  tm_expand(seed, (uint8_t *)l->w, weight_bytes(t));
  if (t->operation == TM_OP_CONV) {
    conv3x3(t->input, l->w, t->dim, t->filters, l->z, &st);
  } else {
    matmul(t->input, l->w, t->dim, l->z, &st);
  }
  accumulator_hash(t, l, acc);
  /* bias = int8(acc_hash[31]) >> 1, arithmetic (floor), in [-64, 63]: known only after the work */
  *bias = floor_shift(int8_of(acc[31]), 1);
  normalize_params(st.sum, st.min, st.max, l->count, mean, shift);
}

/* path_signature = taggedHash("PTM4r2/path", acc_hash || fired)[0..8]. */
static void path_signature(const uint8_t acc[32], const uint8_t *fired, uint32_t count, uint8_t out[8]) {
  tm_sha256_ctx ctx;
  uint8_t digest[32];
  uint32_t i;
  tm_tagged_init(&ctx, "PTM4r2/path");
  tm_sha256_update(&ctx, acc, 32);
  tm_sha256_update(&ctx, fired, (count + 7) / 8);
  tm_sha256_final(&ctx, digest);
  for (i = 0; i < 8; i++) out[i] = digest[i];
}

int32_t tm_compute_work(const tm_task *t, const uint8_t pubkey[32], uint64_t nonce, const tm_scratch *scratch,
                        tm_work_result *out) {
  layout l;
  tm_sha256_ctx result;
  uint8_t buffer[64];
  uint8_t bytes[8];
  uint32_t i, used = 0, s;
  int32_t bias, mean, rc;
  if (nonce > TM_MAX_NONCE) return TM_ERR_NONCE;
  rc = carve(t, scratch, &l);
  if (rc != TM_OK) return rc;

  tm_work_seed(t->challenge_hash, pubkey, nonce, out->work_seed);
  tensor_core(t, out->work_seed, &l, out->accumulator_hash, &bias, &mean, &s);

  /* tensor_result_hash = taggedHash("PTM4r2/result", acc_hash || Y), Y streamed. */
  tm_tagged_init(&result, "PTM4r2/result");
  tm_sha256_update(&result, out->accumulator_hash, 32);

  for (i = 0; i < (l.count + 7) / 8; i++) l.fired[i] = 0;
  for (i = 0; i < l.count; i++) {
    /* A = clamp(P + bias), P = (Z - m) >> s; Y = activation(A); fired when A > 0 */
    const int32_t a = clamp_int8(floor_shift(l.z[i] - mean, s) + bias);
    int32_t y;
    if (a > 0) l.fired[i >> 3] = (uint8_t)(l.fired[i >> 3] | (1u << (i & 7u)));
    switch (t->activation) {
      case TM_ACT_SIGMOID:
        y = tm_sigmoid(a);
        break;
      case TM_ACT_TANH:
        y = tm_tanh(a);
        break;
      default:
        y = tm_relu(a);
        break;
    }
    buffer[used++] = (uint8_t)y; /* conversion to unsigned is modulo 256: the int8 byte */
    if (used == sizeof buffer) {
      tm_sha256_update(&result, buffer, used);
      used = 0;
    }
  }
  tm_sha256_update(&result, buffer, used);
  tm_sha256_final(&result, out->tensor_result_hash);

  path_signature(out->accumulator_hash, l.fired, l.count, out->path_signature);
  out->path_distance = (uint8_t)tm_path_distance(out->path_signature, t->path_target);
  out->mml_score_q16 = tm_mml_score_q16(l.fired, l.count);

  /* computation_hash = taggedHash("PTM4r2/computation", C || K || u64le(n) || result hash ||
   *                    u32le(mml) || path_signature || u8(path_distance)) */
  tm_tagged_init(&result, "PTM4r2/computation");
  tm_sha256_update(&result, t->challenge_hash, 32);
  tm_sha256_update(&result, pubkey, 32);
  put_u64le(bytes, nonce);
  tm_sha256_update(&result, bytes, 8);
  tm_sha256_update(&result, out->tensor_result_hash, 32);
  for (i = 0; i < 4; i++) bytes[i] = (uint8_t)(out->mml_score_q16 >> (8 * i));
  tm_sha256_update(&result, bytes, 4);
  tm_sha256_update(&result, out->path_signature, 8);
  tm_sha256_update(&result, &out->path_distance, 1);
  tm_sha256_final(&result, out->computation_hash);
  return TM_OK;
}

/*
 * The fired bitmap straight from the accumulators: A > 0 <=> floor((Z - m) / 2^s) + bias > 0
 * <=> Z - m >= (1 - bias) * 2^s, so one comparison per output against
 * cutoff = m + (1 - bias) * 2^s. (Clamping to [-128, 127] never changes the sign.)
 */
static void fired_bitmap(const layout *l, int32_t bias, int32_t mean, uint32_t s) {
  const int64_t cutoff64 = (int64_t)mean + (int64_t)(1 - bias) * ((int64_t)1 << s);
  const int32_t cutoff = cutoff64 > INT32_MAX ? INT32_MAX : (int32_t)cutoff64; /* never reached: |Z| <= 2^21 */
  const uint32_t full = l->count / 8;
  uint32_t k, i;
  for (k = 0; k < full; k++) {
    const int32_t *z = l->z + 8 * k;
    uint32_t byte = 0;
    for (i = 0; i < 8; i++) byte |= (uint32_t)(z[i] >= cutoff) << i;
    l->fired[k] = (uint8_t)byte;
  }
  if (l->count % 8 != 0) {
    uint32_t byte = 0;
    for (i = 0; 8 * full + i < l->count; i++) byte |= (uint32_t)(l->z[8 * full + i] >= cutoff) << i;
    l->fired[full] = (uint8_t)byte;
  }
}

int32_t tm_search_tensor(const tm_task *t, const uint8_t pubkey[32], uint64_t start, uint64_t count,
                         const tm_thresholds *thresholds, const tm_scratch *scratch, tm_tensor_solution *out) {
  layout l;
  tm_sha256_ctx prefix;
  uint8_t seed[32], acc[32], path[8];
  uint64_t nonce = start, tried = 0;
  int32_t rc = carve(t, scratch, &l);
  out->iterations = 0;
  if (rc != TM_OK) return rc;
  if (thresholds == 0) return TM_ERR_ARGUMENT;
  if (start > TM_MAX_NONCE) return TM_ERR_NONCE;
  work_seed_prefix(&prefix, t->challenge_hash, pubkey); /* midstate: the first 64 bytes are constant */
  while (tried < count && nonce <= TM_MAX_NONCE) {
    int32_t bias, mean;
    uint32_t s, distance;
    tried++;
    work_seed_finish(&prefix, nonce, seed);
    tensor_core(t, seed, &l, acc, &bias, &mean, &s);
    fired_bitmap(&l, bias, mean, s);
    path_signature(acc, l.fired, l.count, path);
    distance = tm_path_distance(path, t->path_target);
    if (distance <= thresholds->path_distance_max) {
      const uint32_t mml = tm_mml_score_q16(l.fired, l.count);
      if (mml <= thresholds->mml_threshold_q16) {
        uint32_t i;
        out->nonce = nonce;
        out->iterations = tried;
        rc = tm_compute_work(t, pubkey, nonce, scratch, &out->work);
        if (rc != TM_OK) return rc;
        /* Self-check: the full computation must agree with the search's shortcut. */
        if (out->work.mml_score_q16 != mml || out->work.path_distance != distance) return TM_ERR_INTERNAL;
        for (i = 0; i < 8; i++)
          if (out->work.path_signature[i] != path[i]) return TM_ERR_INTERNAL;
        return TM_FOUND;
      }
    }
    nonce++;
  }
  out->iterations = tried;
  return TM_NOT_FOUND;
}
