/*
 * tm-bench-ed25519: ed25519 signatures and verifications per second of the C core on the host.
 * Reads commands on stdin, one per line, and answers each with one line (bench/net.bench.ts
 * drives it, interleaving its rounds with node:crypto):
 *
 *   sign <round_ms>    -> <signatures per second>
 *   verify <round_ms>  -> <verifications per second>
 *
 * The message is 117 bytes, the size of a signed request's message (docs/protocol.md 6.5).
 */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/tm_ed25519.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void) {
  uint8_t seed[32], pub[32], msg[117], sig[64];
  char line[128];
  unsigned i;
  for (i = 0; i < 32u; i++) seed[i] = (uint8_t)(i * 29u + 3u);
  for (i = 0; i < sizeof msg; i++) msg[i] = (uint8_t)(i * 11u + 7u);
  tm_ed25519_public_key(seed, pub);
  tm_ed25519_sign(seed, pub, msg, sizeof msg, sig);
  while (fgets(line, sizeof line, stdin)) {
    char kind[16];
    unsigned round_ms;
    double start, elapsed;
    unsigned long ops = 0;
    int32_t valid = 1;
    if (sscanf(line, "%15s %u", kind, &round_ms) != 2) {
      puts("error bad command");
      fflush(stdout);
      continue;
    }
    start = now_s();
    do {
      if (strcmp(kind, "sign") == 0) {
        msg[0]++; /* a new message each time: nothing can be cached */
        tm_ed25519_sign(seed, pub, msg, sizeof msg, sig);
      } else {
        valid &= tm_ed25519_verify(sig, msg, sizeof msg, pub);
      }
      ops++;
      elapsed = now_s() - start;
    } while (elapsed * 1000.0 < (double)round_ms);
    if (!valid) {
      puts("error a signature did not verify");
    } else {
      printf("%.1f\n", (double)ops / elapsed);
    }
    fflush(stdout);
  }
  return 0;
}
