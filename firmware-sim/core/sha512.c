/*
 * sha512.c: FIPS 180-4 SHA-512 (section 6.4). Portable C99: every word is a uint64_t, bytes are
 * read and written big-endian one at a time, so nothing depends on the host's byte order.
 */
#include "sha512.h"

static const uint64_t K[80] = {
    UINT64_C(0x428a2f98d728ae22), UINT64_C(0x7137449123ef65cd), UINT64_C(0xb5c0fbcfec4d3b2f),
    UINT64_C(0xe9b5dba58189dbbc), UINT64_C(0x3956c25bf348b538), UINT64_C(0x59f111f1b605d019),
    UINT64_C(0x923f82a4af194f9b), UINT64_C(0xab1c5ed5da6d8118), UINT64_C(0xd807aa98a3030242),
    UINT64_C(0x12835b0145706fbe), UINT64_C(0x243185be4ee4b28c), UINT64_C(0x550c7dc3d5ffb4e2),
    UINT64_C(0x72be5d74f27b896f), UINT64_C(0x80deb1fe3b1696b1), UINT64_C(0x9bdc06a725c71235),
    UINT64_C(0xc19bf174cf692694), UINT64_C(0xe49b69c19ef14ad2), UINT64_C(0xefbe4786384f25e3),
    UINT64_C(0x0fc19dc68b8cd5b5), UINT64_C(0x240ca1cc77ac9c65), UINT64_C(0x2de92c6f592b0275),
    UINT64_C(0x4a7484aa6ea6e483), UINT64_C(0x5cb0a9dcbd41fbd4), UINT64_C(0x76f988da831153b5),
    UINT64_C(0x983e5152ee66dfab), UINT64_C(0xa831c66d2db43210), UINT64_C(0xb00327c898fb213f),
    UINT64_C(0xbf597fc7beef0ee4), UINT64_C(0xc6e00bf33da88fc2), UINT64_C(0xd5a79147930aa725),
    UINT64_C(0x06ca6351e003826f), UINT64_C(0x142929670a0e6e70), UINT64_C(0x27b70a8546d22ffc),
    UINT64_C(0x2e1b21385c26c926), UINT64_C(0x4d2c6dfc5ac42aed), UINT64_C(0x53380d139d95b3df),
    UINT64_C(0x650a73548baf63de), UINT64_C(0x766a0abb3c77b2a8), UINT64_C(0x81c2c92e47edaee6),
    UINT64_C(0x92722c851482353b), UINT64_C(0xa2bfe8a14cf10364), UINT64_C(0xa81a664bbc423001),
    UINT64_C(0xc24b8b70d0f89791), UINT64_C(0xc76c51a30654be30), UINT64_C(0xd192e819d6ef5218),
    UINT64_C(0xd69906245565a910), UINT64_C(0xf40e35855771202a), UINT64_C(0x106aa07032bbd1b8),
    UINT64_C(0x19a4c116b8d2d0c8), UINT64_C(0x1e376c085141ab53), UINT64_C(0x2748774cdf8eeb99),
    UINT64_C(0x34b0bcb5e19b48a8), UINT64_C(0x391c0cb3c5c95a63), UINT64_C(0x4ed8aa4ae3418acb),
    UINT64_C(0x5b9cca4f7763e373), UINT64_C(0x682e6ff3d6b2b8a3), UINT64_C(0x748f82ee5defb2fc),
    UINT64_C(0x78a5636f43172f60), UINT64_C(0x84c87814a1f0ab72), UINT64_C(0x8cc702081a6439ec),
    UINT64_C(0x90befffa23631e28), UINT64_C(0xa4506cebde82bde9), UINT64_C(0xbef9a3f7b2c67915),
    UINT64_C(0xc67178f2e372532b), UINT64_C(0xca273eceea26619c), UINT64_C(0xd186b8c721c0c207),
    UINT64_C(0xeada7dd6cde0eb1e), UINT64_C(0xf57d4f7fee6ed178), UINT64_C(0x06f067aa72176fba),
    UINT64_C(0x0a637dc5a2c898a6), UINT64_C(0x113f9804bef90dae), UINT64_C(0x1b710b35131c471b),
    UINT64_C(0x28db77f523047d84), UINT64_C(0x32caab7b40c72493), UINT64_C(0x3c9ebe0a15c9bebc),
    UINT64_C(0x431d67c49c100d4c), UINT64_C(0x4cc5d4becb3e42b6), UINT64_C(0x597f299cfc657e2a),
    UINT64_C(0x5fcb6fab3ad6faec), UINT64_C(0x6c44198c4a475817)};

static uint64_t rotr(uint64_t x, uint32_t n) { return (x >> n) | (x << (64u - n)); }

static uint64_t load_be64(const uint8_t *p) {
  uint64_t v = 0;
  uint32_t i;
  for (i = 0; i < 8u; i++) v = (v << 8) | p[i];
  return v;
}

static void store_be64(uint8_t *p, uint64_t v) {
  uint32_t i;
  for (i = 0; i < 8u; i++) p[i] = (uint8_t)(v >> (56u - 8u * i));
}

static void compress(uint64_t h[8], const uint8_t block[128]) {
  uint64_t w[80];
  uint64_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  uint32_t t;
  for (t = 0; t < 16u; t++) w[t] = load_be64(block + 8u * t);
  for (t = 16; t < 80u; t++) {
    const uint64_t s0 = rotr(w[t - 15u], 1) ^ rotr(w[t - 15u], 8) ^ (w[t - 15u] >> 7);
    const uint64_t s1 = rotr(w[t - 2u], 19) ^ rotr(w[t - 2u], 61) ^ (w[t - 2u] >> 6);
    w[t] = w[t - 16u] + s0 + w[t - 7u] + s1;
  }
  for (t = 0; t < 80u; t++) {
    const uint64_t t1 = k + (rotr(e, 14) ^ rotr(e, 18) ^ rotr(e, 41)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
    const uint64_t t2 = (rotr(a, 28) ^ rotr(a, 34) ^ rotr(a, 39)) + ((a & b) ^ (a & c) ^ (b & c));
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

void tm_sha512_init(tm_sha512_ctx *ctx) {
  ctx->h[0] = UINT64_C(0x6a09e667f3bcc908);
  ctx->h[1] = UINT64_C(0xbb67ae8584caa73b);
  ctx->h[2] = UINT64_C(0x3c6ef372fe94f82b);
  ctx->h[3] = UINT64_C(0xa54ff53a5f1d36f1);
  ctx->h[4] = UINT64_C(0x510e527fade682d1);
  ctx->h[5] = UINT64_C(0x9b05688c2b3e6c1f);
  ctx->h[6] = UINT64_C(0x1f83d9abfb41bd6b);
  ctx->h[7] = UINT64_C(0x5be0cd19137e2179);
  ctx->bytes = 0;
  ctx->block_used = 0;
}

void tm_sha512_update(tm_sha512_ctx *ctx, const uint8_t *data, uint32_t len) {
  uint32_t i = 0;
  ctx->bytes += len;
  if (ctx->block_used > 0u) {
    while (i < len && ctx->block_used < 128u) ctx->block[ctx->block_used++] = data[i++];
    if (ctx->block_used < 128u) return;
    compress(ctx->h, ctx->block);
    ctx->block_used = 0;
  }
  for (; len - i >= 128u; i += 128u) compress(ctx->h, data + i);
  while (i < len) ctx->block[ctx->block_used++] = data[i++];
}

void tm_sha512_final(tm_sha512_ctx *ctx, uint8_t out[64]) {
  const uint64_t bits = ctx->bytes << 3;
  uint32_t i;
  ctx->block[ctx->block_used++] = 0x80u;
  if (ctx->block_used > 112u) {
    while (ctx->block_used < 128u) ctx->block[ctx->block_used++] = 0;
    compress(ctx->h, ctx->block);
    ctx->block_used = 0;
  }
  while (ctx->block_used < 120u) ctx->block[ctx->block_used++] = 0; /* the high 64 length bits: 0 */
  store_be64(ctx->block + 120, bits);
  compress(ctx->h, ctx->block);
  for (i = 0; i < 8u; i++) store_be64(out + 8u * i, ctx->h[i]);
}

void tm_sha512(const uint8_t *data, uint32_t len, uint8_t out[64]) {
  tm_sha512_ctx ctx;
  tm_sha512_init(&ctx);
  tm_sha512_update(&ctx, data, len);
  tm_sha512_final(&ctx, out);
}
