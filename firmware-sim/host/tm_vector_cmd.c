/*
 * tm_vector_cmd.c: the vector commands of tm-vectors, shared by the host driver
 * (host/tm_vectors.c, stdin/stdout) and the bare-metal vector run (cross/tm_vectors_bare.c,
 * the vectors compiled in). The command language is described in tm_vector_cmd.h.
 */
#include "tm_vector_cmd.h"

#include <string.h>

#include "../core/sha256.h"
#include "../core/sha512.h"
#include "../core/tm_ed25519.h"
#include "../core/tm_core.h"
#include "../core/tm_hexchain.h"
#include "../core/tm_http.h"
#include "../core/tm_json.h"
#include "../core/tm_sign.h"
#include "../core/tm_sha_port.h"
#include "../core/tm_tensor.h"

#define MAX_FIELDS 16
#define MAX_VALUES 65536

static uint8_t bytes[TM_VECTOR_LINE_MAX / 2];
static int8_t input[TM_MAX_TENSOR_DIM * TM_MAX_TENSOR_DIM];
static int32_t scratch_words[TM_SCRATCH_WORDS_ANY(TM_MAX_TENSOR_DIM, TM_MAX_CONV_FILTERS)];
static int32_t values[MAX_VALUES];
static int8_t normalized[MAX_VALUES];

static const tm_scratch scratch = {scratch_words, sizeof scratch_words / sizeof scratch_words[0]};

/* The answer being written, formatted here rather than by the C library, so that a bare-metal
 * libc without 64-bit conversions (picolibc's default) gives the same text as the host. */
static char *out;
static uint32_t out_len, out_cap;

static void put_char(char c) {
  if (out_len + 1 < out_cap) out[out_len++] = c;
  out[out_len] = '\0';
}

static void put_str(const char *s) {
  while (*s) put_char(*s++);
}

static void put_u64(uint64_t v) {
  char digits[21];
  uint32_t n = 0;
  do {
    digits[n++] = (char)('0' + (char)(v % 10u));
    v /= 10u;
  } while (v != 0);
  while (n > 0) put_char(digits[--n]);
}

static void put_i64(int64_t v) {
  if (v < 0) {
    put_char('-');
    put_u64((uint64_t)0 - (uint64_t)v);
  } else {
    put_u64((uint64_t)v);
  }
}

static void print_hex(const uint8_t *p, uint32_t n) {
  static const char digits[] = "0123456789abcdef";
  uint32_t i;
  for (i = 0; i < n; i++) {
    put_char(digits[p[i] >> 4]);
    put_char(digits[p[i] & 15]);
  }
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Parses lowercase hex; returns the byte count or -1. */
static long parse_hex(const char *s, uint8_t *dst, uint32_t cap) {
  size_t n = strlen(s), i;
  if (n % 2 != 0 || n / 2 > cap) return -1;
  for (i = 0; i < n / 2; i++) {
    int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return -1;
    dst[i] = (uint8_t)(hi * 16 + lo);
  }
  return (long)(n / 2);
}

static int parse_hex_exact(const char *s, uint8_t *dst, uint32_t n) { return parse_hex(s, dst, n) == (long)n; }

static int parse_u64(const char *s, uint64_t *v) {
  uint64_t x = 0;
  if (*s == '\0') return 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return 0;
    if (x > (UINT64_MAX - 9) / 10) return 0;
    x = x * 10 + (uint64_t)(*s - '0');
  }
  *v = x;
  return 1;
}

static int parse_i64(const char *s, int64_t *v) {
  uint64_t m;
  int negative = *s == '-';
  if (!parse_u64(negative ? s + 1 : s, &m) || m > (uint64_t)INT64_MAX) return 0;
  *v = negative ? -(int64_t)m : (int64_t)m;
  return 1;
}

static int split(char *s, char **fields) {
  int n = 0;
  char *p = strtok(s, " ");
  while (p && n < MAX_FIELDS) {
    fields[n++] = p;
    p = strtok(NULL, " ");
  }
  return n;
}

/* Fills a task from 7 fields starting at f[0]; returns 1 or 0. */
static int parse_task(char **f, tm_task *task) {
  uint64_t dim, filters;
  uint8_t op, act;
  uint8_t hash[32];
  if (strcmp(f[0], "matmul") == 0) op = TM_OP_MATMUL;
  else if (strcmp(f[0], "conv") == 0) op = TM_OP_CONV;
  else return 0;
  if (strcmp(f[1], "relu") == 0) act = TM_ACT_RELU;
  else if (strcmp(f[1], "sigmoid") == 0) act = TM_ACT_SIGMOID;
  else if (strcmp(f[1], "tanh") == 0) act = TM_ACT_TANH;
  else return 0;
  if (!parse_u64(f[2], &dim) || !parse_u64(f[3], &filters) || dim > TM_MAX_TENSOR_DIM || filters > 255) return 0;
  if (!parse_hex_exact(f[4], hash, 32)) return 0;
  if (tm_task_init(task, hash, op, act, (uint16_t)dim, (uint8_t)filters, input) != TM_OK) return 0;
  if (strcmp(f[5], "-") != 0 && !parse_hex_exact(f[5], (uint8_t *)input, (uint32_t)(dim * dim))) return 0;
  if (!parse_hex_exact(f[6], task->path_target, 8)) return 0;
  return 1;
}

static void print_work(const tm_work_result *w) {
  print_hex(w->work_seed, 32);
  put_char(' ');
  print_hex(w->tensor_result_hash, 32);
  put_char(' ');
  put_u64(w->mml_score_q16);
  put_char(' ');
  print_hex(w->path_signature, 8);
  put_char(' ');
  put_u64(w->path_distance);
  put_char(' ');
  print_hex(w->computation_hash, 32);
  put_char(' ');
  print_hex(w->accumulator_hash, 32);
}

static void counting_compress(void *ctx, const uint32_t midstate[8], const uint32_t w16[16], uint32_t out8[8]) {
  (*(uint64_t *)ctx)++;
  tm_sha_port_software(0, midstate, w16, out8);
}

static const char *run(char **f, int n) {
  static uint8_t a32[32], b32[32], header[88];
  tm_task task;
  uint64_t u, start, count, thr, pdmax;
  int64_t q, r, s;
  long len;

  if (strcmp(f[0], "version") == 0 && n == 1) {
    put_str(TM_CORE_VERSION_STRING);
    return NULL;
  }
  if (strcmp(f[0], "sha256") == 0 && n <= 2) {
    len = n == 2 ? parse_hex(f[1], bytes, sizeof bytes) : 0;
    if (len < 0) return "bad hex";
    tm_sha256(bytes, (uint32_t)len, a32);
    print_hex(a32, 32);
    return NULL;
  }
  if (strcmp(f[0], "sha512") == 0 && n <= 2) {
    uint8_t digest[64];
    len = n == 2 ? parse_hex(f[1], bytes, sizeof bytes) : 0;
    if (len < 0) return "bad hex";
    tm_sha512(bytes, (uint32_t)len, digest);
    print_hex(digest, 64);
    return NULL;
  }
  if (strcmp(f[0], "ed25519_public") == 0 && n == 2) {
    if (!parse_hex_exact(f[1], a32, 32)) return "bad seed";
    tm_ed25519_public_key(a32, b32);
    print_hex(b32, 32);
    return NULL;
  }
  if (strcmp(f[0], "ed25519_sign") == 0 && (n == 2 || n == 3)) {
    uint8_t signature[64];
    if (!parse_hex_exact(f[1], a32, 32)) return "bad seed";
    len = n == 3 ? parse_hex(f[2], bytes, sizeof bytes) : 0;
    if (len < 0) return "bad hex";
    tm_ed25519_public_key(a32, b32);
    tm_ed25519_sign(a32, b32, bytes, (uint32_t)len, signature);
    print_hex(b32, 32);
    put_char(' ');
    print_hex(signature, 64);
    return NULL;
  }
  if (strcmp(f[0], "ed25519_verify") == 0 && (n == 3 || n == 4)) {
    uint8_t signature[64];
    if (!parse_hex_exact(f[1], a32, 32) || !parse_hex_exact(f[2], signature, 64)) return "bad key or signature";
    len = n == 4 ? parse_hex(f[3], bytes, sizeof bytes) : 0;
    if (len < 0) return "bad hex";
    put_u64((uint64_t)tm_ed25519_verify(signature, bytes, (uint32_t)len, a32));
    return NULL;
  }
  if (strcmp(f[0], "request_sign") == 0 && n == 7) {
    /* request_sign <seed> <method> <path> <body hex | -> <timestamp ms> <nonce>: the x-tm-* headers */
    uint8_t nonce[16];
    uint8_t lines[512];
    tm_buf h;
    uint32_t i;
    len = strcmp(f[4], "-") == 0 ? -1 : parse_hex(f[4], bytes, sizeof bytes);
    if (!parse_hex_exact(f[1], a32, 32) || !parse_u64(f[5], &u) || !parse_hex_exact(f[6], nonce, 16) ||
        (len < 0 && strcmp(f[4], "-") != 0))
      return "bad request_sign arguments";
    tm_ed25519_public_key(a32, b32);
    tm_buf_init(&h, lines, sizeof lines);
    if (tm_request_headers(&h, a32, b32, f[2], f[3], len < 0 ? NULL : bytes, len < 0 ? 0u : (uint32_t)len, u,
                           nonce) != 0)
      return "tm_request_headers failed";
    for (i = 0; i < h.len; i++) {
      if (lines[i] == '\r') continue;
      put_char(lines[i] == '\n' ? ';' : (char)lines[i]);
    }
    return NULL;
  }
  if (strcmp(f[0], "submission_sign") == 0 && n == 4) {
    uint8_t signature[64];
    if (!parse_hex_exact(f[1], a32, 32) || !parse_hex_exact(f[3], header, 88)) return "bad submission_sign arguments";
    tm_ed25519_public_key(a32, b32);
    tm_submission_sign(a32, b32, f[2], header, signature);
    print_hex(signature, 64);
    return NULL;
  }
  if (strcmp(f[0], "notify_verify") == 0 && n == 4) {
    uint8_t signature[64];
    len = parse_hex(f[3], bytes, sizeof bytes);
    if (!parse_hex_exact(f[1], a32, 32) || !parse_hex_exact(f[2], signature, 64) || len < 0)
      return "bad notify_verify arguments";
    put_u64((uint64_t)tm_notify_verify(a32, bytes, (uint32_t)len, signature));
    return NULL;
  }
  if (strcmp(f[0], "json") == 0 && n == 3) {
    /* json <path | .> <text hex>: the type of the value at path and the value's text in hex */
    tm_span doc, v;
    int32_t type;
    len = parse_hex(f[2], bytes, sizeof bytes);
    if (len < 0) return "bad hex";
    doc.p = (const char *)bytes;
    doc.n = (uint32_t)len;
    type = tm_json_get(doc, strcmp(f[1], ".") == 0 ? "" : f[1], &v);
    put_i64(type);
    if (type > 0) {
      put_char(' ');
      print_hex((const uint8_t *)v.p, v.n);
    }
    return NULL;
  }
  if (strcmp(f[0], "http_date") == 0 && n == 2) {
    len = parse_hex(f[1], bytes, sizeof bytes);
    if (len < 0) return "bad hex";
    put_u64(tm_http_date((const char *)bytes, (uint32_t)len));
    return NULL;
  }
  if (strcmp(f[0], "input") == 0 && n == 3) {
    if (!parse_hex_exact(f[1], a32, 32) || !parse_u64(f[2], &u) || u < TM_MIN_TENSOR_DIM || u > TM_MAX_TENSOR_DIM)
      return "bad input arguments";
    tm_derive_input(a32, (uint16_t)u, input);
    print_hex((const uint8_t *)input, (uint32_t)(u * u));
    return NULL;
  }
  if (strcmp(f[0], "path_target") == 0 && n == 2) {
    if (!parse_hex_exact(f[1], a32, 32)) return "bad hash";
    tm_derive_path_target(a32, b32);
    print_hex(b32, 8);
    return NULL;
  }
  if (strcmp(f[0], "act") == 0 && n == 2) {
    if (!parse_i64(f[1], &q) || q < -128 || q > 127) return "bad activation input";
    put_i64(tm_relu((int32_t)q));
    put_char(' ');
    put_i64(tm_sigmoid((int32_t)q));
    put_char(' ');
    put_i64(tm_tanh((int32_t)q));
    return NULL;
  }
  if (strcmp(f[0], "normalize") == 0 && n == 2) {
    uint32_t k = 0, i;
    char *p = strtok(f[1], ",");
    while (p) {
      if (k == MAX_VALUES || !parse_i64(p, &q) || q < INT32_MIN || q > INT32_MAX) return "bad value list";
      values[k++] = (int32_t)q;
      p = strtok(NULL, ",");
    }
    if (tm_normalize(values, k, normalized) != TM_OK) return "normalize rejected its input";
    for (i = 0; i < k; i++) {
      if (i) put_char(',');
      put_i64(normalized[i]);
    }
    return NULL;
  }
  if (strcmp(f[0], "mml") == 0 && n == 3) {
    len = parse_hex(f[1], bytes, sizeof bytes);
    if (len < 1 || !parse_u64(f[2], &u) || u < 1 || u > (uint64_t)len * 8) return "bad mml arguments";
    put_u64(tm_mml_score_q16(bytes, (uint32_t)u));
    return NULL;
  }
  if (strcmp(f[0], "work") == 0 && n == 10) {
    tm_work_result w;
    int32_t rc;
    if (!parse_task(f + 1, &task)) return "bad task";
    if (!parse_hex_exact(f[8], a32, 32) || !parse_u64(f[9], &u)) return "bad key or nonce";
    rc = tm_compute_work(&task, a32, u, &scratch, &w);
    if (rc != TM_OK) return "tm_compute_work failed";
    print_work(&w);
    return NULL;
  }
  if (strcmp(f[0], "search") == 0 && n == 13) {
    tm_tensor_solution sol;
    tm_thresholds th;
    int32_t rc;
    if (!parse_task(f + 1, &task)) return "bad task";
    if (!parse_hex_exact(f[8], a32, 32) || !parse_u64(f[9], &start) || !parse_u64(f[10], &count) ||
        !parse_u64(f[11], &thr) || !parse_u64(f[12], &pdmax) || thr > TM_MML_ONE_Q16 || pdmax > 64)
      return "bad search arguments";
    th.mml_threshold_q16 = (uint32_t)thr;
    th.path_distance_max = (uint8_t)pdmax;
    rc = tm_search_tensor(&task, a32, start, count, &th, &scratch, &sol);
    if (rc == TM_FOUND) {
      put_str("found ");
      put_u64(sol.nonce);
      put_char(' ');
      put_u64(sol.iterations);
      put_char(' ');
      print_work(&sol.work);
    } else if (rc == TM_NOT_FOUND) {
      put_str("not_found ");
      put_u64(sol.iterations);
    } else {
      return "tm_search_tensor failed";
    }
    return NULL;
  }
  if (strcmp(f[0], "crosscheck") == 0 && n == 11) {
    tm_tensor_solution sol;
    tm_thresholds th;
    uint64_t i;
    th.mml_threshold_q16 = TM_MML_ONE_Q16;
    th.path_distance_max = 64;
    if (!parse_task(f + 1, &task)) return "bad task";
    if (!parse_hex_exact(f[8], a32, 32) || !parse_u64(f[9], &start) || !parse_u64(f[10], &count))
      return "bad crosscheck arguments";
    /* With thresholds every result meets, each one-nonce search is a hit, whose shortcut
     * (path signature, distance, mml from the accumulators) is checked against tm_compute_work. */
    for (i = 0; i < count; i++) {
      int32_t rc = tm_search_tensor(&task, a32, start + i, 1, &th, &scratch, &sol);
      if (rc != TM_FOUND || sol.nonce != start + i) {
        put_str("mismatch ");
        put_u64(start + i);
        return NULL;
      }
    }
    put_str("ok ");
    put_u64(count);
    return NULL;
  }
  if (strcmp(f[0], "header") == 0 && n == 7) {
    if (!parse_i64(f[1], &q) || !parse_i64(f[2], &r) || !parse_i64(f[3], &s) || q < INT32_MIN || q > INT32_MAX ||
        r < INT32_MIN || r > INT32_MAX || s < INT32_MIN || s > INT32_MAX)
      return "bad coordinate";
    if (!parse_hex_exact(f[4], a32, 32) || !parse_hex_exact(f[5], b32, 32) || !parse_u64(f[6], &u))
      return "bad header fields";
    if (tm_hex_encode_header((int32_t)q, (int32_t)r, (int32_t)s, a32, b32, u, header) != TM_OK)
      return "tm_hex_encode_header rejected the fields";
    print_hex(header, 88);
    put_char(' ');
    tm_hex_pow_hash(header, a32);
    print_hex(a32, 32);
    put_char(' ');
    tm_hex_block_hash(header, a32);
    print_hex(a32, 32);
    return NULL;
  }
  if (strcmp(f[0], "meets") == 0 && n == 3) {
    if (!parse_hex_exact(f[1], a32, 32) || !parse_hex_exact(f[2], b32, 32)) return "bad hash or target";
    put_u64((uint64_t)tm_hex_hash_meets_target(a32, b32));
    return NULL;
  }
  if ((strcmp(f[0], "search_block") == 0 || strcmp(f[0], "search_block_port") == 0) && n == 5) {
    tm_block_solution sol;
    int32_t rc;
    /* search_block_port: through the SHA-256 port seam, with a port counting its calls */
    const int via_port = f[0][12] == '_';
    if (!parse_hex_exact(f[1], header, TM_HEX_PREFIX_BYTES) || !parse_hex_exact(f[2], b32, 32) ||
        !parse_u64(f[3], &start) || !parse_u64(f[4], &count))
      return "bad search_block arguments";
    if (via_port) {
      uint64_t calls = 0;
      const tm_sha_port port = {counting_compress, &calls};
      rc = tm_search_block_port(&port, header, b32, start, count, &sol);
      if (rc >= 0 && calls != sol.iterations) return "the port was not called once per nonce";
    } else {
      rc = tm_search_block(header, b32, start, count, &sol);
    }
    if (rc == TM_FOUND) {
      put_str("found ");
      put_u64(sol.nonce);
      put_char(' ');
      put_u64(sol.iterations);
      put_char(' ');
      print_hex(sol.pow_hash, 32);
    } else if (rc == TM_NOT_FOUND) {
      put_str("not_found ");
      put_u64(sol.iterations);
    } else {
      return "tm_search_block failed";
    }
    return NULL;
  }
  return "unknown command or wrong number of fields";
}

void tm_vector_line(char *line, char *answer, uint32_t answer_cap) {
  char *fields[MAX_FIELDS];
  const char *error;
  int n;
  out = answer;
  out_len = 0;
  out_cap = answer_cap;
  answer[0] = '\0';
  n = split(line, fields);
  if (n == 0) {
    put_str("error empty line");
    return;
  }
  error = run(fields, n);
  if (error) {
    out_len = 0;
    put_str("error ");
    put_str(error);
  }
}
