/*
 * sha256.c: SHA-256 as specified in FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3, 6.2),
 * written for this core. No libc dependency.
 */
#include "sha256.h"

/* FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes. */
const uint32_t tm_sha256_k[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

/* FIPS 180-4 5.3.3: the first 32 bits of the fractional parts of the square roots of the first
 * 8 primes. */
const uint32_t tm_sha256_iv[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                  0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};

#define ROTR(x, n) ((uint32_t)((uint32_t)(x) >> (n)) | (uint32_t)((uint32_t)(x) << (32 - (n))))
#define CH(x, y, z) ((uint32_t)(((x) & (y)) ^ (~(x) & (z))))
#define MAJ(x, y, z) ((uint32_t)(((x) & (y)) ^ ((x) & (z)) ^ ((y) & (z))))
#define BSIG0(x) (ROTR(x, 2) ^ ROTR(x, 13) ^ ROTR(x, 22))
#define BSIG1(x) (ROTR(x, 6) ^ ROTR(x, 11) ^ ROTR(x, 25))
#define SSIG0(x) (ROTR(x, 7) ^ ROTR(x, 18) ^ ((uint32_t)(x) >> 3))
#define SSIG1(x) (ROTR(x, 17) ^ ROTR(x, 19) ^ ((uint32_t)(x) >> 10))

/* One round of FIPS 180-4 6.2.2 step 3, with the eight working variables renamed instead of
 * moved: d and h are the two that change. */
#define ROUND(a, b, c, d, e, f, g, h, t)                                 \
  do {                                                                 \
    const uint32_t t1 = (uint32_t)(h + BSIG1(e) + CH(e, f, g) + tm_sha256_k[t] + w[t]); \
    d = (uint32_t)(d + t1);                                            \
    h = (uint32_t)(t1 + BSIG0(a) + MAJ(a, b, c));                      \
  } while (0)

void tm_sha256_compress_words(uint32_t h[8], const uint32_t w16[16]) {
  uint32_t w[64]; /* the message schedule, FIPS 180-4 6.2.2 step 1 */
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  uint32_t t;
  for (t = 0; t < 16; t++) w[t] = w16[t];
  for (t = 16; t < 64; t++) w[t] = (uint32_t)(SSIG1(w[t - 2]) + w[t - 7] + SSIG0(w[t - 15]) + w[t - 16]);
  for (t = 0; t < 64; t += 8) {
    ROUND(a, b, c, d, e, f, g, hh, t);
    ROUND(hh, a, b, c, d, e, f, g, t + 1);
    ROUND(g, hh, a, b, c, d, e, f, t + 2);
    ROUND(f, g, hh, a, b, c, d, e, t + 3);
    ROUND(e, f, g, hh, a, b, c, d, t + 4);
    ROUND(d, e, f, g, hh, a, b, c, t + 5);
    ROUND(c, d, e, f, g, hh, a, b, t + 6);
    ROUND(b, c, d, e, f, g, hh, a, t + 7);
  }
  h[0] = (uint32_t)(h[0] + a);
  h[1] = (uint32_t)(h[1] + b);
  h[2] = (uint32_t)(h[2] + c);
  h[3] = (uint32_t)(h[3] + d);
  h[4] = (uint32_t)(h[4] + e);
  h[5] = (uint32_t)(h[5] + f);
  h[6] = (uint32_t)(h[6] + g);
  h[7] = (uint32_t)(h[7] + hh);
}

void tm_sha256_compress(uint32_t h[8], const uint8_t block[64]) {
  uint32_t w[16];
  uint32_t i;
  for (i = 0; i < 16; i++) {
    w[i] = ((uint32_t)block[4 * i] << 24) | ((uint32_t)block[4 * i + 1] << 16) |
           ((uint32_t)block[4 * i + 2] << 8) | (uint32_t)block[4 * i + 3];
  }
  tm_sha256_compress_words(h, w);
}

void tm_sha256_state_bytes(const uint32_t h[8], uint8_t out[32]) {
  uint32_t i;
  for (i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(h[i] >> 8);
    out[4 * i + 3] = (uint8_t)h[i];
  }
}

void tm_sha256_init(tm_sha256_ctx *ctx) {
  uint32_t i;
  for (i = 0; i < 8; i++) ctx->h[i] = tm_sha256_iv[i];
  ctx->bytes = 0;
  ctx->block_used = 0;
}

void tm_sha256_update(tm_sha256_ctx *ctx, const uint8_t *data, uint32_t len) {
  ctx->bytes += len;
  if (ctx->block_used > 0) {
    while (len > 0 && ctx->block_used < 64) {
      ctx->block[ctx->block_used++] = *data++;
      len--;
    }
    if (ctx->block_used < 64) return;
    tm_sha256_compress(ctx->h, ctx->block);
    ctx->block_used = 0;
  }
  while (len >= 64) {
    tm_sha256_compress(ctx->h, data);
    data += 64;
    len -= 64;
  }
  while (len > 0) {
    ctx->block[ctx->block_used++] = *data++;
    len--;
  }
}

void tm_sha256_final(tm_sha256_ctx *ctx, uint8_t out[32]) {
  /* FIPS 180-4 5.1.1: append 0x80, zeros up to 56 mod 64, then the bit length big-endian. */
  uint64_t bits = ctx->bytes * 8u;
  uint32_t i;
  ctx->block[ctx->block_used++] = 0x80;
  if (ctx->block_used > 56) {
    while (ctx->block_used < 64) ctx->block[ctx->block_used++] = 0;
    tm_sha256_compress(ctx->h, ctx->block);
    ctx->block_used = 0;
  }
  while (ctx->block_used < 56) ctx->block[ctx->block_used++] = 0;
  for (i = 0; i < 8; i++) ctx->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  tm_sha256_compress(ctx->h, ctx->block);
  ctx->block_used = 0;
  tm_sha256_state_bytes(ctx->h, out);
}

void tm_sha256(const uint8_t *data, uint32_t len, uint8_t out[32]) {
  tm_sha256_ctx ctx;
  tm_sha256_init(&ctx);
  tm_sha256_update(&ctx, data, len);
  tm_sha256_final(&ctx, out);
}

void tm_tagged_init(tm_sha256_ctx *ctx, const char *tag) {
  static const uint8_t zero = 0;
  uint32_t n = 0;
  while (tag[n] != '\0') n++;
  tm_sha256_init(ctx);
  tm_sha256_update(ctx, (const uint8_t *)tag, n);
  tm_sha256_update(ctx, &zero, 1);
}

void tm_expand(const uint8_t seed[32], uint8_t *out, uint32_t n) {
  /* seed || u32le(i) is 36 bytes: one padded block, one compression per 32 output bytes. */
  uint32_t block[16];
  uint32_t h[8];
  uint8_t digest[32];
  uint32_t i, at, counter = 0;
  for (i = 0; i < 8; i++) {
    block[i] = ((uint32_t)seed[4 * i] << 24) | ((uint32_t)seed[4 * i + 1] << 16) |
               ((uint32_t)seed[4 * i + 2] << 8) | (uint32_t)seed[4 * i + 3];
  }
  for (i = 9; i < 15; i++) block[i] = 0;
  block[15] = 36u * 8u; /* message length in bits */
  for (at = 0; at < n; at += 32, counter++) {
    /* bytes 32..35 are u32le(counter), byte 36 is the 0x80 padding: word 8 big-endian, word 9 */
    block[8] = ((counter & 0xffu) << 24) | (((counter >> 8) & 0xffu) << 16) | (((counter >> 16) & 0xffu) << 8) |
               ((counter >> 24) & 0xffu);
    block[9] = 0x80000000u;
    for (i = 0; i < 8; i++) h[i] = tm_sha256_iv[i];
    tm_sha256_compress_words(h, block);
    if (n - at >= 32) {
      tm_sha256_state_bytes(h, out + at);
    } else {
      tm_sha256_state_bytes(h, digest);
      for (i = 0; at + i < n; i++) out[at + i] = digest[i];
    }
  }
}
