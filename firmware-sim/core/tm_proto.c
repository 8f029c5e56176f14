/* tm_proto.c: the device side of the serial protocol. See tm_proto.h and docs/serial-protocol.md. */
#include "tm_proto.h"

#include "tm_selftest.h"

#define TM_STORE_MAGIC 0x544D5201u /* "TMR" and the layout version */

/* ---- Little-endian fields ---- */

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static void put_u64(uint8_t *p, uint64_t v) {
  put_u32(p, (uint32_t)(v & 0xffffffffu));
  put_u32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) | ((uint64_t)get_u32(p + 4) << 32); }

static void copy_bytes(uint8_t *dst, const uint8_t *src, uint32_t n) {
  uint32_t i;
  for (i = 0; i < n; i++) dst[i] = src[i];
}

static int32_t equal_bytes(const uint8_t *a, const uint8_t *b, uint32_t n) {
  uint32_t i;
  uint8_t diff = 0;
  for (i = 0; i < n; i++) diff = (uint8_t)(diff | (a[i] ^ b[i]));
  return diff == 0 ? 1 : 0;
}

/* Milliseconds from `since` to `now` on a wrapping 32-bit clock. */
static uint32_t elapsed(uint32_t now, uint32_t since) { return (uint32_t)(now - since); }

/* 1 when `now` is at or after `at` (within half the clock's period). */
static int32_t reached(uint32_t now, uint32_t at) { return (uint32_t)(now - at) < 0x80000000u ? 1 : 0; }

/* ---- CRC-32 and frames ---- */

uint32_t tm_crc32(uint32_t crc, const uint8_t *data, uint32_t len) {
  uint32_t i, k;
  crc = ~crc;
  for (i = 0; i < len; i++) {
    crc ^= data[i];
    for (k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t tm_frame_encode(uint8_t type, uint16_t seq, const uint8_t *payload, uint32_t len, tm_crc32_fn crc,
                         uint8_t *out) {
  if (len > TM_FRAME_MAX_PAYLOAD) return 0;
  out[0] = (uint8_t)TM_FRAME_MAGIC0;
  out[1] = (uint8_t)TM_FRAME_MAGIC1;
  out[2] = (uint8_t)TM_PROTO_VERSION;
  out[3] = type;
  put_u16(out + 4, seq);
  put_u16(out + 6, (uint16_t)len);
  if (len > 0 && payload != out + TM_FRAME_HEADER_BYTES) copy_bytes(out + TM_FRAME_HEADER_BYTES, payload, len);
  put_u32(out + TM_FRAME_HEADER_BYTES + len, crc(0, out + 2, 6u + len));
  return TM_FRAME_OVERHEAD + len;
}

/* ---- The receiver ---- */

void tm_rx_init(tm_rx *rx, tm_crc32_fn crc) {
  rx->used = 0;
  rx->start_ms = 0;
  rx->last_ms = 0;
  rx->crc = crc;
  rx->frames = 0;
  rx->garbage_bytes = 0;
  rx->bad_headers = 0;
  rx->bad_crcs = 0;
  rx->timeouts = 0;
}

/* Drops the first n buffered bytes; what remains arrived by last_ms at the latest. */
static void rx_drop(tm_rx *rx, uint32_t n) {
  uint32_t i;
  for (i = n; i < rx->used; i++) rx->buf[i - n] = rx->buf[i];
  rx->used -= n;
  rx->start_ms = rx->last_ms;
}

/* Step 1: drops the bytes before the first 0xA5 0x5A (or a final lone 0xA5). */
static void rx_sync(tm_rx *rx) {
  uint32_t k = 0;
  while (k < rx->used) {
    if (rx->buf[k] == TM_FRAME_MAGIC0 && (k + 1u == rx->used || rx->buf[k + 1u] == TM_FRAME_MAGIC1)) break;
    k++;
  }
  if (k > 0) {
    rx->garbage_bytes += k;
    rx_drop(rx, k);
  }
}

/* Steps 1 to 4 until the buffer holds only the beginning of a frame (or nothing). */
static void rx_process(tm_rx *rx, tm_frame_handler on_frame, void *ctx) {
  for (;;) {
    uint32_t length, total;
    rx_sync(rx);
    if (rx->used < TM_FRAME_HEADER_BYTES) return;
    length = get_u16(rx->buf + 6);
    if (rx->buf[2] != TM_PROTO_VERSION || length > TM_FRAME_MAX_PAYLOAD) {
      rx->bad_headers++;
      rx->garbage_bytes++;
      rx_drop(rx, 1);
      continue;
    }
    total = TM_FRAME_OVERHEAD + length;
    if (rx->used < total) return;
    {
      const uint32_t want = get_u32(rx->buf + TM_FRAME_HEADER_BYTES + length);
      if (rx->crc(0, rx->buf + 2, 6u + length) != want) {
        rx->bad_crcs++;
        rx->garbage_bytes++;
        rx_drop(rx, 1);
        continue;
      }
      {
        tm_frame f;
        f.type = rx->buf[3];
        f.seq = get_u16(rx->buf + 4);
        f.length = (uint16_t)length;
        f.payload = rx->buf + TM_FRAME_HEADER_BYTES;
        f.crc = want;
        rx->frames++;
        on_frame(ctx, &f);
      }
      rx_drop(rx, total);
    }
  }
}

void tm_rx_tick(tm_rx *rx, uint32_t now_ms, tm_frame_handler on_frame, void *ctx) {
  while (rx->used > 0 && elapsed(now_ms, rx->start_ms) > TM_FRAME_PARTIAL_TIMEOUT_MS) {
    rx->timeouts++;
    if (elapsed(now_ms, rx->last_ms) > TM_FRAME_PARTIAL_TIMEOUT_MS) {
      /* every buffered byte is stale */
      rx->garbage_bytes += rx->used;
      rx->used = 0;
      return;
    }
    /* a lost tail: a newer frame may begin inside the stale one */
    rx->garbage_bytes++;
    rx_drop(rx, 1);
    rx_process(rx, on_frame, ctx);
  }
}

void tm_rx_feed(tm_rx *rx, const uint8_t *data, uint32_t len, uint32_t now_ms, tm_frame_handler on_frame,
                void *ctx) {
  uint32_t i = 0;
  tm_rx_tick(rx, now_ms, on_frame, ctx);
  rx->last_ms = now_ms;
  if (rx->used == 0) rx->start_ms = now_ms;
  while (i < len) {
    /* rx_process always leaves room: a complete frame or a bad header never stays buffered */
    uint32_t n = TM_FRAME_MAX_BYTES - rx->used;
    if (n > len - i) n = len - i;
    copy_bytes(rx->buf + rx->used, data + i, n);
    rx->used += n;
    i += n;
    rx_process(rx, on_frame, ctx);
  }
}

/* ---- The result store ---- */

static uint32_t store_compute_check(const tm_device *dev) {
  const tm_result_store *s = dev->store;
  uint8_t b[8];
  uint32_t c, i;
  put_u32(b, s->magic);
  put_u16(b + 4, s->next_seq);
  put_u16(b + 6, (uint16_t)TM_RESULT_SLOTS);
  c = dev->cfg.crc32(0, b, 8);
  for (i = 0; i < TM_RESULT_SLOTS; i++) {
    const tm_result_slot *slot = &s->slots[i];
    put_u16(b, slot->seq);
    b[2] = slot->length;
    c = dev->cfg.crc32(c, b, 3);
    if (slot->length > 0 && slot->length <= TM_RESULT_MAX_BYTES) c = dev->cfg.crc32(c, slot->payload, slot->length);
  }
  return c;
}

static void store_seal(tm_device *dev) { dev->store->check = store_compute_check(dev); }

static int32_t store_valid(const tm_device *dev) {
  const tm_result_store *s = dev->store;
  uint32_t i;
  if (s->magic != TM_STORE_MAGIC) return 0;
  for (i = 0; i < TM_RESULT_SLOTS; i++) {
    const uint8_t n = s->slots[i].length;
    if (n != 0 && n != TM_RESULT_HEX_BYTES && n != TM_RESULT_TENSOR_BYTES) return 0;
  }
  return s->check == store_compute_check(dev) ? 1 : 0;
}

static void store_clear(tm_device *dev) {
  tm_result_store *s = dev->store;
  uint32_t i, j;
  s->magic = TM_STORE_MAGIC;
  s->next_seq = 0;
  s->reserved = 0;
  for (i = 0; i < TM_RESULT_SLOTS; i++) {
    s->slots[i].seq = 0;
    s->slots[i].length = 0;
    s->slots[i].tries = 0;
    s->slots[i].sent_ms = 0;
    for (j = 0; j < TM_RESULT_MAX_BYTES; j++) s->slots[i].payload[j] = 0;
  }
  store_seal(dev);
}

static uint32_t store_pending(const tm_device *dev) {
  uint32_t i, n = 0;
  for (i = 0; i < TM_RESULT_SLOTS; i++) n += dev->store->slots[i].length > 0 ? 1u : 0u;
  return n;
}

static tm_result_slot *store_free_slot(tm_device *dev) {
  uint32_t i;
  for (i = 0; i < TM_RESULT_SLOTS; i++) {
    if (dev->store->slots[i].length == 0) return &dev->store->slots[i];
  }
  return 0;
}

/* ---- Sending ---- */

static uint8_t *tx_payload(tm_device *dev) { return dev->tx + TM_FRAME_HEADER_BYTES; }

static uint16_t next_seq(tm_device *dev) {
  const uint16_t seq = dev->store->next_seq;
  dev->store->next_seq = (uint16_t)(seq + 1u);
  store_seal(dev);
  return seq;
}

/* Frames the payload built in dev->tx (len bytes) with the given seq and writes it. */
static void tx_write(tm_device *dev, uint8_t type, uint16_t seq, uint32_t len) {
  const uint32_t n = tm_frame_encode(type, seq, tx_payload(dev), len, dev->cfg.crc32, dev->tx);
  if (n > 0) dev->cfg.write(dev->cfg.ctx, dev->tx, n);
}

static void tx_send(tm_device *dev, uint8_t type, uint32_t len) { tx_write(dev, type, next_seq(dev), len); }

static void send_ack(tm_device *dev, uint16_t seq, uint8_t status) {
  uint8_t *p = tx_payload(dev);
  put_u16(p, seq);
  p[2] = status;
  tx_send(dev, (uint8_t)TM_MSG_ACK, 3);
}

/* An ERROR message under construction (the lpstr of the ERROR payload). */
typedef struct {
  uint8_t text[96];
  uint32_t n;
} msg_buf;

static void msg_str(msg_buf *m, const char *s) {
  while (*s != '\0' && m->n < sizeof m->text) m->text[m->n++] = (uint8_t)*s++;
}

static void msg_u64(msg_buf *m, uint64_t v) {
  char digits[21];
  uint32_t n = 0;
  do {
    digits[n++] = (char)('0' + (char)(v % 10u));
    v /= 10u;
  } while (v > 0);
  while (n > 0 && m->n < sizeof m->text) m->text[m->n++] = (uint8_t)digits[--n];
}

static void send_error(tm_device *dev, uint8_t code, uint32_t job_id, const msg_buf *m) {
  uint8_t *p = tx_payload(dev);
  put_u16(p, code);
  put_u32(p + 2, job_id);
  p[6] = (uint8_t)m->n;
  copy_bytes(p + 7, m->text, m->n);
  tx_send(dev, (uint8_t)TM_MSG_ERROR, 7u + m->n);
}

static void send_error_text(tm_device *dev, uint8_t code, uint32_t job_id, const char *text) {
  msg_buf m;
  m.n = 0;
  msg_str(&m, text);
  send_error(dev, code, job_id, &m);
}

static uint32_t put_lpstr(uint8_t *p, const char *s) {
  uint32_t n = 0;
  if (s != 0) {
    while (s[n] != '\0' && n < TM_NAME_MAX) {
      p[1 + n] = (uint8_t)s[n];
      n++;
    }
  }
  p[0] = (uint8_t)n;
  return 1u + n;
}

void tm_device_send_hello(tm_device *dev) {
  uint8_t *p = tx_payload(dev);
  uint32_t n = 0;
  p[n++] = (uint8_t)TM_PROTO_VERSION;
  copy_bytes(p + n, dev->cfg.chip_id, 8);
  n += 8;
  n += put_lpstr(p + n, dev->cfg.firmware);
  n += put_lpstr(p + n, dev->cfg.board);
  put_u16(p + n, dev->cfg.capabilities);
  n += 2;
  p[n++] = dev->cfg.max_n;
  p[n++] = dev->cfg.max_f;
  put_u32(p + n, dev->hex_rate);
  n += 4;
  put_u32(p + n, dev->tensor_rate);
  n += 4;
  put_u32(p + n, dev->cfg.max_baud);
  n += 4;
  tx_send(dev, (uint8_t)TM_MSG_HELLO, n);
}

static void send_progress(tm_device *dev) {
  uint8_t *p = tx_payload(dev);
  const uint32_t dt = elapsed(dev->now_ms, dev->rate_mark_ms);
  const uint64_t dn = dev->hashes - dev->rate_mark_hashes;
  dev->rate = dev->job_kind == TM_JOB_NONE || dt == 0 ? 0u : (uint32_t)(dn * 1000u / dt);
  dev->rate_mark_ms = dev->now_ms;
  dev->rate_mark_hashes = dev->hashes;
  put_u32(p, dev->job_kind == TM_JOB_NONE ? 0u : dev->job_id);
  put_u64(p + 4, dev->job_kind == TM_JOB_NONE ? 0u : dev->job_done);
  put_u64(p + 12, dev->hashes);
  put_u32(p + 20, dev->rate);
  tx_send(dev, (uint8_t)TM_MSG_PROGRESS, 24);
  dev->last_progress_ms = dev->now_ms;
}

static void end_job(tm_device *dev, uint8_t reason) {
  uint8_t *p = tx_payload(dev);
  put_u32(p, dev->job_id);
  put_u64(p + 4, dev->job_done);
  p[12] = reason;
  dev->job_kind = TM_JOB_NONE;
  dev->stalled = 0;
  tx_send(dev, (uint8_t)TM_MSG_JOB_DONE, 13);
}

static void result_transmit(tm_device *dev, tm_result_slot *slot) {
  copy_bytes(tx_payload(dev), slot->payload, slot->length);
  tx_write(dev, (uint8_t)TM_MSG_RESULT, slot->seq, slot->length);
  slot->sent_ms = dev->now_ms;
  if (slot->tries < 255u) slot->tries++;
}

/* Stores a result (the caller checked that a slot is free) and sends it. */
static void push_result(tm_device *dev, tm_result_slot *slot, uint32_t length) {
  slot->length = (uint8_t)length;
  slot->tries = 0;
  slot->seq = next_seq(dev); /* seals the store with the new slot */
  result_transmit(dev, slot);
}

static void push_hex_result(tm_device *dev, const tm_block_solution *b) {
  tm_result_slot *slot = store_free_slot(dev);
  uint8_t *p;
  if (slot == 0) return;
  p = slot->payload;
  put_u32(p, dev->job_id);
  p[4] = (uint8_t)TM_RESULT_KIND_HEX;
  put_u64(p + 5, b->nonce);
  copy_bytes(p + 13, b->pow_hash, 32);
  push_result(dev, slot, TM_RESULT_HEX_BYTES);
}

static void push_tensor_result(tm_device *dev, const tm_tensor_solution *t) {
  tm_result_slot *slot = store_free_slot(dev);
  uint8_t *p;
  if (slot == 0) return;
  p = slot->payload;
  put_u32(p, dev->job_id);
  p[4] = (uint8_t)TM_RESULT_KIND_TENSOR;
  put_u64(p + 5, t->nonce);
  copy_bytes(p + 13, t->work.tensor_result_hash, 32);
  put_u32(p + 45, t->work.mml_score_q16);
  copy_bytes(p + 49, t->work.path_signature, 8);
  p[57] = t->work.path_distance;
  copy_bytes(p + 58, t->work.computation_hash, 32);
  push_result(dev, slot, TM_RESULT_TENSOR_BYTES);
}

/* ---- Handling host frames ---- */

int32_t tm_baud_supported(uint32_t baud, uint32_t max_baud) {
  static const uint32_t rates[] = {9600u,   19200u,  38400u,   57600u,   115200u,  230400u,
                                   460800u, 921600u, 1000000u, 1500000u, 2000000u};
  uint32_t i;
  if (baud > max_baud) return 0;
  for (i = 0; i < sizeof rates / sizeof rates[0]; i++) {
    if (rates[i] == baud) return 1;
  }
  return 0;
}

static uint8_t bad_length(msg_buf *m, const char *what, uint32_t want, uint32_t got) {
  msg_str(m, what);
  msg_str(m, ": expected ");
  msg_u64(m, want);
  msg_str(m, " bytes, got ");
  msg_u64(m, got);
  return (uint8_t)TM_PERR_MALFORMED;
}

static uint8_t refuse(msg_buf *m, uint8_t code, const char *text) {
  msg_str(m, text);
  return code;
}

/* Checks that the device can take a job and its nonce range; 0 or an error code. */
static uint8_t check_job_common(tm_device *dev, msg_buf *m, const char *what, uint32_t job_id, uint64_t first,
                                uint32_t count) {
  if (job_id == 0) {
    msg_str(m, what);
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, ": job id 0 (expected non-zero)");
  }
  if (first > TM_MAX_NONCE) {
    msg_str(m, what);
    msg_str(m, ": first nonce ");
    msg_u64(m, first);
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, " is above 2^53 - 1");
  }
  if (count == 0) {
    msg_str(m, what);
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, ": nonce count 0 (expected at least 1)");
  }
  if (dev->self_test != TM_OK) return refuse(m, (uint8_t)TM_PERR_INTERNAL, "self-test failed: no jobs");
  if (store_free_slot(dev) == 0) {
    return refuse(m, (uint8_t)TM_PERR_BUSY, "result buffer full: acknowledge the pending RESULTs");
  }
  return 0;
}

static uint8_t check_job_hex(tm_device *dev, const tm_frame *f, msg_buf *m) {
  const uint8_t *p = f->payload;
  if (f->length != TM_JOB_HEX_BYTES) return bad_length(m, "JOB_HEX", TM_JOB_HEX_BYTES, f->length);
  if ((dev->cfg.capabilities & TM_CAP_HEXCHAIN) == 0) {
    return refuse(m, (uint8_t)TM_PERR_UNSUPPORTED_JOB, "JOB_HEX: this board does not mine hexchain");
  }
  if (get_u32(p + 4) != TM_HEX_HEADER_VERSION) {
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_HEX: header version is not 0x00040100");
  }
  if (!tm_hex_target_in_range(p + 84)) {
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_HEX: target outside difficulty [16, 2^53 - 1]");
  }
  return check_job_common(dev, m, "JOB_HEX", get_u32(p), get_u64(p + 116), get_u32(p + 124));
}

static uint8_t check_job_tensor(tm_device *dev, const tm_frame *f, msg_buf *m) {
  const uint8_t *p = f->payload;
  uint8_t op, act, n, filters, derived[8];
  uint16_t caps = dev->cfg.capabilities;
  uint32_t words;
  if (f->length != TM_JOB_TENSOR_BYTES) return bad_length(m, "JOB_TENSOR", TM_JOB_TENSOR_BYTES, f->length);
  op = p[36];
  act = p[37];
  n = p[38];
  filters = p[39];
  if (op > TM_OP_CONV) return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_TENSOR: operation not 0 or 1");
  if (act > TM_ACT_TANH) return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_TENSOR: activation not 0, 1 or 2");
  if (n < TM_MIN_TENSOR_DIM || n > TM_MAX_TENSOR_DIM) {
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_TENSOR: N outside [4, 64]");
  }
  if (op == TM_OP_MATMUL && filters != 0) {
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_TENSOR: F must be 0 for matmul");
  }
  if (op == TM_OP_CONV && (filters < 1 || filters > TM_MAX_CONV_FILTERS)) {
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_TENSOR: F outside [1, 8] for conv");
  }
  if ((op == TM_OP_MATMUL && (caps & TM_CAP_MATMUL) == 0) || (op == TM_OP_CONV && (caps & TM_CAP_CONV) == 0)) {
    return refuse(m, (uint8_t)TM_PERR_UNSUPPORTED_JOB, "JOB_TENSOR: operation not supported by this board");
  }
  if ((act == TM_ACT_SIGMOID && (caps & TM_CAP_SIGMOID) == 0) || (act == TM_ACT_TANH && (caps & TM_CAP_TANH) == 0)) {
    return refuse(m, (uint8_t)TM_PERR_UNSUPPORTED_JOB, "JOB_TENSOR: activation not supported by this board");
  }
  if (n > dev->cfg.max_n || (op == TM_OP_CONV && filters > dev->cfg.max_f)) {
    msg_str(m, "JOB_TENSOR: tensor larger than this board's max N ");
    msg_u64(m, dev->cfg.max_n);
    msg_str(m, ", max F ");
    msg_u64(m, dev->cfg.max_f);
    return (uint8_t)TM_PERR_UNSUPPORTED_JOB;
  }
  words = op == TM_OP_CONV ? TM_SCRATCH_WORDS_CONV((uint32_t)n, (uint32_t)filters)
                           : TM_SCRATCH_WORDS_MATMUL((uint32_t)n);
  if (words > dev->cfg.scratch_words || (uint32_t)n * n > dev->cfg.input_bytes) {
    return refuse(m, (uint8_t)TM_PERR_INTERNAL, "JOB_TENSOR: scratch too small for this tensor");
  }
  tm_derive_path_target(p + 4, derived);
  if (!equal_bytes(derived, p + 72, 8)) {
    return refuse(m, (uint8_t)TM_PERR_MALFORMED, "JOB_TENSOR: path target is not the challenge hash's");
  }
  return check_job_common(dev, m, "JOB_TENSOR", get_u32(p), get_u64(p + 85), get_u32(p + 93));
}

static void start_range(tm_device *dev, uint32_t job_id, uint64_t first, uint32_t count) {
  uint64_t end = first + count;
  if (end > TM_MAX_NONCE + 1u) end = TM_MAX_NONCE + 1u;
  dev->job_id = job_id;
  dev->next_nonce = first;
  dev->end_nonce = end;
  dev->job_done = 0;
  dev->stalled = 0;
}

static void apply_job_hex(tm_device *dev, const uint8_t *p) {
  if (dev->job_kind != TM_JOB_NONE) end_job(dev, (uint8_t)TM_DONE_REPLACED);
  copy_bytes(dev->header, p + 4, TM_HEX_PREFIX_BYTES);
  copy_bytes(dev->target, p + 84, 32);
  start_range(dev, get_u32(p), get_u64(p + 116), get_u32(p + 124));
  dev->job_kind = TM_JOB_HEX;
}

static void apply_job_tensor(tm_device *dev, const uint8_t *p) {
  if (dev->job_kind != TM_JOB_NONE) end_job(dev, (uint8_t)TM_DONE_REPLACED);
  if (tm_task_init(&dev->task, p + 4, p[36], p[37], p[38], p[39], dev->cfg.input) != TM_OK) {
    send_error_text(dev, (uint8_t)TM_PERR_INTERNAL, get_u32(p), "JOB_TENSOR: task setup failed");
    return;
  }
  copy_bytes(dev->pubkey, p + 40, 32);
  dev->thresholds.mml_threshold_q16 = get_u32(p + 80);
  dev->thresholds.path_distance_max = p[84];
  start_range(dev, get_u32(p), get_u64(p + 85), get_u32(p + 93));
  dev->job_kind = TM_JOB_TENSOR;
}

static int32_t dedup_find(const tm_device *dev, const tm_frame *f) {
  uint32_t i;
  for (i = 0; i < dev->dedup_count; i++) {
    if (dev->dedup_seq[i] == f->seq && dev->dedup_crc[i] == f->crc) return (int32_t)i;
  }
  return -1;
}

static void dedup_remember(tm_device *dev, const tm_frame *f, uint8_t status) {
  const uint8_t i = dev->dedup_next;
  dev->dedup_seq[i] = f->seq;
  dev->dedup_crc[i] = f->crc;
  dev->dedup_status[i] = status;
  dev->dedup_next = (uint8_t)((i + 1u) % TM_DEDUP_SLOTS);
  if (dev->dedup_count < TM_DEDUP_SLOTS) dev->dedup_count++;
}

/* SET_BAUD, JOB_HEX, JOB_TENSOR, CANCEL, REBOOT: check, ACK, then act (once per seq and CRC). */
static void handle_acked(tm_device *dev, const tm_frame *f) {
  msg_buf m;
  uint8_t status = 0;
  uint32_t job_id = 0;
  const int32_t seen = dedup_find(dev, f);
  if (seen >= 0) {
    send_ack(dev, f->seq, dev->dedup_status[seen]);
    return;
  }
  m.n = 0;
  switch (f->type) {
  case TM_MSG_SET_BAUD:
    if (f->length != 4) {
      status = bad_length(&m, "SET_BAUD", 4, f->length);
    } else if (!tm_baud_supported(get_u32(f->payload), dev->cfg.max_baud) || dev->cfg.set_baud == 0) {
      msg_str(&m, "SET_BAUD: unsupported rate ");
      msg_u64(&m, get_u32(f->payload));
      status = (uint8_t)TM_PERR_BAUD;
    }
    break;
  case TM_MSG_JOB_HEX:
    if (f->length >= 4) job_id = get_u32(f->payload);
    status = check_job_hex(dev, f, &m);
    break;
  case TM_MSG_JOB_TENSOR:
    if (f->length >= 4) job_id = get_u32(f->payload);
    status = check_job_tensor(dev, f, &m);
    break;
  case TM_MSG_CANCEL:
    if (f->length != 4) status = bad_length(&m, "CANCEL", 4, f->length);
    break;
  default: /* TM_MSG_REBOOT */
    if (f->length != 0) status = bad_length(&m, "REBOOT", 0, f->length);
    break;
  }
  dedup_remember(dev, f, status);
  send_ack(dev, f->seq, status);
  if (status != 0) {
    send_error(dev, status, job_id, &m);
    return;
  }
  switch (f->type) {
  case TM_MSG_SET_BAUD:
    dev->baud_pending = get_u32(f->payload);
    dev->baud_switch_ms = dev->now_ms + TM_BAUD_SWITCH_DELAY_MS;
    break;
  case TM_MSG_JOB_HEX:
    apply_job_hex(dev, f->payload);
    break;
  case TM_MSG_JOB_TENSOR:
    apply_job_tensor(dev, f->payload);
    break;
  case TM_MSG_CANCEL: {
    const uint32_t id = get_u32(f->payload);
    if (dev->job_kind != TM_JOB_NONE && (id == 0 || id == dev->job_id)) end_job(dev, (uint8_t)TM_DONE_CANCELLED);
    break;
  }
  default:
    dev->reboot_pending = 1;
    dev->reboot_ms = dev->now_ms + TM_REBOOT_DELAY_MS;
    break;
  }
}

static void handle_ack(tm_device *dev, const tm_frame *f) {
  uint32_t i;
  uint16_t seq;
  if (f->length != 3) {
    msg_buf m;
    m.n = 0;
    send_error(dev, bad_length(&m, "ACK", 3, f->length), 0, &m);
    return;
  }
  seq = get_u16(f->payload);
  for (i = 0; i < TM_RESULT_SLOTS; i++) {
    tm_result_slot *slot = &dev->store->slots[i];
    if (slot->length > 0 && slot->seq == seq) {
      slot->length = 0;
      store_seal(dev);
      dev->stalled = 0;
    }
  }
}

static void on_frame(void *ctx, const tm_frame *f) {
  tm_device *dev = (tm_device *)ctx;
  if (dev->cfg.on_frame != 0) dev->cfg.on_frame(dev->cfg.ctx, f);
  dev->baud_watch = 0; /* a valid frame at the current rate */
  switch (f->type) {
  case TM_MSG_HELLO_REQ:
    tm_device_send_hello(dev);
    break;
  case TM_MSG_ACK:
    handle_ack(dev, f);
    break;
  case TM_MSG_SET_BAUD:
  case TM_MSG_JOB_HEX:
  case TM_MSG_JOB_TENSOR:
  case TM_MSG_CANCEL:
  case TM_MSG_REBOOT:
    handle_acked(dev, f);
    break;
  default: {
    msg_buf m;
    m.n = 0;
    msg_str(&m, "unknown message type ");
    msg_u64(&m, f->type);
    send_ack(dev, f->seq, (uint8_t)TM_PERR_UNKNOWN_TYPE);
    send_error(dev, (uint8_t)TM_PERR_UNKNOWN_TYPE, 0, &m);
    break;
  }
  }
}

/* ---- Life cycle ---- */

int32_t tm_device_init(tm_device *dev, const tm_device_config *cfg, uint8_t reset_reason) {
  const uint16_t caps = cfg->capabilities;
  uint32_t need_words = TM_SELFTEST_SCRATCH_WORDS, need_input = TM_SELFTEST_INPUT_BYTES, i;
  if (cfg->write == 0 || cfg->crc32 == 0 || cfg->store == 0 || cfg->scratch == 0 || cfg->input == 0) {
    return TM_ERR_ARGUMENT;
  }
  if (cfg->max_baud < TM_BAUD_DEFAULT || reset_reason > TM_RESET_OTHER) return TM_ERR_ARGUMENT;
  if ((caps & (TM_CAP_MATMUL | TM_CAP_CONV)) != 0) {
    const uint32_t n = cfg->max_n, f = cfg->max_f;
    if (n < TM_MIN_TENSOR_DIM || n > TM_MAX_TENSOR_DIM) return TM_ERR_ARGUMENT;
    if (n * n > need_input) need_input = n * n;
    if ((caps & TM_CAP_MATMUL) != 0 && TM_SCRATCH_WORDS_MATMUL(n) > need_words) need_words = TM_SCRATCH_WORDS_MATMUL(n);
    if ((caps & TM_CAP_CONV) != 0) {
      if (f < 1 || f > TM_MAX_CONV_FILTERS) return TM_ERR_ARGUMENT;
      if (TM_SCRATCH_WORDS_CONV(n, f) > need_words) need_words = TM_SCRATCH_WORDS_CONV(n, f);
    }
  }
  if (cfg->scratch_words < need_words || cfg->input_bytes < need_input) return TM_ERR_ARGUMENT;

  dev->cfg = *cfg;
  if ((caps & TM_CAP_CONV) == 0) dev->cfg.max_f = 0;
  if ((caps & (TM_CAP_MATMUL | TM_CAP_CONV)) == 0) dev->cfg.max_n = 0;
  dev->store = cfg->store;
  tm_rx_init(&dev->rx, cfg->crc32);
  dev->now_ms = 0;
  dev->reset_reason = reset_reason;
  dev->booted = 0;
  dev->self_test = TM_OK;
  dev->hex_rate = cfg->hex_rate_cap;
  dev->tensor_rate = cfg->tensor_rate_cap;
  for (i = 0; i < TM_DEDUP_SLOTS; i++) {
    dev->dedup_seq[i] = 0;
    dev->dedup_crc[i] = 0;
    dev->dedup_status[i] = 0;
  }
  dev->dedup_count = 0;
  dev->dedup_next = 0;
  dev->job_kind = TM_JOB_NONE;
  dev->stalled = 0;
  dev->job_id = 0;
  dev->next_nonce = 0;
  dev->end_nonce = 0;
  dev->job_done = 0;
  dev->hashes = 0;
  dev->rate_mark_hashes = 0;
  dev->rate_mark_ms = 0;
  dev->rate = 0;
  dev->last_progress_ms = 0;
  dev->baud = TM_BAUD_DEFAULT;
  dev->baud_pending = 0;
  dev->baud_switch_ms = 0;
  dev->baud_watch = 0;
  dev->baud_deadline_ms = 0;
  dev->reboot_pending = 0;
  dev->reboot_ms = 0;
  if (reset_reason == TM_RESET_POWER_ON || !store_valid(dev)) store_clear(dev);
  return TM_OK;
}

static uint32_t per_second(uint64_t nonces, uint32_t ms) {
  if (ms == 0) ms = 1;
  return nonces * 1000u / ms > 0xffffffffu ? 0xffffffffu : (uint32_t)(nonces * 1000u / ms);
}

/* Nonces per second of the block search (a target no hash meets). */
static uint32_t measure_hex(const tm_sha_port *port, tm_clock_fn clock, void *cctx, uint32_t ms) {
  uint8_t header[TM_HEX_PREFIX_BYTES], target[32];
  tm_block_solution b;
  uint64_t n = 0;
  uint32_t i, t0, dt;
  for (i = 0; i < TM_HEX_PREFIX_BYTES; i++) header[i] = (uint8_t)i;
  for (i = 0; i < 32; i++) target[i] = 0;
  t0 = clock(cctx);
  do {
    (void)tm_search_block_port(port, header, target, n, 256, &b);
    n += b.iterations;
    dt = elapsed(clock(cctx), t0);
  } while (dt < ms);
  return per_second(n, dt);
}

/* Nonces per second of the tensor search at max N (thresholds no nonce meets). */
static uint32_t measure_tensor(tm_device *dev, tm_clock_fn clock, void *cctx, uint32_t ms) {
  uint8_t hash[32], key[32];
  const uint8_t op = (dev->cfg.capabilities & TM_CAP_MATMUL) != 0 ? (uint8_t)TM_OP_MATMUL : (uint8_t)TM_OP_CONV;
  const tm_scratch scratch = {dev->cfg.scratch, dev->cfg.scratch_words};
  const tm_thresholds none = {0, 0};
  tm_task task;
  tm_tensor_solution sol;
  uint64_t n = 0;
  uint32_t i, t0, dt;
  for (i = 0; i < 32; i++) {
    hash[i] = (uint8_t)(0x40u + i);
    key[i] = (uint8_t)(0x80u + i);
  }
  if (tm_task_init(&task, hash, op, (uint8_t)TM_ACT_RELU, dev->cfg.max_n,
                   op == TM_OP_CONV ? dev->cfg.max_f : (uint8_t)0, dev->cfg.input) != TM_OK) {
    return 0;
  }
  t0 = clock(cctx);
  do {
    if (tm_search_tensor(&task, key, n, 1, &none, &scratch, &sol) < 0) return 0;
    n += sol.iterations;
    dt = elapsed(clock(cctx), t0);
  } while (dt < ms);
  return per_second(n, dt);
}

static uint32_t cap_rate(uint32_t measured, uint32_t cap) { return cap != 0 && cap < measured ? cap : measured; }

int32_t tm_device_boot(tm_device *dev, tm_clock_fn clock, void *clock_ctx, uint32_t calibrate_ms) {
  const tm_scratch scratch = {dev->cfg.scratch, dev->cfg.scratch_words};
  uint32_t i;
  dev->now_ms = clock != 0 ? clock(clock_ctx) : dev->now_ms;
  tx_payload(dev)[0] = dev->reset_reason;
  tx_send(dev, (uint8_t)TM_MSG_BOOT, 1);

  dev->self_test = tm_self_test(&scratch, dev->cfg.input);
  if (dev->self_test != TM_OK) {
    msg_buf m;
    m.n = 0;
    msg_str(&m, "self-test failed at check ");
    msg_u64(&m, (uint64_t)(dev->self_test < 0 ? 0 : dev->self_test));
    send_error(dev, (uint8_t)TM_PERR_INTERNAL, 0, &m);
  } else if (clock != 0 && calibrate_ms > 0) {
    if ((dev->cfg.capabilities & TM_CAP_HEXCHAIN) != 0) {
      dev->hex_rate = cap_rate(measure_hex(dev->cfg.sha_port, clock, clock_ctx, calibrate_ms), dev->cfg.hex_rate_cap);
    }
    if ((dev->cfg.capabilities & (TM_CAP_MATMUL | TM_CAP_CONV)) != 0) {
      dev->tensor_rate = cap_rate(measure_tensor(dev, clock, clock_ctx, calibrate_ms), dev->cfg.tensor_rate_cap);
    }
  }
  if ((dev->cfg.capabilities & TM_CAP_HEXCHAIN) == 0) dev->hex_rate = 0;
  if ((dev->cfg.capabilities & (TM_CAP_MATMUL | TM_CAP_CONV)) == 0) dev->tensor_rate = 0;

  dev->now_ms = clock != 0 ? clock(clock_ctx) : dev->now_ms;
  tm_device_send_hello(dev);
  dev->last_progress_ms = dev->now_ms;
  dev->rate_mark_ms = dev->now_ms;
  dev->rx.last_ms = dev->now_ms;
  dev->rx.start_ms = dev->now_ms;
  /* results kept from before a software reset, oldest (first found) first */
  {
    uint8_t sent[TM_RESULT_SLOTS];
    for (i = 0; i < TM_RESULT_SLOTS; i++) sent[i] = 0;
    for (;;) {
      uint32_t oldest = TM_RESULT_SLOTS;
      uint16_t oldest_age = 0;
      for (i = 0; i < TM_RESULT_SLOTS; i++) {
        const tm_result_slot *s = &dev->store->slots[i];
        const uint16_t age = (uint16_t)(dev->store->next_seq - s->seq);
        if (s->length == 0 || sent[i]) continue;
        if (oldest == TM_RESULT_SLOTS || age > oldest_age) {
          oldest = i;
          oldest_age = age;
        }
      }
      if (oldest == TM_RESULT_SLOTS) break;
      sent[oldest] = 1;
      result_transmit(dev, &dev->store->slots[oldest]);
    }
  }
  dev->booted = 1;
  return dev->self_test;
}

void tm_device_feed(tm_device *dev, const uint8_t *data, uint32_t len, uint32_t now_ms) {
  dev->now_ms = now_ms;
  tm_rx_feed(&dev->rx, data, len, now_ms, on_frame, dev);
}

static uint32_t auto_budget(const tm_device *dev) {
  if (dev->job_kind == TM_JOB_HEX) return dev->hex_rate >= 100u ? dev->hex_rate / 50u : 1024u;
  return dev->tensor_rate >= 100u ? dev->tensor_rate / 50u : 1u;
}

static uint32_t mine(tm_device *dev, uint32_t budget) {
  const tm_scratch scratch = {dev->cfg.scratch, dev->cfg.scratch_words};
  uint32_t mined = 0;
  if (dev->job_kind == TM_JOB_NONE || budget == 0) return 0;
  if (store_free_slot(dev) == 0) {
    if (!dev->stalled) {
      dev->stalled = 1;
      send_error_text(dev, (uint8_t)TM_PERR_BUSY, dev->job_id,
                      "result buffer full: mining paused until RESULTs are acknowledged");
    }
    return 0;
  }
  dev->stalled = 0;
  if (budget == TM_BUDGET_AUTO) budget = auto_budget(dev);
  while (mined < budget && dev->job_kind != TM_JOB_NONE) {
    uint64_t chunk = dev->end_nonce - dev->next_nonce, iterations, found_nonce = 0;
    int32_t rc;
    tm_block_solution b;
    tm_tensor_solution t;
    if (chunk > budget - mined) chunk = budget - mined;
    if (dev->job_kind == TM_JOB_HEX) {
      rc = tm_search_block_port(dev->cfg.sha_port, dev->header, dev->target, dev->next_nonce, chunk, &b);
      iterations = b.iterations;
      found_nonce = b.nonce;
    } else {
      rc = tm_search_tensor(&dev->task, dev->pubkey, dev->next_nonce, chunk, &dev->thresholds, &scratch, &t);
      iterations = t.iterations;
      found_nonce = t.nonce;
    }
    if (rc < 0 || (rc == TM_FOUND && found_nonce + 1u != dev->next_nonce + iterations)) {
      send_error_text(dev, (uint8_t)TM_PERR_INTERNAL, dev->job_id, "search failed");
      end_job(dev, (uint8_t)TM_DONE_EXHAUSTED);
      break;
    }
    dev->next_nonce += iterations;
    dev->job_done += iterations;
    dev->hashes += iterations;
    mined += (uint32_t)iterations;
    if (rc == TM_FOUND) {
      if (dev->job_kind == TM_JOB_HEX) {
        push_hex_result(dev, &b);
      } else {
        push_tensor_result(dev, &t);
      }
    }
    if (dev->next_nonce >= dev->end_nonce) {
      end_job(dev, (uint8_t)TM_DONE_EXHAUSTED);
      break;
    }
    if (iterations == 0 || store_free_slot(dev) == 0) break;
  }
  return mined;
}

uint32_t tm_device_poll(tm_device *dev, uint32_t now_ms, uint32_t budget) {
  uint32_t i;
  dev->now_ms = now_ms;
  tm_rx_tick(&dev->rx, now_ms, on_frame, dev);

  if (dev->reboot_pending && reached(now_ms, dev->reboot_ms)) {
    dev->reboot_pending = 0;
    if (dev->cfg.reboot != 0) dev->cfg.reboot(dev->cfg.ctx);
    return 0;
  }
  if (dev->baud_pending != 0 && reached(now_ms, dev->baud_switch_ms)) {
    dev->baud = dev->baud_pending;
    dev->baud_pending = 0;
    if (dev->cfg.set_baud != 0) dev->cfg.set_baud(dev->cfg.ctx, dev->baud);
    dev->baud_watch = dev->baud != TM_BAUD_DEFAULT ? 1u : 0u;
    dev->baud_deadline_ms = now_ms + TM_BAUD_FALLBACK_MS;
  }
  if (dev->baud_watch && reached(now_ms, dev->baud_deadline_ms)) {
    dev->baud_watch = 0;
    dev->baud = TM_BAUD_DEFAULT;
    if (dev->cfg.set_baud != 0) dev->cfg.set_baud(dev->cfg.ctx, dev->baud);
  }
  for (i = 0; i < TM_RESULT_SLOTS; i++) {
    tm_result_slot *slot = &dev->store->slots[i];
    if (slot->length > 0 && elapsed(now_ms, slot->sent_ms) >= TM_RETRANSMIT_MS) result_transmit(dev, slot);
  }
  if (elapsed(now_ms, dev->last_progress_ms) >=
      (dev->job_kind != TM_JOB_NONE ? TM_PROGRESS_BUSY_MS : TM_PROGRESS_IDLE_MS)) {
    send_progress(dev);
  }
  return mine(dev, budget);
}

void tm_device_status_get(const tm_device *dev, tm_device_status *out) {
  out->job_kind = dev->job_kind;
  out->stalled = dev->stalled;
  out->job_operation = dev->job_kind == TM_JOB_TENSOR ? dev->task.operation : 0u;
  out->job_dim = dev->job_kind == TM_JOB_TENSOR ? (uint8_t)dev->task.dim : 0u;
  out->job_filters = dev->job_kind == TM_JOB_TENSOR ? dev->task.filters : 0u;
  out->job_id = dev->job_kind != TM_JOB_NONE ? dev->job_id : 0u;
  out->job_done = dev->job_kind != TM_JOB_NONE ? dev->job_done : 0u;
  out->job_remaining = dev->job_kind != TM_JOB_NONE ? dev->end_nonce - dev->next_nonce : 0u;
  out->hashes = dev->hashes;
  out->rate = dev->rate;
  out->hex_rate = dev->hex_rate;
  out->tensor_rate = dev->tensor_rate;
  out->pending_results = store_pending(dev);
  out->baud = dev->baud;
  out->self_test = dev->self_test;
  out->rx_frames = dev->rx.frames;
  out->rx_garbage_bytes = dev->rx.garbage_bytes;
  out->rx_bad_headers = dev->rx.bad_headers;
  out->rx_bad_crcs = dev->rx.bad_crcs;
  out->rx_timeouts = dev->rx.timeouts;
}
