/*
 * sha512.h: FIPS 180-4 SHA-512, written for this core (the hash of ed25519, RFC 8032).
 *
 * Memory: a tm_sha512_ctx is 208 bytes; tm_sha512_compress keeps its 80-word message schedule
 * (640 bytes) on the stack.
 */
#ifndef TM_SHA512_H
#define TM_SHA512_H

#include <stdint.h>

#define TM_SHA512_BYTES 64u
#define TM_SHA512_BLOCK_BYTES 128u

typedef struct {
  uint64_t h[8];       /* chaining state */
  uint64_t bytes;      /* message bytes absorbed so far (messages are below 2^61 bytes) */
  uint8_t block[128];  /* pending partial block */
  uint32_t block_used; /* bytes pending in block, 0..127 */
} tm_sha512_ctx;

void tm_sha512_init(tm_sha512_ctx *ctx);
void tm_sha512_update(tm_sha512_ctx *ctx, const uint8_t *data, uint32_t len);
/* Writes the 64-byte digest. The context must be re-initialised before reuse. */
void tm_sha512_final(tm_sha512_ctx *ctx, uint8_t out[64]);

/* SHA-512 of one byte string. */
void tm_sha512(const uint8_t *data, uint32_t len, uint8_t out[64]);

#endif
