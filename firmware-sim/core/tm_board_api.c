/*
 * tm_board_api.c: the network board's exchanges with the validator (or a status proxy): health
 * and clock, protocol detection, signed registration, pool membership, challenges (v4.1 and
 * v4.0), the cell check, and signed blocks, shares and proofs. One request per connection, the
 * answer read into the configured buffer; every answer is checked before it is used.
 */
#include "sha256.h"
#include "tm_board_internal.h"
#include "tm_sign.h"

#define HEADER_VERSION_41 262400u

/* An exchange's answer: status (0 when none came), body as a JSON span. */
typedef struct {
  int32_t rc; /* TM_HTTP_OK or TM_HTTP_ERR_* */
  tm_http_response http;
  tm_span json;
} answer;

static void set_path(tm_board *b, const char *suffix) {
  tm_buf p;
  tm_buf_init(&p, (uint8_t *)b->path, sizeof b->path - 1u);
  tm_buf_str(&p, b->url.prefix);
  tm_buf_str(&p, suffix);
  b->path[p.overflow ? 0u : p.len] = '\0';
}

static const char *http_error(int32_t rc) {
  switch (rc) {
    case TM_HTTP_ERR_CONNECT:
      return "cannot connect";
    case TM_HTTP_ERR_TIMEOUT:
      return "no answer in time";
    case TM_HTTP_ERR_TOO_LARGE:
      return "answer too large";
    case TM_HTTP_ERR_REQUEST:
      return "request too large";
    default:
      return "malformed answer";
  }
}

/* The error code of an error body ("" when none). */
static void error_code(const answer *a, char *code, uint32_t cap) {
  tm_span v;
  code[0] = '\0';
  if (tm_json_get(a->json, "code", &v) == TM_JSON_STRING) (void)tm_json_str(v, code, cap, 1);
}

static void log_refusal(tm_board *b, const char *what, const answer *a) {
  char code[48], message[160];
  tm_span v;
  error_code(a, code, sizeof code);
  message[0] = '\0';
  if (tm_json_get(a->json, "message", &v) == TM_JSON_STRING) (void)tm_json_str(v, message, sizeof message, 1);
  tm_board_log(b, what, code[0] ? code : "refused", ": ", message);
}

/*
 * One request to prefix + suffix. `sign`: with the four signed-request headers. Answers with a
 * Date header set the clock. Returns TM_HTTP_OK with a status (any), or the transport failure
 * (already counted and logged).
 */
static int32_t exchange(tm_board *b, const char *method, const char *suffix, const uint8_t *body, uint32_t len,
                        int32_t sign, answer *a) {
  tm_buf h;
  const char *headers = 0;
  tm_zero(a, sizeof *a);
  set_path(b, suffix);
  if (sign) {
    uint8_t nonce[16];
    b->cfg.net->random(b->cfg.net->ctx, nonce, sizeof nonce);
    tm_buf_init(&h, b->headers, sizeof b->headers - 1u);
    if (tm_request_headers(&h, b->cfg.seed, b->pub, method, b->path, body, len, tm_board_unix_ms(b), nonce) != 0) {
      a->rc = TM_HTTP_ERR_REQUEST;
      return a->rc;
    }
    b->headers[h.len] = '\0';
    headers = (const char *)b->headers;
  }
  a->rc = tm_http_request(b->cfg.net, &b->url, method, b->path, headers, body, len, b->cfg.io, b->cfg.io_bytes,
                          b->cfg.http_timeout_ms, &a->http);
  if (a->rc != TM_HTTP_OK) {
    b->stats.http_errors++;
    tm_board_log(b, method, " ", b->path, 0);
    tm_board_log(b, "  failed: ", http_error(a->rc), 0, 0);
    return a->rc;
  }
  if (a->http.date_s) tm_board_sync_clock(b, a->http.date_s);
  a->json.p = (const char *)a->http.body;
  a->json.n = a->http.body_len;
  return TM_HTTP_OK;
}

int32_t tm_board_health(tm_board *b) {
  answer a;
  tm_span v;
  if (exchange(b, "GET", "/health", 0, 0, 0, &a) != TM_HTTP_OK) return -1;
  if (a.http.status != 200) {
    log_refusal(b, "health: ", &a);
    return -1;
  }
  /* the key that signs callbacks: a status proxy's own (callback_pubkey), else the node's */
  {
    uint8_t key[32];
    if ((tm_json_get(a.json, "callback_pubkey", &v) == TM_JSON_STRING && tm_json_hex(v, key, 32)) ||
        (tm_json_get(a.json, "node_pubkey", &v) == TM_JSON_STRING && tm_json_hex(v, key, 32))) {
      uint32_t i, changed = 0;
      for (i = 0; i < 32u; i++) changed |= (uint32_t)(key[i] ^ b->node_key[i]);
      if (changed) {
        char hex[65];
        tm_copy(b->node_key, key, 32);
        tm_hex_encode(key, 32, hex);
        tm_board_log(b, "callbacks are signed by ", hex, 0, 0);
      }
    } else {
      tm_zero(b->node_key, 32);
      tm_board_log(b, "health: no node key published: callbacks cannot be checked, the board polls", 0, 0, 0);
    }
  }
  if (a.http.date_s == 0u) tm_board_log(b, "health: no Date header: signed requests may be refused", 0, 0, 0);
  return 0;
}

int32_t tm_board_detect(tm_board *b) {
  answer a;
  const int32_t rc = exchange(b, "GET", "/api/hexchain/status", 0, 0, 0, &a);
  /* the status may be larger than the buffer: only its status code matters */
  if (rc != TM_HTTP_OK && !(rc == TM_HTTP_ERR_TOO_LARGE && a.http.status != 0)) return -1;
  if (a.http.status == 200) {
    b->version = 41;
  } else if (a.http.status == 404) {
    b->version = 40;
  } else {
    tm_board_log_u64(b, "detect: GET /api/hexchain/status answered ", (uint64_t)a.http.status, "");
    return -1;
  }
  tm_board_log(b, "validator speaks ", b->version == 41u ? "v4.1 (hexchain)" : "v4.0 (tensor)", 0, 0);
  return 0;
}

static int32_t node_key_known(const tm_board *b) {
  uint32_t i, any = 0;
  for (i = 0; i < 32u; i++) any |= b->node_key[i];
  return any != 0u;
}

int32_t tm_board_register(tm_board *b) {
  tm_buf body;
  answer a;
  uint32_t attempt;
  char code[48];
  const int32_t with_port = b->cfg.callback_port != 0u && b->version == 41u && node_key_known(b);
  tm_buf_init(&body, b->body, sizeof b->body);
  tm_buf_str(&body, "{\"pubkey\":\"");
  tm_buf_hex(&body, b->pub, 32);
  tm_buf_str(&body, "\",\"device_type\":");
  tm_buf_json_str(&body, b->cfg.device_type);
  if (with_port) {
    tm_buf_str(&body, ",\"port\":");
    tm_buf_u64(&body, b->cfg.callback_port);
  }
  tm_buf_str(&body, ",\"hashrate\":");
  tm_buf_u64(&body, b->measured_rate ? b->measured_rate : 1u);
  tm_buf_char(&body, '}');
  if (body.overflow) return -1;
  for (attempt = 0; attempt < 2u; attempt++) {
    if (exchange(b, "POST", "/devices/register", b->body, body.len, 1, &a) != TM_HTTP_OK) return -1;
    if (a.http.status == 200) break;
    error_code(&a, code, sizeof code);
    /* a clock the Date header of this very answer has just corrected: sign again */
    if (!(tm_streq(code, "request_expired") && attempt == 0u)) {
      log_refusal(b, "register: ", &a);
      return -1;
    }
  }
  b->stats.registrations++;
  {
    char hex[65], port[8];
    tm_buf p;
    tm_hex_encode(b->pub, 32, hex);
    tm_buf_init(&p, (uint8_t *)port, sizeof port - 1u);
    tm_buf_u64(&p, b->cfg.callback_port);
    port[p.len] = '\0';
    tm_board_log(b, "registered ", hex, " as ", b->cfg.device_type);
    if (with_port) tm_board_log(b, "callbacks on port ", port, 0, 0);
  }
  return 0;
}

int32_t tm_board_join_pool(tm_board *b) {
  tm_buf body;
  answer a;
  tm_span v;
  char code[48];
  if (exchange(b, "GET", "/pool/status", 0, 0, 0, &a) != TM_HTTP_OK || a.http.status != 200 ||
      tm_json_get(a.json, "type", &v) != TM_JSON_STRING) {
    tm_board_log(b, "pool: status unavailable; mining solo", 0, 0, 0);
    return -1;
  }
  if (tm_json_str_eq(v, "solo")) {
    tm_board_log(b, "pool: the validator runs no pool; mining solo", 0, 0, 0);
    return 0;
  }
  tm_buf_init(&body, b->body, sizeof b->body);
  tm_buf_str(&body, "{\"pubkey\":\"");
  tm_buf_hex(&body, b->pub, 32);
  tm_buf_str(&body, "\",\"stake_amount\":");
  tm_buf_json_str(&body, b->cfg.pool_stake);
  tm_buf_str(&body, ",\"hashrate\":");
  tm_buf_u64(&body, b->measured_rate ? b->measured_rate : 1u);
  tm_buf_char(&body, '}');
  if (body.overflow || exchange(b, "POST", "/pool/join", b->body, body.len, 1, &a) != TM_HTTP_OK) return -1;
  error_code(&a, code, sizeof code);
  if (a.http.status == 200 || tm_streq(code, "pool_already_member")) {
    b->pool_member = 1;
    tm_board_log(b, "pool: member; mining shares", 0, 0, 0);
    return 0;
  }
  log_refusal(b, "pool: join refused: ", &a);
  return -1;
}

/* The slot and slot hash of the SDK's defaultSlot: Unix seconds, taggedHash("tensormine/local-slot", u64le). */
static void slot_fields(tm_board *b, tm_buf *body) {
  const uint64_t slot = tm_board_unix_ms(b) / 1000u;
  uint8_t le[8], hash[32];
  tm_sha256_ctx ctx;
  uint32_t i;
  for (i = 0; i < 8u; i++) le[i] = (uint8_t)(slot >> (8u * i));
  tm_tagged_init(&ctx, "tensormine/local-slot");
  tm_sha256_update(&ctx, le, 8);
  tm_sha256_final(&ctx, hash);
  tm_buf_str(body, "{\"slot\":");
  tm_buf_u64(body, slot);
  tm_buf_str(body, ",\"slot_hash\":\"");
  tm_buf_hex(body, hash, 32);
  tm_buf_str(body, "\",\"miner_pubkey\":\"");
  tm_buf_hex(body, b->pub, 32);
  tm_buf_char(body, '"');
}

static int32_t get_i32(tm_span doc, const char *path, int32_t *out) {
  tm_span v;
  int64_t x;
  if (tm_json_get(doc, path, &v) != TM_JSON_NUMBER || !tm_json_i64(v, -TM_LATTICE_RADIUS_MAX, TM_LATTICE_RADIUS_MAX, &x))
    return 0;
  *out = (int32_t)x;
  return 1;
}

static int32_t get_u64(tm_span doc, const char *path, uint64_t max, uint64_t *out) {
  tm_span v;
  return tm_json_get(doc, path, &v) == TM_JSON_NUMBER && tm_json_u64(v, max, out);
}

static int32_t get_hex(tm_span doc, const char *path, uint8_t *out, uint32_t n) {
  tm_span v;
  return tm_json_get(doc, path, &v) == TM_JSON_STRING && tm_json_hex(v, out, n);
}

static int32_t get_id(tm_span doc, const char *path, char *out) {
  tm_span v;
  int32_t n, i;
  if (tm_json_get(doc, path, &v) != TM_JSON_STRING) return 0;
  n = tm_json_str(v, out, TM_BOARD_ID_MAX, 0);
  if (n <= 0) return 0;
  for (i = 0; i < n; i++) {
    const char c = out[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
  }
  return 1;
}

static int32_t hex_job(tm_board *b, const answer *a) {
  uint64_t version;
  const tm_span j = a->json;
  if (!get_id(j, "id", b->challenge_id) || !get_i32(j, "coord.q", &b->q) || !get_i32(j, "coord.r", &b->r) ||
      !get_i32(j, "coord.s", &b->s) || !get_hex(j, "challenge_hash", b->challenge_hash, 32) ||
      !get_hex(j, "target", b->target, 32) || !get_u64(j, "difficulty", TM_MAX_NONCE, &b->difficulty) ||
      !get_u64(j, "expires_at", TM_MAX_NONCE, &b->expires_at_s) ||
      !get_u64(j, "header_version", 0xffffffffu, &version)) {
    tm_board_log(b, "challenge refused: not a v4.1 challenge", 0, 0, 0);
    return -1;
  }
  if (version != HEADER_VERSION_41 || tm_hex_check_coord(b->q, b->r, b->s) != TM_OK ||
      !tm_hex_target_in_range(b->target)) {
    tm_board_log(b, "challenge refused: header version, coordinate or target out of range", 0, 0, 0);
    return -1;
  }
  b->has_share_target = 0;
  if (b->pool_member && get_hex(j, "share_target", b->share_target, 32)) {
    if (!tm_hex_target_in_range(b->share_target)) {
      tm_board_log(b, "challenge refused: share target out of range", 0, 0, 0);
      return -1;
    }
    b->has_share_target = 1;
  }
  {
    uint8_t header[88];
    (void)tm_hex_encode_header(b->q, b->r, b->s, b->challenge_hash, b->pub, 0, header);
    tm_copy(b->prefix, header, 80);
  }
  b->job = JOB_HEX;
  b->slice = (uint32_t)(b->measured_rate * 4u / 1000u);
  if (b->slice < 64u) b->slice = 64u;
  return 0;
}

static int32_t tensor_job(tm_board *b, const answer *a) {
  const tm_span j = a->json;
  tm_span v, data;
  uint64_t n, f = 1, q16, dmax;
  uint8_t op, act, path_target[8];
  tm_json_iter it;
  uint32_t i = 0;
  if (!b->cfg.scratch) {
    tm_board_log(b, "challenge refused: this board has no v4.0 buffers", 0, 0, 0);
    return -1;
  }
  if (!get_id(j, "challenge_id", b->challenge_id) || !get_hex(j, "hash", b->challenge_hash, 32) ||
      tm_json_get(j, "operation_type", &v) != TM_JSON_STRING) {
    tm_board_log(b, "challenge refused: not a v4.0 challenge", 0, 0, 0);
    return -1;
  }
  op = tm_json_str_eq(v, "matmul") ? TM_OP_MATMUL : tm_json_str_eq(v, "conv") ? TM_OP_CONV : 0xffu;
  if (tm_json_get(j, "activation", &v) != TM_JSON_STRING) return -1;
  act = tm_json_str_eq(v, "relu") ? TM_ACT_RELU : tm_json_str_eq(v, "sigmoid") ? TM_ACT_SIGMOID
        : tm_json_str_eq(v, "tanh")                                         ? TM_ACT_TANH
                                                                             : 0xffu;
  if (tm_json_get(j, "input_tensor.shape", &v) != TM_JSON_ARRAY) return -1;
  tm_json_iter_init(&it, v);
  if (tm_json_iter_next(&it, &v) != TM_JSON_NUMBER || !tm_json_u64(v, b->cfg.max_n, &n)) {
    tm_board_log(b, "challenge refused: tensor larger than this board takes", 0, 0, 0);
    return -1;
  }
  if (op == TM_OP_CONV) {
    if (tm_json_get(j, "weight_shape", &v) != TM_JSON_ARRAY) return -1;
    tm_json_iter_init(&it, v);
    if (tm_json_iter_next(&it, &v) != TM_JSON_NUMBER || !tm_json_u64(v, b->cfg.max_f, &f)) return -1;
  }
  if (op == 0xffu || act == 0xffu || !get_u64(j, "mml_threshold_q16", 65536u, &q16) ||
      !get_u64(j, "path_distance_max", 64u, &dmax) || !get_hex(j, "path_target", path_target, 8) ||
      !get_u64(j, "expires_at", TM_MAX_NONCE, &b->expires_at_s) ||
      tm_task_init(&b->task, b->challenge_hash, op, act, (uint16_t)n, (uint8_t)f, b->cfg.input) != TM_OK ||
      tm_scratch_words(&b->task) > b->cfg.scratch_words) {
    tm_board_log(b, "challenge refused: fields out of range", 0, 0, 0);
    return -1;
  }
  for (i = 0; i < 8u; i++) {
    if (path_target[i] != b->task.path_target[i]) {
      tm_board_log(b, "challenge refused: path_target is not the one derived from the hash", 0, 0, 0);
      return -1;
    }
  }
  /* X was derived from the hash; the one sent must be the same */
  if (tm_json_get(j, "input_tensor.data", &data) != TM_JSON_ARRAY) return -1;
  tm_json_iter_init(&it, data);
  for (i = 0; tm_json_iter_next(&it, &v) == TM_JSON_NUMBER; i++) {
    int64_t x;
    if (i >= n * n || !tm_json_i64(v, -128, 127, &x) || (int8_t)x != b->cfg.input[i]) break;
  }
  if (i != n * n || tm_json_iter_next(&it, &v) != 0) {
    tm_board_log(b, "challenge refused: input_tensor is not the one derived from the hash", 0, 0, 0);
    return -1;
  }
  b->thresholds.mml_threshold_q16 = (uint32_t)q16;
  b->thresholds.path_distance_max = (uint8_t)dmax;
  b->job = JOB_TENSOR;
  b->slice = 1;
  return 0;
}

int32_t tm_board_fetch_job(tm_board *b) {
  tm_buf body;
  answer a;
  char code[48];
  const int32_t hex = b->version == 41u;
  tm_buf_init(&body, b->body, sizeof b->body);
  slot_fields(b, &body);
  if (!hex) {
    tm_buf_str(&body, ",\"device_type\":");
    tm_buf_json_str(&body, b->cfg.device_type);
  }
  tm_buf_char(&body, '}');
  if (body.overflow) return -1;
  if (exchange(b, "POST", hex ? "/api/hexchain/challenge" : "/challenge", b->body, body.len, 0, &a) != TM_HTTP_OK)
    return -1;
  if (a.http.status != 200) {
    error_code(&a, code, sizeof code);
    log_refusal(b, "challenge: ", &a);
    if (tm_streq(code, "miner_not_registered")) b->phase = PHASE_REGISTER; /* a validator with a new database */
    if (hex && a.http.status == 404 && !b->cfg.protocol) b->phase = PHASE_DETECT; /* no longer v4.1 */
    return -1;
  }
  if ((hex ? hex_job(b, &a) : tensor_job(b, &a)) != 0) return -1;
  b->next_nonce = 0;
  b->job_started_ms = tm_board_now(b);
  b->stats.jobs++;
  {
    char where[48];
    tm_buf w;
    tm_buf_init(&w, (uint8_t *)where, sizeof where - 1u);
    if (hex) {
      tm_buf_str(&w, " at (");
      tm_buf_i64(&w, b->q);
      tm_buf_char(&w, ',');
      tm_buf_i64(&w, b->r);
      tm_buf_char(&w, ',');
      tm_buf_i64(&w, b->s);
      tm_buf_str(&w, ") difficulty ");
      tm_buf_u64(&w, b->difficulty);
    } else {
      tm_buf_str(&w, " tensor N=");
      tm_buf_u64(&w, b->task.dim);
    }
    where[w.len] = '\0';
    tm_board_log(b, "job ", b->challenge_id, where, b->has_share_target ? " (shares)" : "");
  }
  return 0;
}

int32_t tm_board_cell_taken(tm_board *b) {
  char suffix[64];
  tm_buf s;
  answer a;
  tm_buf_init(&s, (uint8_t *)suffix, sizeof suffix - 1u);
  tm_buf_str(&s, "/api/hexchain/lattice/");
  tm_buf_i64(&s, b->q);
  tm_buf_char(&s, '/');
  tm_buf_i64(&s, b->r);
  tm_buf_char(&s, '/');
  tm_buf_i64(&s, b->s);
  suffix[s.len] = '\0';
  if (exchange(b, "GET", suffix, 0, 0, 0, &a) != TM_HTTP_OK && a.http.status == 0) return -1;
  if (a.http.status == 200) return 1;
  return a.http.status == 404 ? 0 : -1;
}

/* Sends a signed body, retried on a transport failure (an identical resubmission is answered
 * with the original acceptance). */
static int32_t send_solution(tm_board *b, const char *suffix, uint32_t len, answer *a) {
  uint32_t attempt;
  for (attempt = 0; attempt < 3u; attempt++) {
    if (exchange(b, "POST", suffix, b->body, len, 0, a) == TM_HTTP_OK) return 0;
  }
  return -1;
}

static void signature_array(tm_buf *body, const uint8_t signature[64]) {
  uint32_t i;
  tm_buf_str(body, "\"signature\":[");
  for (i = 0; i < 64u; i++) {
    if (i) tm_buf_char(body, ',');
    tm_buf_u64(body, signature[i]);
  }
  tm_buf_char(body, ']');
}

void tm_board_submit_hex(tm_board *b, uint64_t nonce, const uint8_t pow_hash[32]) {
  uint8_t header[88], signature[64];
  tm_buf body;
  answer a;
  char code[48];
  tm_span v;
  const int32_t share = b->has_share_target;
  (void)tm_hex_encode_header(b->q, b->r, b->s, b->challenge_hash, b->pub, nonce, header);
  tm_submission_sign(b->cfg.seed, b->pub, b->challenge_id, header, signature);
  tm_buf_init(&body, b->body, sizeof b->body);
  tm_buf_str(&body, "{\"challenge_id\":");
  tm_buf_json_str(&body, b->challenge_id);
  tm_buf_str(&body, ",\"block\":{\"coord\":{\"q\":");
  tm_buf_i64(&body, b->q);
  tm_buf_str(&body, ",\"r\":");
  tm_buf_i64(&body, b->r);
  tm_buf_str(&body, ",\"s\":");
  tm_buf_i64(&body, b->s);
  tm_buf_str(&body, "},\"pow_hash\":\"");
  tm_buf_hex(&body, pow_hash, 32);
  tm_buf_str(&body, "\",\"nonce\":");
  tm_buf_u64(&body, nonce);
  tm_buf_str(&body, ",\"miner_pubkey\":\"");
  tm_buf_hex(&body, b->pub, 32);
  tm_buf_str(&body, "\"},");
  signature_array(&body, signature);
  tm_buf_char(&body, '}');
  if (body.overflow || send_solution(b, share ? "/api/hexchain/pool/share" : "/api/hexchain/submit", body.len, &a) != 0) {
    tm_board_end_job(b, TM_JOB_SOLVED);
    return;
  }
  if (a.http.status == 200) {
    if (share && !(tm_json_get(a.json, "kind", &v) == TM_JSON_STRING && tm_json_str_eq(v, "block"))) {
      b->stats.shares_accepted++;
      return; /* a share: the job goes on */
    }
    b->stats.blocks_accepted++;
    tm_board_log(b, "block accepted: ", b->challenge_id, share ? " (pool)" : "", 0);
    tm_board_end_job(b, TM_JOB_SOLVED);
    return;
  }
  error_code(&a, code, sizeof code);
  log_refusal(b, share ? "share refused: " : "block refused: ", &a);
  if (share) {
    b->stats.shares_rejected++;
    /* a duplicate or an unlucky share leaves the job valid; anything else ends it */
    if (tm_streq(code, "share_duplicate") || tm_streq(code, "share_above_target")) return;
  } else {
    b->stats.blocks_rejected++;
  }
  tm_board_end_job(b, TM_JOB_SOLVED);
  if (tm_streq(code, "share_backoff") || a.http.status == 429) tm_board_fail(b);
}

/* mml_score on the wire: q16 / 65536 exactly, as a decimal (every such value has at most 16
 * fractional digits). */
static void put_q16(tm_buf *body, uint32_t q16) {
  uint64_t frac = (uint64_t)(q16 & 0xffffu) * UINT64_C(152587890625); /* 5^16: the fraction times 10^16 */
  char digits[17];
  uint32_t i, n = 16;
  tm_buf_u64(body, q16 >> 16);
  if (frac == 0u) return;
  for (i = 16; i-- > 0;) {
    digits[i] = (char)('0' + (char)(frac % 10u));
    frac /= 10u;
  }
  while (n > 0u && digits[n - 1u] == '0') n--;
  digits[n] = '\0';
  tm_buf_char(body, '.');
  tm_buf_str(body, digits);
}

void tm_board_submit_proof(tm_board *b, uint64_t nonce, const tm_work_result *w) {
  uint8_t signature[64];
  tm_buf body;
  answer a;
  tm_proof_sign(b->cfg.seed, b->pub, b->challenge_id, b->challenge_hash, nonce, w, signature);
  tm_buf_init(&body, b->body, sizeof b->body);
  tm_buf_str(&body, "{\"proof\":{\"challenge_id\":");
  tm_buf_json_str(&body, b->challenge_id);
  tm_buf_str(&body, ",\"challenge_hash\":\"");
  tm_buf_hex(&body, b->challenge_hash, 32);
  tm_buf_str(&body, "\",\"tensor_result_hash\":\"");
  tm_buf_hex(&body, w->tensor_result_hash, 32);
  tm_buf_str(&body, "\",\"mml_score\":");
  put_q16(&body, w->mml_score_q16);
  tm_buf_str(&body, ",\"path_signature\":\"");
  tm_buf_hex(&body, w->path_signature, 8);
  tm_buf_str(&body, "\",\"path_distance\":");
  tm_buf_u64(&body, w->path_distance);
  tm_buf_str(&body, ",\"computation_nonce\":");
  tm_buf_u64(&body, nonce);
  tm_buf_str(&body, ",\"computation_hash\":\"");
  tm_buf_hex(&body, w->computation_hash, 32);
  tm_buf_str(&body, "\",\"miner_pubkey\":\"");
  tm_buf_hex(&body, b->pub, 32);
  tm_buf_str(&body, "\"},");
  signature_array(&body, signature);
  tm_buf_char(&body, '}');
  if (!body.overflow && send_solution(b, "/submit", body.len, &a) == 0) {
    if (a.http.status == 200) {
      b->stats.proofs_accepted++;
      tm_board_log(b, "proof accepted: ", b->challenge_id, 0, 0);
    } else {
      b->stats.proofs_rejected++;
      log_refusal(b, "proof refused: ", &a);
    }
  }
  tm_board_end_job(b, TM_JOB_SOLVED);
}
