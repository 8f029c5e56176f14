/*
 * tm-icount: instructions per nonce of the core's searches (and per ed25519 signature) on rv32imc, read from the
 * minstret counter. Run under qemu with `-icount shift=0`, where minstret counts retired
 * guest instructions exactly (make rv32-icount). The searches are given thresholds no nonce
 * meets, so every nonce is a full miss, the common case while mining.
 */
#include <stdio.h>

#include "../core/tm_core.h"
#include "../core/tm_ed25519.h"
#include "../core/tm_hexchain.h"
#include "../core/tm_sha_port.h"
#include "../core/tm_tensor.h"

static uint64_t instret(void) {
  uint32_t hi, lo, hi2;
  do {
    /* csrrs rd, csr, x0 (csrr) as a raw encoding: the core is built for plain rv32imc, whose
     * assembler does not accept CSR mnemonics without Zicsr; minstreth 0xb82, minstret 0xb02 */
    __asm__ volatile(".insn i 0x73, 2, %0, x0, -1150" : "=r"(hi));
    __asm__ volatile(".insn i 0x73, 2, %0, x0, -1278" : "=r"(lo));
    __asm__ volatile(".insn i 0x73, 2, %0, x0, -1150" : "=r"(hi2));
  } while (hi != hi2);
  return ((uint64_t)hi << 32) | lo;
}

static int32_t scratch_words[TM_SCRATCH_WORDS_ANY(32u, 4u)];
static int8_t input[32 * 32];

/* Prints one row: name, nonces, instructions per nonce (integer and tenths). */
static void row(const char *name, uint64_t nonces, uint64_t instructions) {
  const uint64_t per10 = instructions * 10u / nonces;
  printf("icount %s nonces=%lu instructions=%lu per_nonce=%lu.%lu\n", name, (unsigned long)nonces,
         (unsigned long)instructions, (unsigned long)(per10 / 10u), (unsigned long)(per10 % 10u));
}

static void tensor(const char *name, uint8_t op, uint16_t n, uint8_t f, uint64_t nonces) {
  uint8_t hash[32], key[32];
  tm_task task;
  tm_thresholds th = {TM_MML_ONE_Q16, 0};
  tm_tensor_solution sol;
  const tm_scratch scratch = {scratch_words, sizeof scratch_words / sizeof scratch_words[0]};
  uint64_t t0;
  uint32_t i;
  for (i = 0; i < 32; i++) {
    hash[i] = (uint8_t)(i * 7u + 1u);
    key[i] = (uint8_t)(i * 13u + 5u);
  }
  tm_task_init(&task, hash, op, TM_ACT_RELU, n, f, input);
  t0 = instret();
  tm_search_tensor(&task, key, 0, nonces, &th, &scratch, &sol);
  row(name, sol.iterations, instret() - t0);
}

/* Instructions per ed25519 operation on a 117-byte message (a signed request's size). */
static void ed25519(void) {
  uint8_t seed[32], pub[32], msg[117], sig[64];
  uint64_t t0, sign_i, verify_i, public_i;
  uint32_t i;
  int32_t ok;
  for (i = 0; i < 32u; i++) seed[i] = (uint8_t)(i * 29u + 3u);
  for (i = 0; i < sizeof msg; i++) msg[i] = (uint8_t)(i * 11u + 7u);
  t0 = instret();
  tm_ed25519_public_key(seed, pub);
  public_i = instret() - t0;
  t0 = instret();
  tm_ed25519_sign(seed, pub, msg, sizeof msg, sig);
  sign_i = instret() - t0;
  t0 = instret();
  ok = tm_ed25519_verify(sig, msg, sizeof msg, pub);
  verify_i = instret() - t0;
  printf("icount ed25519-public-key instructions=%lu\n", (unsigned long)public_i);
  printf("icount ed25519-sign signatures=1 instructions=%lu\n", (unsigned long)sign_i);
  printf("icount ed25519-verify signatures=1 instructions=%lu valid=%d\n", (unsigned long)verify_i, (int)ok);
}

int main(void) {
  uint8_t prefix[80] = {0}, target[32] = {0};
  tm_block_solution b;
  uint64_t t0;
  t0 = instret();
  tm_search_block(prefix, target, 1, 20000, &b); /* target 0: never met */
  row("hexchain-block", b.iterations, instret() - t0);
  t0 = instret();
  tm_search_block_port(0, prefix, target, 1, 20000, &b);
  row("hexchain-block-port", b.iterations, instret() - t0);
  tensor("tensor-esp32-matmul-32", TM_OP_MATMUL, 32, 0, 40);
  tensor("tensor-esp32-conv-4x32", TM_OP_CONV, 32, 4, 40);
  tensor("tensor-esp8266-matmul-16", TM_OP_MATMUL, 16, 0, 100);
  ed25519();
  return 0;
}
