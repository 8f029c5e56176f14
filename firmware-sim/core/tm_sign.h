/*
 * tm_sign.h: the signed messages of the protocol, as the board builds and checks them
 * (docs/protocol.md): signed requests (6.2), v4.1 submissions and shares (4.8), v4.0 proofs (3.6)
 * and the validator's device callbacks (4.17). Every message is signed in pieces
 * (tm_ed25519_sign_parts), so a body is never copied next to its prefix.
 */
#ifndef TM_SIGN_H
#define TM_SIGN_H

#include <stdint.h>

#include "tm_json.h"
#include "tm_tensor.h"

#define TM_REQUEST_TAG "PTM/request/v1"
#define TM_SUBMIT_TAG "PTM41/submit"
#define TM_PROOF_TAG "PTM4/proof"
#define TM_NOTIFY_TAG "PTM41/notify"

/*
 * The signature of a signed request (6.2): tag, method (uppercased), path exactly as sent, SHA-256
 * of the body bytes (body may be NULL: an empty body), timestamp in Unix milliseconds, 16-byte
 * nonce, public key. Returns 0, or TM_ERR_ARGUMENT for a method or path longer than 65,535 bytes.
 */
int32_t tm_request_sign(const uint8_t seed[32], const uint8_t public_key[32], const char *method, const char *path,
                        const uint8_t *body, uint32_t body_len, uint64_t timestamp_ms, const uint8_t nonce[16],
                        uint8_t signature[64]);

/* The four x-tm-* header lines of a signed request, each ending in CRLF, appended to b. */
int32_t tm_request_headers(tm_buf *b, const uint8_t seed[32], const uint8_t public_key[32], const char *method,
                           const char *path, const uint8_t *body, uint32_t body_len, uint64_t timestamp_ms,
                           const uint8_t nonce[16]);

/* The signature of a v4.1 submission or share: "PTM41/submit" 0x00 lpString(challenge_id) header. */
void tm_submission_sign(const uint8_t seed[32], const uint8_t public_key[32], const char *challenge_id,
                        const uint8_t header[88], uint8_t signature[64]);

/* The signature of a v4.0 proof (3.6) of nonce `nonce` with the computed work `w`. */
void tm_proof_sign(const uint8_t seed[32], const uint8_t public_key[32], const char *challenge_id,
                   const uint8_t challenge_hash[32], uint64_t nonce, const tm_work_result *w, uint8_t signature[64]);

/* 1 when `signature` is the node key's signature of a callback body: "PTM41/notify" 0x00 body. */
int32_t tm_notify_verify(const uint8_t node_key[32], const uint8_t *body, uint32_t len, const uint8_t signature[64]);

/* An ASCII string's bytes as a u16le length and the bytes (lpString); 0, or -1 past 65,535. */
int32_t tm_lp_prefix(const char *s, uint8_t out[2]);

#endif
