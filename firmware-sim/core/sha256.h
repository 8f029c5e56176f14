/*
 * sha256.h: FIPS 180-4 SHA-256, written for this core (incremental, one-shot and midstate).
 *
 * Memory: a tm_sha256_ctx is 112 bytes (108 used); no other state. The deepest stack use of a
 * function here is about 0.5 KiB (tm_sha256: a context, then one compression with its 64-word
 * message schedule).
 */
#ifndef TM_SHA256_H
#define TM_SHA256_H

#include <stdint.h>

#define TM_SHA256_BYTES 32u
#define TM_SHA256_BLOCK_BYTES 64u

/* FIPS 180-4 4.2.2 round constants and 5.3.3 initial state; also read by the native kernels
 * (firmware-sim/native), which feed them to the CPU's SHA extensions. */
extern const uint32_t tm_sha256_k[64];
extern const uint32_t tm_sha256_iv[8];

typedef struct {
  uint32_t h[8];         /* chaining state */
  uint64_t bytes;        /* message bytes absorbed so far */
  uint8_t block[64];     /* pending partial block */
  uint32_t block_used;   /* bytes pending in block, 0..63 */
} tm_sha256_ctx;

void tm_sha256_init(tm_sha256_ctx *ctx);
void tm_sha256_update(tm_sha256_ctx *ctx, const uint8_t *data, uint32_t len);
/* Writes the 32-byte digest. The context must be re-initialised (or re-copied) before reuse. */
void tm_sha256_final(tm_sha256_ctx *ctx, uint8_t out[32]);

/* SHA-256 of one byte string. */
void tm_sha256(const uint8_t *data, uint32_t len, uint8_t out[32]);

/* Starts taggedHash(tag, ...) = SHA-256(ASCII(tag) || 0x00 || ...); continue with update. */
void tm_tagged_init(tm_sha256_ctx *ctx, const char *tag);

/*
 * The compression function: processes one 64-byte block into the state h[8]. Exposed for the
 * midstate searches: after absorbing a 64-byte prefix, a context's h[] is the midstate, and
 * every candidate is one compression of its last block.
 */
void tm_sha256_compress(uint32_t h[8], const uint8_t block[64]);
/* The same, with the block already given as 16 big-endian message words. */
void tm_sha256_compress_words(uint32_t h[8], const uint32_t w16[16]);

/* Writes a state as the 32-byte big-endian digest. */
void tm_sha256_state_bytes(const uint32_t h[8], uint8_t out[32]);

/* expand(seed, n): the first n bytes of SHA-256(seed || u32le(0)) || SHA-256(seed || u32le(1)) || ... */
void tm_expand(const uint8_t seed[32], uint8_t *out, uint32_t n);

#endif
