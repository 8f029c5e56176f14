/*
 * tm_sha_port.h: the seam for a SHA-256 peripheral in the v4.1 block search.
 *
 * The block search spends all its time in one SHA-256 compression per nonce: the midstate of
 * the first 64 header bytes is fixed, and each nonce is one compression of the last block
 * (header bytes 64..80, the nonce, padding and the 704-bit length). A board whose SHA
 * accelerator can be loaded with an arbitrary state (ESP32-S2, -S3, -C3, -C6: the SHA_H_MEM
 * registers are writable, and SHA_CONTINUE_REG processes one block from that state) can do
 * exactly this compression in hardware; the original ESP32's accelerator cannot load a state
 * and can only serve whole messages, so a port for it hashes the full 88-byte header instead.
 *
 * The board port implements `compress` and passes a tm_sha_port to tm_search_block_port (or
 * sets tm_device_config.sha_port, which tm_proto uses for JOB_HEX). Contract:
 *   - out = SHA-256 compression of the 16 big-endian message words w16 from state midstate;
 *     exactly tm_sha256_compress_words(copy of midstate, w16), bit for bit;
 *   - it may be called with the same midstate many times in a row (a port may keep it loaded
 *     and only rewrite the message words: the search never changes it within one call);
 *   - it must not fail: a peripheral that is busy (shared with TLS, say) waits or falls back to
 *     tm_sha256_compress_words itself;
 *   - ctx is the port's own state (a lock, the register base), passed back untouched.
 * A NULL port, or a NULL compress, is the portable software compression.
 *
 * The search stays in C either way: the target comparison, the nonce bookkeeping and the
 * 2^53 - 1 bound are the core's, so a port cannot change what counts as a solution; the
 * vector run checks tm_search_block_port against the vectors with the software port.
 */
#ifndef TM_SHA_PORT_H
#define TM_SHA_PORT_H

#include <stdint.h>

#include "tm_hexchain.h"

typedef struct {
  void (*compress)(void *ctx, const uint32_t midstate[8], const uint32_t w16[16], uint32_t out[8]);
  void *ctx;
} tm_sha_port;

/* The portable compression, as a port (what a NULL port means). */
void tm_sha_port_software(void *ctx, const uint32_t midstate[8], const uint32_t w16[16], uint32_t out[8]);

/* tm_search_block with every per-nonce compression done by the port (NULL: software).
 * Same arguments, results and return codes as tm_search_block. */
int32_t tm_search_block_port(const tm_sha_port *port, const uint8_t header_prefix[80], const uint8_t target[32],
                             uint64_t start, uint64_t count, tm_block_solution *out);

#endif
