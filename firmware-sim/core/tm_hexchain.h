/*
 * tm_hexchain.h: v4.1 hexchain proof of work (docs/protocol.md section 4.7): the 88-byte block
 * header, its pow hash and block hash, the big-endian target comparison and a midstate nonce
 * search.
 *
 * Memory: no scratch. tm_search_block keeps a 32-byte midstate, the last block as 16 words and
 * the target on its stack; with the compression below it, under 0.7 KiB of stack in all.
 */
#ifndef TM_HEXCHAIN_H
#define TM_HEXCHAIN_H

#include <stdint.h>

#include "tm_core.h"

#define TM_HEX_HEADER_VERSION 0x00040100u
#define TM_HEX_HEADER_BYTES 88u
#define TM_HEX_NONCE_OFFSET 80u
/* The header without its nonce: what a miner receives and searches over. */
#define TM_HEX_PREFIX_BYTES 80u
/* The nonce-independent bytes [0, 64) compressed once into the midstate. */
#define TM_HEX_MIDSTATE_PREFIX_BYTES 64u
#define TM_LATTICE_RADIUS_MAX INT32_C(1048576)

typedef struct {
  uint64_t nonce;       /* the solution (valid when the search returns TM_FOUND) */
  uint64_t iterations;  /* nonces hashed, the solution included */
  uint8_t pow_hash[32]; /* SHA-256 of the solved header */
} tm_block_solution;

/* TM_OK when q + r + s = 0 and max(|q|, |r|, |s|) <= 2^20, else TM_ERR_ARGUMENT. */
int32_t tm_hex_check_coord(int32_t q, int32_t r, int32_t s);

/*
 * Writes the 88-byte header: u32le(version) || i32le(q) || i32le(r) || i32le(s) ||
 * challenge_hash || miner pubkey || u64le(nonce). Returns TM_OK, TM_ERR_ARGUMENT (coordinate)
 * or TM_ERR_NONCE (nonce > 2^53 - 1). The first TM_HEX_PREFIX_BYTES of it are the search prefix.
 */
int32_t tm_hex_encode_header(int32_t q, int32_t r, int32_t s, const uint8_t challenge_hash[32],
                             const uint8_t pubkey[32], uint64_t nonce, uint8_t out[88]);

/* pow_hash = SHA-256(header), untagged. */
void tm_hex_pow_hash(const uint8_t header[88], uint8_t out[32]);
/* block_hash = taggedHash("PTM41/block", header). */
void tm_hex_block_hash(const uint8_t header[88], uint8_t out[32]);

/* 1 when hash <= target as 256-bit big-endian integers (equal counts as valid), else 0. */
int32_t tm_hex_hash_meets_target(const uint8_t hash[32], const uint8_t target[32]);

/* 1 when the target is within the protocol's difficulty range [16, 2^53 - 1]: at most 0fff...ff
 * and at least floor((2^256 - 1) / (2^53 - 1)). A miner refuses other targets. */
int32_t tm_hex_target_in_range(const uint8_t target[32]);

/*
 * Hashes the headers header_prefix || u64le(nonce) for nonce = start, start + 1, ..., at most
 * `count` of them and never beyond 2^53 - 1, and stops at the first whose pow hash is <= target.
 * The first 64 header bytes are compressed once; each nonce costs one SHA-256 compression of the
 * last block. Returns TM_FOUND, TM_NOT_FOUND (out->iterations hashed) or TM_ERR_NONCE.
 */
int32_t tm_search_block(const uint8_t header_prefix[80], const uint8_t target[32], uint64_t start, uint64_t count,
                        tm_block_solution *out);

#endif
