/* tm_hexchain.c: v4.1 block header, pow hash and nonce search. See tm_hexchain.h. */
#include "tm_hexchain.h"

#include "sha256.h"

static void put_u32le(uint8_t *out, uint32_t v) {
  out[0] = (uint8_t)v;
  out[1] = (uint8_t)(v >> 8);
  out[2] = (uint8_t)(v >> 16);
  out[3] = (uint8_t)(v >> 24);
}

/* i32le: the two's-complement bytes, through the well-defined conversion to uint32_t. */
static void put_i32le(uint8_t *out, int32_t v) { put_u32le(out, (uint32_t)v); }

static uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* The big-endian word of four little-endian bytes of v: byte 0 (least significant) first. */
static uint32_t le_bytes_as_be_word(uint32_t v) {
  return ((v & 0xffu) << 24) | ((v & 0xff00u) << 8) | ((v >> 8) & 0xff00u) | (v >> 24);
}

int32_t tm_hex_check_coord(int32_t q, int32_t r, int32_t s) {
  /* Bounds first, so that the sum cannot overflow. */
  if (q > TM_LATTICE_RADIUS_MAX || q < -TM_LATTICE_RADIUS_MAX) return TM_ERR_ARGUMENT;
  if (r > TM_LATTICE_RADIUS_MAX || r < -TM_LATTICE_RADIUS_MAX) return TM_ERR_ARGUMENT;
  if (s > TM_LATTICE_RADIUS_MAX || s < -TM_LATTICE_RADIUS_MAX) return TM_ERR_ARGUMENT;
  return q + r + s == 0 ? TM_OK : TM_ERR_ARGUMENT;
}

int32_t tm_hex_encode_header(int32_t q, int32_t r, int32_t s, const uint8_t challenge_hash[32],
                             const uint8_t pubkey[32], uint64_t nonce, uint8_t out[88]) {
  uint32_t i;
  if (tm_hex_check_coord(q, r, s) != TM_OK) return TM_ERR_ARGUMENT;
  if (nonce > TM_MAX_NONCE) return TM_ERR_NONCE;
  put_u32le(out, TM_HEX_HEADER_VERSION);
  put_i32le(out + 4, q);
  put_i32le(out + 8, r);
  put_i32le(out + 12, s);
  for (i = 0; i < 32; i++) out[16 + i] = challenge_hash[i];
  for (i = 0; i < 32; i++) out[48 + i] = pubkey[i];
  put_u32le(out + 80, (uint32_t)(nonce & 0xffffffffu));
  put_u32le(out + 84, (uint32_t)(nonce >> 32));
  return TM_OK;
}

void tm_hex_pow_hash(const uint8_t header[88], uint8_t out[32]) { tm_sha256(header, TM_HEX_HEADER_BYTES, out); }

void tm_hex_block_hash(const uint8_t header[88], uint8_t out[32]) {
  tm_sha256_ctx ctx;
  tm_tagged_init(&ctx, "PTM41/block");
  tm_sha256_update(&ctx, header, TM_HEX_HEADER_BYTES);
  tm_sha256_final(&ctx, out);
}

int32_t tm_hex_hash_meets_target(const uint8_t hash[32], const uint8_t target[32]) {
  uint32_t i;
  for (i = 0; i < 32; i++) {
    if (hash[i] != target[i]) return hash[i] < target[i] ? 1 : 0;
  }
  return 1;
}

int32_t tm_hex_target_in_range(const uint8_t target[32]) {
  /* floor((2^256 - 1) / 16) and floor((2^256 - 1) / (2^53 - 1)), big-endian */
  static const uint8_t easiest[32] = {0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  static const uint8_t hardest[32] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00};
  return tm_hex_hash_meets_target(target, easiest) && tm_hex_hash_meets_target(hardest, target) ? 1 : 0;
}

int32_t tm_search_block(const uint8_t header_prefix[80], const uint8_t target[32], uint64_t start, uint64_t count,
                        tm_block_solution *out) {
  uint32_t midstate[8], h[8], w[16], t[8];
  uint64_t nonce = start, tried = 0;
  uint32_t i;
  out->iterations = 0;
  if (start > TM_MAX_NONCE) return TM_ERR_NONCE;
  /* The midstate: SHA-256 state after the nonce-independent bytes [0, 64). */
  {
    tm_sha256_ctx ctx;
    tm_sha256_init(&ctx);
    tm_sha256_update(&ctx, header_prefix, TM_HEX_MIDSTATE_PREFIX_BYTES);
    for (i = 0; i < 8; i++) midstate[i] = ctx.h[i];
  }
  /* The last block: header bytes [64, 80), the nonce (words 4 and 5), 0x80, zeros, and the
   * message length 704 bits. */
  for (i = 0; i < 4; i++) w[i] = be32(header_prefix + 64 + 4 * i);
  w[6] = 0x80000000u;
  for (i = 7; i < 15; i++) w[i] = 0;
  w[15] = TM_HEX_HEADER_BYTES * 8u;
  for (i = 0; i < 8; i++) t[i] = be32(target + 4 * i);

  while (tried < count && nonce <= TM_MAX_NONCE) {
    tried++;
    w[4] = le_bytes_as_be_word((uint32_t)(nonce & 0xffffffffu));
    w[5] = le_bytes_as_be_word((uint32_t)(nonce >> 32));
    for (i = 0; i < 8; i++) h[i] = midstate[i];
    tm_sha256_compress_words(h, w);
    /* hash <= target, word by word: the digest's words are its big-endian 4-byte groups */
    for (i = 0; i < 8 && h[i] == t[i]; i++) {
    }
    if (i == 8 || h[i] < t[i]) {
      out->nonce = nonce;
      out->iterations = tried;
      tm_sha256_state_bytes(h, out->pow_hash);
      return TM_FOUND;
    }
    nonce++;
  }
  out->iterations = tried;
  return TM_NOT_FOUND;
}
