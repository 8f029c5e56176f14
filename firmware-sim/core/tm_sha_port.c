/* tm_sha_port.c: the block search through a SHA-256 port. See tm_sha_port.h. */
#include "tm_sha_port.h"

#include "sha256.h"

static uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* The big-endian word of four little-endian bytes of v: byte 0 (least significant) first. */
static uint32_t le_bytes_as_be_word(uint32_t v) {
  return ((v & 0xffu) << 24) | ((v & 0xff00u) << 8) | ((v >> 8) & 0xff00u) | (v >> 24);
}

void tm_sha_port_software(void *ctx, const uint32_t midstate[8], const uint32_t w16[16], uint32_t out[8]) {
  uint32_t i;
  (void)ctx;
  for (i = 0; i < 8; i++) out[i] = midstate[i];
  tm_sha256_compress_words(out, w16);
}

int32_t tm_search_block_port(const tm_sha_port *port, const uint8_t header_prefix[80], const uint8_t target[32],
                             uint64_t start, uint64_t count, tm_block_solution *out) {
  uint32_t midstate[8], h[8], w[16], t[8];
  uint64_t nonce = start, tried = 0;
  uint32_t i;
  void (*compress)(void *, const uint32_t *, const uint32_t *, uint32_t *) = tm_sha_port_software;
  void *ctx = 0;
  if (port != 0 && port->compress != 0) {
    compress = port->compress;
    ctx = port->ctx;
  }
  out->iterations = 0;
  if (start > TM_MAX_NONCE) return TM_ERR_NONCE;
  {
    tm_sha256_ctx sha;
    tm_sha256_init(&sha);
    tm_sha256_update(&sha, header_prefix, TM_HEX_MIDSTATE_PREFIX_BYTES);
    for (i = 0; i < 8; i++) midstate[i] = sha.h[i];
  }
  for (i = 0; i < 4; i++) w[i] = be32(header_prefix + 64 + 4 * i);
  w[6] = 0x80000000u;
  for (i = 7; i < 15; i++) w[i] = 0;
  w[15] = TM_HEX_HEADER_BYTES * 8u;
  for (i = 0; i < 8; i++) t[i] = be32(target + 4 * i);

  while (tried < count && nonce <= TM_MAX_NONCE) {
    tried++;
    w[4] = le_bytes_as_be_word((uint32_t)(nonce & 0xffffffffu));
    w[5] = le_bytes_as_be_word((uint32_t)(nonce >> 32));
    compress(ctx, midstate, w, h);
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
