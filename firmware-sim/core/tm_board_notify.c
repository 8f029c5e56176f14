/*
 * tm_board_notify.c: the board's callback port (docs/protocol.md 4.17). One request per
 * connection: POST /tm/notify with a JSON body of at most 1 KiB and the node's signature in
 * x-tm-signature. The checks run cheapest first, and the ed25519 verification (the costly one)
 * only for a well-formed, fresh notification addressed to this board; anything else is answered
 * with an error and changes nothing. A valid notification whose challenge is the board's current
 * job ends that job at once.
 */
#include "tm_board_internal.h"
#include "tm_sign.h"

#define READ_DEADLINE_MS 500u
#define FRESH_MS 60000u
#define MAX_PER_TURN 4u

static void answer(tm_board *b, int32_t conn, int32_t status, const char *body) {
  uint8_t out[256];
  const uint32_t n = tm_http_answer(status, body, out, sizeof out);
  if (n) (void)b->cfg.net->send(b->cfg.net->ctx, conn, out, n, READ_DEADLINE_MS);
  if (status == 200) {
    b->stats.callbacks_accepted++;
  } else {
    b->stats.callbacks_refused++;
  }
}

/* Refuses a notification: the answer's code, a log line. */
static void refuse(tm_board *b, int32_t conn, int32_t status, const char *code) {
  char body[96];
  tm_buf w;
  tm_buf_init(&w, (uint8_t *)body, sizeof body - 1u);
  tm_buf_str(&w, "{\"ok\":false,\"code\":");
  tm_buf_json_str(&w, code);
  tm_buf_char(&w, '}');
  body[w.len] = '\0';
  answer(b, conn, status, body);
  tm_board_log(b, "callback refused: ", code, 0, 0);
}

static int32_t hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* 1 when s is exactly 128 lowercase hex digits (decoded into sig). */
static int32_t parse_signature(const char *s, uint8_t sig[64]) {
  uint32_t i;
  for (i = 0; i < 64u; i++) {
    const int32_t hi = hex_value(s[2u * i]), lo = hi < 0 ? -1 : hex_value(s[2u * i + 1u]);
    if (hi < 0 || lo < 0) return 0;
    sig[i] = (uint8_t)(hi * 16 + lo);
  }
  return s[128] == '\0';
}

/* Checks and acts on one notification body. */
static void handle(tm_board *b, int32_t conn, const tm_http_request_head *head, const uint8_t *body, uint32_t len) {
  tm_span doc, v;
  uint8_t device[32], sig[64];
  uint64_t sent_at, seq, now;
  char id[TM_BOARD_ID_MAX];
  uint32_t i, k;
  int32_t stale, dropped = 0;
  doc.p = (const char *)body;
  doc.n = len;
  if (tm_json_get(doc, "type", &v) != TM_JSON_STRING || tm_json_get(doc, "device", &v) != TM_JSON_STRING ||
      !tm_json_hex(v, device, 32) || tm_json_get(doc, "sent_at", &v) != TM_JSON_NUMBER ||
      !tm_json_u64(v, TM_MAX_NONCE, &sent_at) || tm_json_get(doc, "seq", &v) != TM_JSON_NUMBER ||
      !tm_json_u64(v, TM_MAX_NONCE, &seq) || tm_json_get(doc, "challenge_id", &v) != TM_JSON_STRING ||
      tm_json_str(v, id, sizeof id, 0) < 1) {
    refuse(b, conn, 400, "invalid_notification");
    return;
  }
  for (i = 0; i < 32u; i++) {
    if (device[i] != b->pub[i]) {
      refuse(b, conn, 403, "wrong_device");
      return;
    }
  }
  if (head->signature[0] == '\0') {
    refuse(b, conn, 401, "signature_required");
    return;
  }
  if (!parse_signature(head->signature, sig)) {
    refuse(b, conn, 401, "signature_invalid");
    return;
  }
  for (i = 0, k = 0; i < 32u; i++) k |= b->node_key[i];
  if (k == 0u) {
    refuse(b, conn, 401, "node_key_unknown");
    return;
  }
  now = tm_board_unix_ms(b);
  if (b->clock_offset_ms == 0 || (sent_at > now ? sent_at - now : now - sent_at) > FRESH_MS) {
    refuse(b, conn, 401, "notification_expired");
    return;
  }
  if (!tm_notify_verify(b->node_key, body, len, sig)) {
    refuse(b, conn, 401, "signature_invalid");
    return;
  }
  for (i = 0; i < 8u; i++) {
    for (k = 0; k < 8u && b->seen[i][k] == sig[k]; k++) {
    }
    if (k == 8u) {
      refuse(b, conn, 409, "notification_replayed");
      return;
    }
  }
  tm_copy(b->seen[b->seen_next], sig, 8);
  b->seen_next = (b->seen_next + 1u) % 8u;
  (void)tm_json_get(doc, "type", &v);
  stale = tm_json_str_eq(v, "work_stale");
  if (stale && b->job != JOB_NONE && tm_streq(id, b->challenge_id)) {
    tm_json_get(doc, "reason", &v);
    tm_board_log(b, "callback: work stale (", tm_json_str_eq(v, "block") ? "block at its cell" : "retarget", ")", 0);
    tm_board_end_job(b, TM_JOB_CALLBACK);
    dropped = 1;
  }
  answer(b, conn, 200, dropped ? "{\"ok\":true,\"dropped\":true}" : "{\"ok\":true,\"dropped\":false}");
  if (!dropped) tm_board_log(b, "callback: not about the current job (", id, ")", 0);
}

/* Reads one request from conn (at most READ_DEADLINE_MS) and answers it. */
static void serve_one(tm_board *b, int32_t conn) {
  const tm_net_port *net = b->cfg.net;
  uint8_t *buf = b->cfg.io;
  const uint32_t cap = b->cfg.io_bytes < 2048u + TM_BOARD_CALLBACK_MAX_BODY ? b->cfg.io_bytes
                                                                            : 2048u + TM_BOARD_CALLBACK_MAX_BODY;
  const uint64_t start = tm_board_now(b);
  tm_http_request_head head;
  uint32_t have = 0;
  int32_t rc = TM_HTTP_INCOMPLETE;
  for (;;) {
    const uint64_t elapsed = tm_board_now(b) - start;
    int32_t n;
    if (rc == TM_HTTP_OK && have >= head.head_len + head.content_length) break;
    if (elapsed >= READ_DEADLINE_MS || have >= cap) {
      refuse(b, conn, 408, "incomplete_request");
      return;
    }
    n = net->recv(net->ctx, conn, buf + have, cap - have, (uint32_t)(READ_DEADLINE_MS - elapsed));
    if (n <= 0) {
      if (n == TM_NET_TIMEOUT) continue;
      b->stats.callbacks_refused++;
      return; /* closed or broken: nobody to answer */
    }
    have += (uint32_t)n;
    if (rc == TM_HTTP_INCOMPLETE) {
      rc = tm_http_parse_request_head(buf, have, &head);
      if (rc == TM_HTTP_ERR_MALFORMED) {
        refuse(b, conn, 400, "malformed_request");
        return;
      }
      if (rc == TM_HTTP_OK) {
        if (!tm_streq(head.path, TM_BOARD_CALLBACK_PATH)) {
          refuse(b, conn, 404, "not_found");
          return;
        }
        if (!tm_streq(head.method, "POST")) {
          refuse(b, conn, 405, "method_not_allowed");
          return;
        }
        if (!head.has_length) {
          refuse(b, conn, 411, "length_required");
          return;
        }
        if (head.content_length > TM_BOARD_CALLBACK_MAX_BODY || head.head_len + head.content_length > cap) {
          refuse(b, conn, 413, "body_too_large");
          return;
        }
      }
    }
  }
  handle(b, conn, &head, buf + head.head_len, head.content_length);
}

void tm_board_serve(tm_board *b) {
  uint32_t i;
  for (i = 0; i < MAX_PER_TURN; i++) {
    const int32_t conn = b->cfg.net->accept(b->cfg.net->ctx);
    if (conn < 0) return;
    serve_one(b, conn);
    b->cfg.net->close(b->cfg.net->ctx, conn);
  }
}
