/*
 * tm_ed25519.h: ed25519 signatures (RFC 8032 section 5.1, pure ed25519: no prehash, no
 * context), written for this core: the board's own key signs its registration, requests,
 * blocks and proofs, and verifies the validator's node-signed callbacks.
 *
 * Portable C99 like the rest of the core: fixed-width unsigned integers only (no right shift of
 * a negative value anywhere), no allocation, no globals, no libc; SHA-512 from sha512.c.
 *
 *   - Keys: the secret key is the RFC's 32-byte seed; the public key is the 32-byte encoding of
 *     [s]B where s is the clamped low half of SHA-512(seed).
 *   - Signing is deterministic (RFC 8032) and runs in time independent of the secret: the
 *     fixed-base multiplication reads its table by constant-time selection, the scalar
 *     arithmetic mod L has no secret-dependent branch, and the secrets on the stack are wiped.
 *   - Verification follows RFC 8032 5.1.7 with the cofactorless equation, like node:crypto
 *     (OpenSSL): S < L, A decodes (y < p, x recoverable, not x = 0 with the sign bit set),
 *     k = SHA-512(R || A || M) mod L, and the encoding of [S]B - [k]A equals R byte for byte
 *     (so a non-canonical R never verifies). Variable time: everything it handles is public.
 *
 * Memory: no scratch; stack about 2.5 KiB for verification (a table of 16 multiples of -A),
 * about 1.2 KiB for signing (the table of multiples of B is constant data, 1,920 bytes).
 */
#ifndef TM_ED25519_H
#define TM_ED25519_H

#include <stdint.h>

#define TM_ED25519_SEED_BYTES 32u
#define TM_ED25519_PUBLIC_KEY_BYTES 32u
#define TM_ED25519_SIGNATURE_BYTES 64u

/* The public key of a 32-byte secret seed. */
void tm_ed25519_public_key(const uint8_t seed[32], uint8_t public_key[32]);

/*
 * The signature of msg[0..len) by the key whose seed is `seed` and whose public key is
 * `public_key` (pass the one tm_ed25519_public_key gave: a wrong one makes a signature that
 * does not verify).
 */
void tm_ed25519_sign(const uint8_t seed[32], const uint8_t public_key[32], const uint8_t *msg, uint32_t len,
                     uint8_t signature[64]);

/* 1 when `signature` is a valid signature of msg[0..len) by `public_key`, else 0. */
int32_t tm_ed25519_verify(const uint8_t signature[64], const uint8_t *msg, uint32_t len,
                          const uint8_t public_key[32]);

/* A message given in pieces (signed as their concatenation), so that a caller never copies a
 * body next to its prefix: the signed requests, submissions and callbacks are built this way. */
typedef struct {
  const uint8_t *p;
  uint32_t n;
} tm_bytes;

void tm_ed25519_sign_parts(const uint8_t seed[32], const uint8_t public_key[32], const tm_bytes *parts,
                           uint32_t count, uint8_t signature[64]);
int32_t tm_ed25519_verify_parts(const uint8_t signature[64], const tm_bytes *parts, uint32_t count,
                                const uint8_t public_key[32]);

#endif
