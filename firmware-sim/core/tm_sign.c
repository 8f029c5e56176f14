/*
 * tm_sign.c: the protocol's signed messages (tm_sign.h), built as pieces for tm_ed25519.
 */
#include "tm_sign.h"

#include "sha256.h"
#include "tm_ed25519.h"

static void u64le(uint64_t v, uint8_t out[8]) {
  uint32_t i;
  for (i = 0; i < 8u; i++) out[i] = (uint8_t)(v >> (8u * i));
}

static tm_bytes piece(const void *p, uint32_t n) {
  tm_bytes b;
  b.p = (const uint8_t *)p;
  b.n = n;
  return b;
}

static const uint8_t ZERO = 0;

int32_t tm_lp_prefix(const char *s, uint8_t out[2]) {
  const uint32_t n = tm_strlen(s);
  if (n > 0xffffu) return -1;
  out[0] = (uint8_t)n;
  out[1] = (uint8_t)(n >> 8);
  return 0;
}

int32_t tm_request_sign(const uint8_t seed[32], const uint8_t public_key[32], const char *method, const char *path,
                        const uint8_t *body, uint32_t body_len, uint64_t timestamp_ms, const uint8_t nonce[16],
                        uint8_t signature[64]) {
  char upper[16];
  uint8_t mlen[2], plen[2], body_hash[32], ts[8];
  tm_bytes parts[10];
  uint32_t i;
  for (i = 0; method[i]; i++) {
    const char c = method[i];
    if (i + 1u >= sizeof upper) return -1;
    upper[i] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
  }
  upper[i] = '\0';
  if (tm_lp_prefix(upper, mlen) != 0 || tm_lp_prefix(path, plen) != 0) return -1;
  tm_sha256(body ? body : &ZERO, body ? body_len : 0u, body_hash);
  u64le(timestamp_ms, ts);
  parts[0] = piece(TM_REQUEST_TAG, 14);
  parts[1] = piece(&ZERO, 1);
  parts[2] = piece(mlen, 2);
  parts[3] = piece(upper, i);
  parts[4] = piece(plen, 2);
  parts[5] = piece(path, tm_strlen(path));
  parts[6] = piece(body_hash, 32);
  parts[7] = piece(ts, 8);
  parts[8] = piece(nonce, 16);
  parts[9] = piece(public_key, 32);
  tm_ed25519_sign_parts(seed, public_key, parts, 10, signature);
  return 0;
}

int32_t tm_request_headers(tm_buf *b, const uint8_t seed[32], const uint8_t public_key[32], const char *method,
                           const char *path, const uint8_t *body, uint32_t body_len, uint64_t timestamp_ms,
                           const uint8_t nonce[16]) {
  uint8_t signature[64];
  if (tm_request_sign(seed, public_key, method, path, body, body_len, timestamp_ms, nonce, signature) != 0) return -1;
  tm_buf_str(b, "x-tm-pubkey: ");
  tm_buf_hex(b, public_key, 32);
  tm_buf_str(b, "\r\nx-tm-timestamp: ");
  tm_buf_u64(b, timestamp_ms);
  tm_buf_str(b, "\r\nx-tm-nonce: ");
  tm_buf_hex(b, nonce, 16);
  tm_buf_str(b, "\r\nx-tm-signature: ");
  tm_buf_hex(b, signature, 64);
  tm_buf_str(b, "\r\n");
  return b->overflow ? -1 : 0;
}

void tm_submission_sign(const uint8_t seed[32], const uint8_t public_key[32], const char *challenge_id,
                        const uint8_t header[88], uint8_t signature[64]) {
  uint8_t len[2];
  tm_bytes parts[5];
  (void)tm_lp_prefix(challenge_id, len); /* ids are at most 128 characters */
  parts[0] = piece(TM_SUBMIT_TAG, 12);
  parts[1] = piece(&ZERO, 1);
  parts[2] = piece(len, 2);
  parts[3] = piece(challenge_id, tm_strlen(challenge_id));
  parts[4] = piece(header, 88);
  tm_ed25519_sign_parts(seed, public_key, parts, 5, signature);
}

void tm_proof_sign(const uint8_t seed[32], const uint8_t public_key[32], const char *challenge_id,
                   const uint8_t challenge_hash[32], uint64_t nonce, const tm_work_result *w, uint8_t signature[64]) {
  uint8_t len[2], mml[4], nonce_le[8];
  tm_bytes parts[12];
  uint32_t i;
  (void)tm_lp_prefix(challenge_id, len);
  for (i = 0; i < 4u; i++) mml[i] = (uint8_t)(w->mml_score_q16 >> (8u * i));
  u64le(nonce, nonce_le);
  parts[0] = piece(TM_PROOF_TAG, 10);
  parts[1] = piece(&ZERO, 1);
  parts[2] = piece(len, 2);
  parts[3] = piece(challenge_id, tm_strlen(challenge_id));
  parts[4] = piece(challenge_hash, 32);
  parts[5] = piece(w->tensor_result_hash, 32);
  parts[6] = piece(mml, 4);
  parts[7] = piece(w->path_signature, 8);
  parts[8] = piece(&w->path_distance, 1);
  parts[9] = piece(nonce_le, 8);
  parts[10] = piece(w->computation_hash, 32);
  parts[11] = piece(public_key, 32);
  tm_ed25519_sign_parts(seed, public_key, parts, 12, signature);
}

int32_t tm_notify_verify(const uint8_t node_key[32], const uint8_t *body, uint32_t len, const uint8_t signature[64]) {
  tm_bytes parts[3];
  parts[0] = piece(TM_NOTIFY_TAG, 12);
  parts[1] = piece(&ZERO, 1);
  parts[2] = piece(body, len);
  return tm_ed25519_verify_parts(signature, parts, 3, node_key);
}
