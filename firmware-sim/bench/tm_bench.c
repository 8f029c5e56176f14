/*
 * tm-bench: nonce rates of the C core on the host. Reads commands on stdin, one per line, and
 * answers each with one line (bench/firmware-sim.bench.ts drives it, interleaving its rounds
 * with the TypeScript reference):
 *
 *   tensor <search|work> <op> <N> <F> <challenge_hash> <pubkey> <round_ms>
 *     -> <operations per second> <scratch bytes>
 *   block <search|pow> <header_prefix_80_bytes> <round_ms>
 *     -> <operations per second>
 *
 * Each command is one timed round of about round_ms milliseconds (wall clock), after a short
 * calibration. `tensor search` runs tm_search_tensor with thresholds no result meets, so every
 * nonce is a full iteration; `tensor work` runs tm_compute_work; `block search` runs
 * tm_search_block with a target no hash meets; `block pow` hashes whole headers.
 */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/tm_core.h"
#include "../core/tm_hexchain.h"
#include "../core/tm_tensor.h"

static int8_t input[TM_MAX_TENSOR_DIM * TM_MAX_TENSOR_DIM];
static int32_t words[TM_SCRATCH_WORDS_ANY(TM_MAX_TENSOR_DIM, TM_MAX_CONV_FILTERS)];
static char line[4096];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int from_hex(const char *s, uint8_t *out, size_t n) {
  size_t i;
  if (strlen(s) != 2 * n) return 0;
  for (i = 0; i < n; i++) {
    unsigned v;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return 0;
    out[i] = (uint8_t)v;
  }
  return 1;
}

/* The kinds of work a round repeats. */
typedef enum { TENSOR_SEARCH, TENSOR_WORK, BLOCK_SEARCH, POW_HASH } kind;

typedef struct {
  const tm_task *task;
  const uint8_t *key;
  const tm_scratch *scratch;
  const uint8_t *prefix;
  uint64_t next_nonce;
  volatile uint32_t sink;
} bench_ctx;

/* Runs `batch` operations of a kind; returns how many were done. */
static uint64_t run_batch(bench_ctx *c, kind k, uint64_t batch) {
  static const uint8_t impossible[32] = {0}; /* only an all-zero hash would meet it */
  uint64_t i;
  if (k == TENSOR_SEARCH) {
    tm_tensor_solution sol;
    tm_thresholds never;
    never.mml_threshold_q16 = 0; /* every score is > 0 */
    never.path_distance_max = 0;
    tm_search_tensor(c->task, c->key, c->next_nonce, batch, &never, c->scratch, &sol);
    c->next_nonce += batch;
    c->sink ^= (uint32_t)sol.iterations;
  } else if (k == TENSOR_WORK) {
    tm_work_result w;
    for (i = 0; i < batch; i++) {
      tm_compute_work(c->task, c->key, c->next_nonce++, c->scratch, &w);
      c->sink ^= w.computation_hash[0];
    }
  } else if (k == BLOCK_SEARCH) {
    tm_block_solution sol;
    tm_search_block(c->prefix, impossible, c->next_nonce, batch, &sol);
    c->next_nonce += batch;
    c->sink ^= (uint32_t)sol.iterations;
  } else {
    uint8_t header[88], hash[32];
    memcpy(header, c->prefix, 80);
    for (i = 0; i < batch; i++) {
      uint64_t n = c->next_nonce++;
      int b;
      for (b = 0; b < 8; b++) header[80 + b] = (uint8_t)(n >> (8 * b));
      tm_hex_pow_hash(header, hash);
      c->sink ^= hash[0];
    }
  }
  return batch;
}

/* The rate (operations per second) of one round of about round_ms, after calibrating a batch
 * of about 1/20 of a round. */
static double rate(bench_ctx *c, kind k, double round_ms) {
  uint64_t batch = 1, ops = 0;
  double t0, t;
  for (;;) {
    double s0 = now_s(), dt;
    run_batch(c, k, batch);
    dt = now_s() - s0;
    if (dt * 1000.0 >= round_ms / 20.0 || batch >= (UINT64_C(1) << 30)) break;
    batch *= 2;
  }
  t0 = t = now_s();
  while ((t - t0) * 1000.0 < round_ms) {
    ops += run_batch(c, k, batch);
    t = now_s();
  }
  return (double)ops / (t - t0);
}

int main(void) {
  while (fgets(line, sizeof line, stdin)) {
    char what[16], op[16], hash_hex[80], key_hex[80], prefix_hex[200];
    unsigned n, f;
    double round_ms;
    bench_ctx c;
    memset(&c, 0, sizeof c);
    if (sscanf(line, "tensor %15s %15s %u %u %79s %79s %lf", what, op, &n, &f, hash_hex, key_hex, &round_ms) == 7) {
      uint8_t hash[32], key[32];
      tm_task task;
      tm_scratch scratch;
      const uint8_t operation = strcmp(op, "conv") == 0 ? TM_OP_CONV : TM_OP_MATMUL;
      const int search = strcmp(what, "search") == 0;
      if ((!search && strcmp(what, "work") != 0) || !from_hex(hash_hex, hash, 32) || !from_hex(key_hex, key, 32) ||
          tm_task_init(&task, hash, operation, TM_ACT_RELU, (uint16_t)n, (uint8_t)f, input) != TM_OK) {
        puts("error bad tensor arguments");
        fflush(stdout);
        continue;
      }
      scratch.words = words;
      scratch.n_words = tm_scratch_words(&task);
      c.task = &task;
      c.key = key;
      c.scratch = &scratch;
      printf("%.1f %lu\n", rate(&c, search ? TENSOR_SEARCH : TENSOR_WORK, round_ms),
             (unsigned long)scratch.n_words * 4ul);
    } else if (sscanf(line, "block %15s %199s %lf", what, prefix_hex, &round_ms) == 3) {
      uint8_t prefix[80];
      const int search = strcmp(what, "search") == 0;
      if ((!search && strcmp(what, "pow") != 0) || !from_hex(prefix_hex, prefix, 80)) {
        puts("error bad block arguments");
        fflush(stdout);
        continue;
      }
      c.prefix = prefix;
      printf("%.1f\n", rate(&c, search ? BLOCK_SEARCH : POW_HASH, round_ms));
    } else {
      puts("error unknown command");
    }
    fflush(stdout);
  }
  return 0;
}
