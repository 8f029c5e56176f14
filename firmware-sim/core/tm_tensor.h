/*
 * tm_tensor.h: v4.0 proof of tensor work (docs/protocol.md section 3), in integer arithmetic.
 *
 * One nonce iteration (rule set 2), for challenge hash C, miner key K and nonce n:
 *   seed  = taggedHash("PTM4/work", C || K || u64le(n))
 *   W     = int8(expand(seed, N*N)) (matmul) | int8(expand(seed, F*9)) (conv)
 *   Z     = X . W | conv3x3(X, W)                     int32 accumulators
 *   acc   = taggedHash("PTM4r2/acc", u8(rank) || u16le(d)... || fold(Z)), fold: 8 u32 lanes,
 *           lane i%8 = rotl32(lane ^ Z[i], 13) * 0x9E3779B1
 *   A     = clamp(normalize(Z) + (int8(acc[31]) >> 1), -128, 127)
 *   Y     = relu | sigmoid | tanh (A);  result = taggedHash("PTM4r2/result", acc || Y)
 *   fired = bitmap of A > 0;  path = taggedHash("PTM4r2/path", acc || fired)[0..8]; mml = MML(fired)
 *
 * Memory (all caller-provided, no allocation, no globals):
 *   - the task's input X: N*N bytes (derive it with tm_task_init);
 *   - scratch: TM_SCRATCH_WORDS_FOR(op, N, F) int32 words, that is
 *       accumulators Z (4 bytes per output) + weights + fired bitmap; see the table in README.md
 *       (esp32 at N = 32: matmul 5,248 B, conv with 4 filters 16,932 B);
 *   - stack: about 1.7 KiB at the deepest (tm_search_tensor -> tm_compute_work -> SHA-256,
 *     x86-64, gcc -fstack-usage); SHA-256 contexts and a 64-byte output buffer, no arrays
 *     that grow with N.
 * The result Y is never stored: it is streamed into the result hash.
 */
#ifndef TM_TENSOR_H
#define TM_TENSOR_H

#include <stdint.h>

#include "tm_core.h"

#define TM_OP_MATMUL 0u
#define TM_OP_CONV 1u

#define TM_ACT_RELU 0u
#define TM_ACT_SIGMOID 1u
#define TM_ACT_TANH 2u

/* Device codes and their largest tensors (docs/protocol.md 3.1). */
#define TM_DEVICE_NATIVE 0u
#define TM_DEVICE_ESP32 1u
#define TM_DEVICE_ESP8266 2u
#define TM_ESP32_MAX_DIM 32u
#define TM_ESP32_CONV_FILTERS 4u
#define TM_ESP8266_MAX_DIM 16u

/* Q16 score of ratio 1.0. */
#define TM_MML_ONE_Q16 65536u

/* Scratch sizes in int32 words: accumulators, then weights and the fired bitmap as bytes. */
#define TM_SCRATCH_WORDS_MATMUL(n) ((n) * (n) + ((n) * (n) + ((n) * (n) + 7u) / 8u + 3u) / 4u)
#define TM_SCRATCH_WORDS_CONV(n, f) ((f) * (n) * (n) + ((f) * 9u + ((f) * (n) * (n) + 7u) / 8u + 3u) / 4u)
#define TM_SCRATCH_WORDS_FOR(op, n, f) ((op) == TM_OP_CONV ? TM_SCRATCH_WORDS_CONV(n, f) : TM_SCRATCH_WORDS_MATMUL(n))
/* Enough for either operation of a device type (e.g. TM_SCRATCH_WORDS_ANY(32u, 4u) for esp32). */
#define TM_SCRATCH_WORDS_ANY(n, f)                                                                     \
  (TM_SCRATCH_WORDS_CONV(n, f) > TM_SCRATCH_WORDS_MATMUL(n) ? TM_SCRATCH_WORDS_CONV(n, f)             \
                                                             : TM_SCRATCH_WORDS_MATMUL(n))

/* A challenge as a miner needs it. */
typedef struct {
  uint8_t challenge_hash[32];
  uint8_t operation;   /* TM_OP_MATMUL or TM_OP_CONV */
  uint8_t activation;  /* TM_ACT_RELU, TM_ACT_SIGMOID or TM_ACT_TANH */
  uint16_t dim;        /* N, in [TM_MIN_TENSOR_DIM, TM_MAX_TENSOR_DIM] */
  uint8_t filters;     /* F for conv, in [1, TM_MAX_CONV_FILTERS]; ignored for matmul */
  const int8_t *input; /* X, N*N int8 row-major, owned by the caller */
  uint8_t path_target[8];
} tm_task;

typedef struct {
  uint32_t mml_threshold_q16; /* a result passes when mml_score_q16 <= this */
  uint8_t path_distance_max;  /* ... and path_distance <= this */
} tm_thresholds;

/* Caller-owned working memory: `words` int32 words (4-byte aligned by its type). */
typedef struct {
  int32_t *words;
  uint32_t n_words;
} tm_scratch;

/* Everything one nonce iteration produces (the proof fields). */
typedef struct {
  uint8_t work_seed[32];
  uint8_t accumulator_hash[32]; /* taggedHash("PTM4r2/acc", shape || fold(Z)) */
  uint8_t tensor_result_hash[32];
  uint32_t mml_score_q16;
  uint8_t path_signature[8];
  uint8_t path_distance;
  uint8_t computation_hash[32];
} tm_work_result;

typedef struct {
  uint64_t nonce;      /* the solution (valid when the search returns TM_FOUND) */
  uint64_t iterations; /* nonces tried, the solution included */
  tm_work_result work; /* the solution's full result */
} tm_tensor_solution;

/* X = int8(expand(taggedHash("PTM4/input", challenge_hash), dim * dim)); writes dim*dim bytes. */
void tm_derive_input(const uint8_t challenge_hash[32], uint16_t dim, int8_t *out);
/* path_target = taggedHash("PTM4/path-target", challenge_hash)[0..8]. */
void tm_derive_path_target(const uint8_t challenge_hash[32], uint8_t out[8]);

/*
 * Fills a task from the challenge fields, deriving X into `input_buffer` (dim*dim bytes) and the
 * path target from the challenge hash. A miner that also received X compares it with the
 * derived one and refuses the challenge when they differ. Returns TM_OK or TM_ERR_ARGUMENT.
 */
int32_t tm_task_init(tm_task *task, const uint8_t challenge_hash[32], uint8_t operation, uint8_t activation,
                     uint16_t dim, uint8_t filters, int8_t *input_buffer);

/* Checks the ranges of a task's fields: TM_OK or TM_ERR_ARGUMENT. */
int32_t tm_task_check(const tm_task *task);

/* Scratch words a task needs (0 for an invalid task). */
uint32_t tm_scratch_words(const tm_task *task);
/* Number of outputs: N*N (matmul) or F*N*N (conv). */
uint32_t tm_output_count(const tm_task *task);

/* seed = taggedHash("PTM4/work", challenge_hash || pubkey || u64le(nonce)). */
void tm_work_seed(const uint8_t challenge_hash[32], const uint8_t pubkey[32], uint64_t nonce, uint8_t out[32]);

/*
 * One full nonce iteration (what a validator recomputes). Returns TM_OK, TM_ERR_ARGUMENT,
 * TM_ERR_SCRATCH (fewer than tm_scratch_words(task) words) or TM_ERR_NONCE (nonce > 2^53 - 1).
 */
int32_t tm_compute_work(const tm_task *task, const uint8_t pubkey[32], uint64_t nonce, const tm_scratch *scratch,
                        tm_work_result *out);

/*
 * Tries nonces start, start + 1, ..., at most `count` of them (and never beyond 2^53 - 1), and
 * stops at the first whose result meets the thresholds. Per nonce it computes the work seed from
 * a midstate, the weights, the accumulators, the fired bitmap, the path distance and (when the
 * path passes) the MML score; the activations and the result hash are computed, with
 * tm_compute_work, only for the solution. Returns TM_FOUND (out holds the solution),
 * TM_NOT_FOUND (out->iterations nonces tried) or an error code. The same scratch as
 * tm_compute_work. Call it with a bounded count to keep a device responsive.
 */
int32_t tm_search_tensor(const tm_task *task, const uint8_t pubkey[32], uint64_t start, uint64_t count,
                         const tm_thresholds *thresholds, const tm_scratch *scratch, tm_tensor_solution *out);

/* Building blocks, exposed for the vectors and for tests. */

/* Activations: input Q5 in [-128, 127], output Q7. */
int32_t tm_relu(int32_t a);
int32_t tm_sigmoid(int32_t a);
int32_t tm_tanh(int32_t a);

/*
 * normalize (docs/protocol.md 3.3): m = floor(sum / count) (toward minus infinity, int64 sum),
 * D = Z - m, s = smallest s >= 0 with max|D| >> s <= 127, out = D >> s (floor). Inputs must lie
 * in [-2^21, 2^21] (the protocol's accumulators are within 2^20); returns TM_ERR_ARGUMENT
 * otherwise or when count is 0.
 */
int32_t tm_normalize(const int32_t *z, uint32_t count, int8_t *out);

/* MML(fired, count): the Q16 run-length description length of a bitmap (LSB first). count >= 1. */
uint32_t tm_mml_score_q16(const uint8_t *bitmap, uint32_t count);

/* popcount(a XOR b) over 8 bytes. */
uint32_t tm_path_distance(const uint8_t a[8], const uint8_t b[8]);

#endif
