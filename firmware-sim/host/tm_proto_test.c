/*
 * tm-proto-test: unit tests of core/tm_proto (`make test`). A fake clock and a captured write
 * callback; no tty. Covers the frame codec, the receiver (split and merged frames, garbage,
 * bad headers and CRCs, resynchronisation inside a bad frame, the 1 s partial-frame timeout)
 * and the device (jobs, results and their retransmission, dedup, cancel, replacement, busy,
 * baud switch and fall-back, reboot, heartbeats, results kept across a software reset).
 * The worked examples of docs/protocol.md 3.8 and 4.10 are the known answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../core/tm_proto.h"
#include "../core/tm_selftest.h"

static unsigned failures, checks;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    checks++;                                                                                      \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)

static uint32_t zcrc(uint32_t crc, const uint8_t *data, uint32_t len) {
  return (uint32_t)crc32((uLong)crc, (const Bytef *)data, (uInt)len);
}

static void from_hex(const char *hex, uint8_t *out, uint32_t n) {
  uint32_t i;
  for (i = 0; i < n; i++) {
    unsigned v;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = (uint8_t)v;
  }
}

static void put16(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v) {
  put16(p, v & 0xffffu);
  put16(p + 2, v >> 16);
}
static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)(v & 0xffffffffu));
  put32(p + 4, (uint32_t)(v >> 32));
}
static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return get16(p) | (get16(p + 2) << 16); }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32); }

/* ---- Collected frames ---- */

#define MAX_FRAMES 512
typedef struct {
  uint8_t type;
  uint16_t seq;
  uint16_t length;
  uint8_t payload[TM_FRAME_MAX_PAYLOAD];
  uint32_t crc;
} rec_frame;

typedef struct {
  rec_frame frames[MAX_FRAMES];
  uint32_t n;
} frame_log;

static void collect(void *ctx, const tm_frame *f) {
  frame_log *log = (frame_log *)ctx;
  rec_frame *r;
  if (log->n >= MAX_FRAMES) return;
  r = &log->frames[log->n++];
  r->type = f->type;
  r->seq = f->seq;
  r->length = f->length;
  r->crc = f->crc;
  memcpy(r->payload, f->payload, f->length);
}

static uint32_t count_type(const frame_log *log, uint8_t type) {
  uint32_t i, n = 0;
  for (i = 0; i < log->n; i++) n += log->frames[i].type == type ? 1u : 0u;
  return n;
}

static const rec_frame *find_type(const frame_log *log, uint8_t type, uint32_t nth) {
  uint32_t i;
  for (i = 0; i < log->n; i++) {
    if (log->frames[i].type == type && nth-- == 0) return &log->frames[i];
  }
  return NULL;
}

/* ---- The codec and the receiver ---- */

static uint32_t make_frame(uint8_t type, uint16_t seq, const uint8_t *payload, uint32_t len, uint8_t *out) {
  return tm_frame_encode(type, seq, payload, len, zcrc, out);
}

static void test_crc(void) {
  static const uint8_t check[9] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  uint8_t data[1000];
  uint32_t i;
  CHECK(tm_crc32(0, check, 9) == 0xCBF43926u);
  CHECK(zcrc(0, check, 9) == 0xCBF43926u);
  for (i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7u + (i >> 3));
  for (i = 0; i < sizeof data; i += 37) CHECK(tm_crc32(0, data, i) == zcrc(0, data, i));
  CHECK(tm_crc32(tm_crc32(0, data, 100), data + 100, 900) == zcrc(0, data, 1000));
}

static void test_encode(void) {
  uint8_t out[TM_FRAME_MAX_BYTES + 8], payload[TM_FRAME_MAX_PAYLOAD + 1];
  uint32_t n;
  memset(payload, 0x33, sizeof payload);
  n = make_frame(0x41, 0x1234, payload, 3, out);
  CHECK(n == 15);
  CHECK(out[0] == 0xA5 && out[1] == 0x5A && out[2] == 1 && out[3] == 0x41);
  CHECK(out[4] == 0x34 && out[5] == 0x12 && out[6] == 3 && out[7] == 0);
  CHECK(get32(out + 11) == zcrc(0, out + 2, 9));
  CHECK(make_frame(0x41, 1, payload, TM_FRAME_MAX_PAYLOAD, out) == TM_FRAME_MAX_BYTES);
  CHECK(make_frame(0x41, 1, payload, TM_FRAME_MAX_PAYLOAD + 1, out) == 0);
}

static frame_log rxlog;

static void test_rx_split_and_merged(void) {
  tm_rx rx;
  uint8_t stream[4096], p[300];
  uint32_t n = 0, i, k;
  for (i = 0; i < sizeof p; i++) p[i] = (uint8_t)(i ^ 0xA5u);
  /* text before, garbage between, a false magic, frames of 0, 1, 300 and 1 bytes */
  memcpy(stream, "ets Jun  8 2016 boot\r\n", 22);
  n = 22;
  n += make_frame(0x01, 0, p, 0, stream + n);
  stream[n++] = 0xA5;
  stream[n++] = 0x5A;
  stream[n++] = 0x07; /* version 7: not a frame */
  n += make_frame(0x02, 1, p, 1, stream + n);
  stream[n++] = 0x00;
  stream[n++] = 0xA5;
  n += make_frame(0x03, 2, p, 300, stream + n);
  n += make_frame(0x04, 3, p + 5, 1, stream + n);

  /* one byte at a time, all at once, and in pieces of every size up to 40 */
  for (k = 0; k <= 40; k++) {
    const uint32_t step = k == 0 ? n : k;
    tm_rx_init(&rx, zcrc);
    rxlog.n = 0;
    for (i = 0; i < n; i += step) tm_rx_feed(&rx, stream + i, i + step > n ? n - i : step, 10, collect, &rxlog);
    CHECK(rxlog.n == 4);
    CHECK(rxlog.frames[0].type == 0x01 && rxlog.frames[0].length == 0);
    CHECK(rxlog.frames[1].type == 0x02 && rxlog.frames[1].seq == 1 && rxlog.frames[1].payload[0] == p[0]);
    CHECK(rxlog.frames[2].type == 0x03 && rxlog.frames[2].length == 300 && memcmp(rxlog.frames[2].payload, p, 300) == 0);
    CHECK(rxlog.frames[3].type == 0x04 && rxlog.frames[3].payload[0] == p[5]);
    CHECK(rx.bad_headers >= 1);
    CHECK(rx.used == 0);
  }
}

static void test_rx_bad_crc_and_lengths(void) {
  tm_rx rx;
  uint8_t stream[4096], p[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  uint32_t n = 0, m;
  tm_rx_init(&rx, zcrc);
  rxlog.n = 0;
  /* a frame with a corrupted payload byte, then a good one */
  m = make_frame(0x05, 9, p, 16, stream);
  stream[10] ^= 0x40;
  n = m;
  n += make_frame(0x05, 10, p, 4, stream + n);
  /* a header claiming 1025 bytes, then a good one */
  stream[n++] = 0xA5;
  stream[n++] = 0x5A;
  stream[n++] = 0x01;
  stream[n++] = 0x05;
  stream[n++] = 0x00;
  stream[n++] = 0x00;
  stream[n++] = 0x01;
  stream[n++] = 0x04; /* 0x0401 = 1025 */
  n += make_frame(0x05, 11, p, 4, stream + n);
  tm_rx_feed(&rx, stream, n, 0, collect, &rxlog);
  CHECK(rxlog.n == 2);
  CHECK(rxlog.n == 2 && rxlog.frames[0].seq == 10 && rxlog.frames[1].seq == 11);
  CHECK(rx.bad_crcs == 1);
  CHECK(rx.bad_headers == 1);
}

/* A frame that starts inside a bad one is found when the bad one's CRC fails. */
static void test_rx_frame_inside_bad_frame(void) {
  tm_rx rx;
  uint8_t stream[512], p[64];
  uint32_t n = 0, inner;
  memset(p, 0x11, sizeof p);
  tm_rx_init(&rx, zcrc);
  rxlog.n = 0;
  /* a header that claims 40 payload bytes, whose "payload" holds a complete 16-byte frame */
  stream[n++] = 0xA5;
  stream[n++] = 0x5A;
  stream[n++] = 0x01;
  stream[n++] = 0x03;
  stream[n++] = 0x00;
  stream[n++] = 0x00;
  stream[n++] = 40;
  stream[n++] = 0x00;
  inner = make_frame(0x06, 77, p, 4, stream + n);
  n += inner;
  memset(stream + n, 0x22, 40 + 4 - inner);
  n += 40 + 4 - inner;
  tm_rx_feed(&rx, stream, n, 0, collect, &rxlog);
  CHECK(rxlog.n == 1 && rxlog.frames[0].seq == 77);
  CHECK(rx.bad_crcs == 1);
}

/* The 1 s partial-frame timeout: a stale fragment never joins a later frame. */
static void test_rx_timeout(void) {
  tm_rx rx;
  uint8_t a[64], b[64], p[8] = {9, 8, 7, 6, 5, 4, 3, 2};
  uint32_t na, nb;
  na = make_frame(0x01, 1, p, 8, a);
  nb = make_frame(0x01, 2, p, 8, b);

  /* a half frame, then 1.5 s later a whole one: only the whole one arrives */
  tm_rx_init(&rx, zcrc);
  rxlog.n = 0;
  tm_rx_feed(&rx, a, 10, 1000, collect, &rxlog);
  tm_rx_feed(&rx, b, nb, 2500, collect, &rxlog);
  CHECK(rxlog.n == 1 && rxlog.frames[0].seq == 2);
  CHECK(rx.timeouts >= 1);

  /* the same tail 0.5 s later completes the frame */
  tm_rx_init(&rx, zcrc);
  rxlog.n = 0;
  tm_rx_feed(&rx, a, 10, 1000, collect, &rxlog);
  tm_rx_feed(&rx, a + 10, na - 10, 1500, collect, &rxlog);
  CHECK(rxlog.n == 1 && rxlog.frames[0].seq == 1);
  CHECK(rx.timeouts == 0);

  /* a stale fragment discarded by the clock alone (tick), then a frame */
  tm_rx_init(&rx, zcrc);
  rxlog.n = 0;
  tm_rx_feed(&rx, a, 10, 0xFFFFFF00u, collect, &rxlog); /* across the clock's wrap */
  tm_rx_tick(&rx, 0xFFFFFF00u + 1001u, collect, &rxlog);
  CHECK(rx.used == 0);
  tm_rx_feed(&rx, b, nb, 0xFFFFFF00u + 1002u, collect, &rxlog);
  CHECK(rxlog.n == 1 && rxlog.frames[0].seq == 2);

  /* a fragment whose claimed length swallows a newer frame: after 1 s the newer one is found */
  tm_rx_init(&rx, zcrc);
  rxlog.n = 0;
  {
    uint8_t frag[8] = {0xA5, 0x5A, 0x01, 0x03, 0x00, 0x00, 0x00, 0x02}; /* claims 512 bytes */
    tm_rx_feed(&rx, frag, 8, 0, collect, &rxlog);
    tm_rx_feed(&rx, b, nb, 900, collect, &rxlog);
    CHECK(rxlog.n == 0);
    tm_rx_tick(&rx, 1001, collect, &rxlog);
    CHECK(rxlog.n == 1 && rxlog.frames[0].seq == 2);
  }
}

/* ---- The device ---- */

typedef struct {
  frame_log out; /* frames the device wrote */
  tm_rx rx;      /* decodes them */
  uint32_t bauds[8];
  uint32_t n_bauds;
  uint32_t reboots;
  uint32_t now;
} harness;

static harness H;
static int32_t scratch[TM_SCRATCH_WORDS_ANY(32u, 4u)];
static int8_t input[32 * 32];
static tm_result_store store;
static tm_device dev;
static uint16_t host_seq;

static void w_cb(void *ctx, const uint8_t *frame, uint32_t len) {
  harness *h = (harness *)ctx;
  const uint32_t before = h->out.n;
  tm_rx_feed(&h->rx, frame, len, h->now, collect, &h->out);
  CHECK(h->out.n == before + 1); /* every write is exactly one valid frame */
}
static void baud_cb(void *ctx, uint32_t baud) {
  harness *h = (harness *)ctx;
  if (h->n_bauds < 8) h->bauds[h->n_bauds++] = baud;
}
static void reboot_cb(void *ctx) { ((harness *)ctx)->reboots++; }
static uint32_t clock_cb(void *ctx) { return ((harness *)ctx)->now; }

static tm_device_config config(void) {
  tm_device_config c;
  memset(&c, 0, sizeof c);
  memcpy(c.chip_id, "\x24\x6f\x28\x01\x02\x03\x00\x00", 8);
  c.firmware = "tm-fw 0.1.0";
  c.board = "unit-test";
  c.capabilities = TM_CAP_ALL;
  c.max_n = 32;
  c.max_f = 4;
  c.max_baud = 921600;
  c.hex_rate_cap = 50000;
  c.tensor_rate_cap = 2000;
  c.scratch = scratch;
  c.scratch_words = sizeof scratch / sizeof scratch[0];
  c.input = input;
  c.input_bytes = sizeof input;
  c.store = &store;
  c.ctx = &H;
  c.write = w_cb;
  c.crc32 = zcrc;
  c.set_baud = baud_cb;
  c.reboot = reboot_cb;
  return c;
}

static void start(uint8_t reason) {
  tm_device_config c = config();
  H.out.n = 0;
  tm_rx_init(&H.rx, zcrc);
  H.n_bauds = 0;
  H.reboots = 0;
  CHECK(tm_device_init(&dev, &c, reason) == TM_OK);
  CHECK(tm_device_boot(&dev, clock_cb, &H, 0) == TM_OK);
}

/* Sends a host frame to the device; returns its seq. */
static uint16_t send(uint8_t type, const uint8_t *payload, uint32_t len) {
  uint8_t f[TM_FRAME_MAX_BYTES];
  const uint16_t seq = host_seq++;
  const uint32_t n = make_frame(type, seq, payload, len, f);
  tm_device_feed(&dev, f, n, H.now);
  return seq;
}

static void resend(uint8_t type, uint16_t seq, const uint8_t *payload, uint32_t len) {
  uint8_t f[TM_FRAME_MAX_BYTES];
  const uint32_t n = make_frame(type, seq, payload, len, f);
  tm_device_feed(&dev, f, n, H.now);
}

static void ack(uint16_t seq) {
  uint8_t p[3];
  put16(p, seq);
  p[2] = 0;
  send(TM_MSG_ACK, p, 3);
}

/* The ACK the device sent for a host seq (the last one), or NULL. */
static const rec_frame *ack_for(uint16_t seq) {
  const rec_frame *found = NULL;
  uint32_t i;
  for (i = 0; i < H.out.n; i++) {
    if (H.out.frames[i].type == TM_MSG_ACK && get16(H.out.frames[i].payload) == seq) found = &H.out.frames[i];
  }
  return found;
}

/* Advances the clock in steps of `step` ms, polling with `budget` each time. */
static void run(uint32_t ms, uint32_t step, uint32_t budget) {
  uint32_t t;
  for (t = 0; t < ms; t += step) {
    H.now += step;
    tm_device_poll(&dev, H.now, budget);
  }
}

/* 4.10: D = 16, solution nonce 47, pow hash 02053b00... */
static void hex_job(uint8_t *p, uint32_t id, uint64_t first, uint32_t count) {
  uint8_t hash[32], key[32];
  memset(p, 0, TM_JOB_HEX_BYTES);
  put32(p, id);
  from_hex("295db96cc34fbc43b84954ba4b79c063719648419e45a7ff380a80fad932158c", hash, 32);
  from_hex("8b463259be576f09398f2dd84a8556812662610b274dd3c783ef0451a26dd837", key, 32);
  {
    uint8_t header[88];
    CHECK(tm_hex_encode_header(0, -1, 1, hash, key, 0, header) == TM_OK);
    memcpy(p + 4, header, 80);
  }
  from_hex("0fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", p + 84, 32);
  put64(p + 116, first);
  put32(p + 124, count);
}

/* 3.8: esp8266 matmul relu N = 16, thresholds 65536 / 29, solutions at nonces 0 and 4 */
static void tensor_job(uint8_t *p, uint32_t id, uint64_t first, uint32_t count) {
  memset(p, 0, TM_JOB_TENSOR_BYTES);
  put32(p, id);
  from_hex("85fda3817c1614f068a9a0373637de357855f1394964a626a507a3d7f2e27b21", p + 4, 32);
  p[36] = TM_OP_MATMUL;
  p[37] = TM_ACT_RELU;
  p[38] = 16;
  p[39] = 0;
  from_hex("4640a09fb16ad51274818d3c667bc58d229c4093d2e2173a0e8d537bb5960fe0", p + 40, 32);
  from_hex("4972e795191dbe5d", p + 72, 8);
  put32(p + 80, 65536);
  p[84] = 29;
  put64(p + 85, first);
  put32(p + 93, count);
}

/* The same header with a target of difficulty about 2^31: no solution in a test's time. */
static void hard_hex_job(uint8_t *p, uint32_t id, uint64_t first, uint32_t count) {
  hex_job(p, id, first, count);
  from_hex("00000001ffffffffffffffffffffffffffffffffffffffffffffffffffffffff", p + 84, 32);
}

static void test_boot_and_hello(void) {
  const rec_frame *boot, *hello;
  H.now = 5000;
  start(TM_RESET_POWER_ON);
  CHECK(H.out.n == 2);
  boot = find_type(&H.out, TM_MSG_BOOT, 0);
  hello = find_type(&H.out, TM_MSG_HELLO, 0);
  CHECK(boot != NULL && boot->length == 1 && boot->payload[0] == TM_RESET_POWER_ON && boot->seq == 0);
  CHECK(hello != NULL && hello->seq == 1);
  if (hello != NULL) {
    const uint8_t *p = hello->payload;
    CHECK(p[0] == 1);
    CHECK(memcmp(p + 1, "\x24\x6f\x28\x01\x02\x03\x00\x00", 8) == 0);
    CHECK(p[9] == 11 && memcmp(p + 10, "tm-fw 0.1.0", 11) == 0);
    CHECK(p[21] == 9 && memcmp(p + 22, "unit-test", 9) == 0);
    CHECK(get16(p + 31) == TM_CAP_ALL && p[33] == 32 && p[34] == 4);
    CHECK(get32(p + 35) == 50000 && get32(p + 39) == 2000 && get32(p + 43) == 921600);
    CHECK(hello->length == 47);
  }
  H.out.n = 0;
  {
    const uint8_t v = 1;
    send(TM_MSG_HELLO_REQ, &v, 1);
  }
  CHECK(H.out.n == 1 && H.out.frames[0].type == TM_MSG_HELLO);
}

static void test_boot_reason(void) {
  tm_device_config c = config();
  H.out.n = 0;
  CHECK(tm_device_init(&dev, &c, TM_RESET_WATCHDOG) == TM_OK);
  CHECK(tm_device_boot(&dev, clock_cb, &H, 0) == TM_OK);
  CHECK(H.out.n == 2 && H.out.frames[0].type == TM_MSG_BOOT && H.out.frames[0].payload[0] == TM_RESET_WATCHDOG);
  CHECK(tm_device_init(&dev, &c, 5) == TM_ERR_ARGUMENT);
}

static uint32_t ticking_ms;
static uint32_t ticking_clock(void *ctx) {
  (void)ctx;
  return ticking_ms++;
}

static void test_measured_rates(void) {
  tm_device_config c = config();
  tm_device_status st;
  c.hex_rate_cap = 0;
  c.tensor_rate_cap = 0;
  H.out.n = 0;
  CHECK(tm_device_init(&dev, &c, TM_RESET_POWER_ON) == TM_OK);
  ticking_ms = 0;
  CHECK(tm_device_boot(&dev, ticking_clock, NULL, 20) == TM_OK);
  tm_device_status_get(&dev, &st);
  /* 256 block nonces or one tensor nonce per millisecond of this fake clock */
  CHECK(st.hex_rate == 256000u);
  CHECK(st.tensor_rate == 1000u);
  c.hex_rate_cap = 1234;
  c.tensor_rate_cap = 56;
  CHECK(tm_device_init(&dev, &c, TM_RESET_POWER_ON) == TM_OK);
  CHECK(tm_device_boot(&dev, ticking_clock, NULL, 20) == TM_OK);
  tm_device_status_get(&dev, &st);
  CHECK(st.hex_rate == 1234u && st.tensor_rate == 56u);
}

static void test_hex_job_result_and_retransmission(void) {
  uint8_t job[TM_JOB_HEX_BYTES], want[32];
  const rec_frame *r, *done;
  uint16_t seq;
  uint32_t n_results;
  H.now = 10000;
  start(TM_RESET_POWER_ON);
  H.out.n = 0;
  hex_job(job, 7, 0, 100);
  seq = send(TM_MSG_JOB_HEX, job, sizeof job);
  CHECK(ack_for(seq) != NULL && ack_for(seq)->payload[2] == 0);
  run(10, 10, 1000);
  r = find_type(&H.out, TM_MSG_RESULT, 0);
  from_hex("02053b00db818af8af8bef78d477e528bdad913f42a00d5451af4a4570d346f5", want, 32);
  CHECK(r != NULL);
  if (r == NULL) return;
  CHECK(r->length == TM_RESULT_HEX_BYTES && get32(r->payload) == 7 && r->payload[4] == 0);
  CHECK(get64(r->payload + 5) == 47 && memcmp(r->payload + 13, want, 32) == 0);
  /* every solution in the range is reported, then JOB_DONE reason 0 with all 100 nonces */
  done = find_type(&H.out, TM_MSG_JOB_DONE, 0);
  CHECK(done != NULL && get32(done->payload) == 7 && get64(done->payload + 4) == 100 && done->payload[12] == 0);
  n_results = count_type(&H.out, TM_MSG_RESULT);
  CHECK(n_results >= 2); /* D = 16 over 100 nonces */
  /* unacknowledged: retransmitted every 250 ms with the same seq and bytes */
  {
    const uint16_t rseq = r->seq;
    const uint32_t rcrc = r->crc;
    uint32_t i, copies = 0;
    H.out.n = 0;
    run(1000, 10, 0);
    for (i = 0; i < H.out.n; i++) {
      if (H.out.frames[i].type == TM_MSG_RESULT && H.out.frames[i].seq == rseq) {
        copies++;
        CHECK(H.out.frames[i].crc == rcrc);
      }
    }
    CHECK(copies == 4);
    CHECK(count_type(&H.out, TM_MSG_RESULT) == 4 * n_results);
    ack(rseq);
    H.out.n = 0;
    run(1000, 10, 0);
    copies = 0;
    for (i = 0; i < H.out.n; i++) copies += H.out.frames[i].type == TM_MSG_RESULT && H.out.frames[i].seq == rseq;
    CHECK(copies == 0);
    CHECK(count_type(&H.out, TM_MSG_RESULT) == 4 * (n_results - 1));
  }
}

static void test_tensor_job(void) {
  uint8_t job[TM_JOB_TENSOR_BYTES], want[32];
  const rec_frame *r;
  H.now = 20000;
  start(TM_RESET_POWER_ON);
  H.out.n = 0;
  tensor_job(job, 9, 1, 4); /* [1, 5): exactly the one solution, nonce 4 */
  send(TM_MSG_JOB_TENSOR, job, sizeof job);
  run(30, 10, 3); /* small budgets: three polls */
  CHECK(count_type(&H.out, TM_MSG_RESULT) == 1);
  r = find_type(&H.out, TM_MSG_RESULT, 0);
  from_hex("1f6365301a1301568f3f51c3d10b62afba9e8429abeefcacc8763cbd5e567c57", want, 32);
  CHECK(r != NULL && r->length == TM_RESULT_TENSOR_BYTES);
  if (r == NULL) return;
  CHECK(get32(r->payload) == 9 && r->payload[4] == 1 && get64(r->payload + 5) == 4);
  CHECK(memcmp(r->payload + 58, want, 32) == 0);
  CHECK(get32(r->payload + 45) <= 65536 && r->payload[57] <= 29);
  CHECK(find_type(&H.out, TM_MSG_JOB_DONE, 0) != NULL);
}

static void test_budget(void) {
  uint8_t job[TM_JOB_HEX_BYTES];
  H.now = 30000;
  start(TM_RESET_POWER_ON);
  hard_hex_job(job, 1, 1000, 100000);
  send(TM_MSG_JOB_HEX, job, sizeof job);
  CHECK(tm_device_poll(&dev, H.now, 0) == 0);
  CHECK(tm_device_poll(&dev, H.now, 17) == 17);
  CHECK(tm_device_poll(&dev, H.now, TM_BUDGET_AUTO) == 1000); /* 50000 / 50 */
  {
    tm_device_status st;
    tm_device_status_get(&dev, &st);
    CHECK(st.job_id == 1 && st.job_done == 1017 && st.job_remaining == 100000 - 1017);
  }
}

static void test_dedup_cancel_replace(void) {
  uint8_t job[TM_JOB_HEX_BYTES], job2[TM_JOB_HEX_BYTES], cancel[4];
  uint16_t seq;
  const rec_frame *d;
  H.now = 40000;
  start(TM_RESET_POWER_ON);
  H.out.n = 0;
  hard_hex_job(job, 21, 1000, 1000000);
  seq = send(TM_MSG_JOB_HEX, job, sizeof job);
  run(20, 10, 100);
  /* a retransmission (same seq, same bytes): ACKed again, not started again */
  resend(TM_MSG_JOB_HEX, seq, job, sizeof job);
  CHECK(count_type(&H.out, TM_MSG_ACK) == 2);
  CHECK(count_type(&H.out, TM_MSG_JOB_DONE) == 0);
  {
    tm_device_status st;
    tm_device_status_get(&dev, &st);
    CHECK(st.job_id == 21 && st.job_done == 200);
  }
  /* the same seq with other bytes is a new frame (e.g. a restarted host) */
  hard_hex_job(job2, 22, 0, 1000000);
  resend(TM_MSG_JOB_HEX, seq, job2, sizeof job2);
  d = find_type(&H.out, TM_MSG_JOB_DONE, 0);
  CHECK(d != NULL && get32(d->payload) == 21 && get64(d->payload + 4) == 200 && d->payload[12] == TM_DONE_REPLACED);
  /* the ACK of the new job comes before the JOB_DONE of the replaced one */
  CHECK(H.out.frames[H.out.n - 2].type == TM_MSG_ACK && H.out.frames[H.out.n - 1].type == TM_MSG_JOB_DONE);
  run(10, 10, 50);
  /* CANCEL of another id: ACK, nothing else; CANCEL of this one: JOB_DONE reason 1 */
  H.out.n = 0;
  put32(cancel, 999);
  send(TM_MSG_CANCEL, cancel, 4);
  CHECK(H.out.n == 1 && H.out.frames[0].type == TM_MSG_ACK && H.out.frames[0].payload[2] == 0);
  put32(cancel, 22);
  send(TM_MSG_CANCEL, cancel, 4);
  d = find_type(&H.out, TM_MSG_JOB_DONE, 0);
  CHECK(d != NULL && get32(d->payload) == 22 && get64(d->payload + 4) == 50 && d->payload[12] == TM_DONE_CANCELLED);
  /* CANCEL 0 when idle: ACK only */
  H.out.n = 0;
  put32(cancel, 0);
  send(TM_MSG_CANCEL, cancel, 4);
  CHECK(H.out.n == 1);
  CHECK(tm_device_poll(&dev, H.now, 100) == 0);
}

static void expect_refused(uint8_t type, const uint8_t *p, uint32_t len, uint8_t status) {
  uint16_t seq;
  const rec_frame *e;
  H.out.n = 0;
  seq = send(type, p, len);
  CHECK(ack_for(seq) != NULL && ack_for(seq)->payload[2] == status);
  e = find_type(&H.out, TM_MSG_ERROR, 0);
  CHECK(e != NULL && get16(e->payload) == status && e->payload[6] > 0 && e->length == 7u + e->payload[6]);
}

static void test_refusals(void) {
  uint8_t job[TM_JOB_TENSOR_BYTES + 4], hex[TM_JOB_HEX_BYTES];
  tm_device_status st;
  H.now = 50000;
  start(TM_RESET_POWER_ON);
  hex_job(hex, 5, 0, 1000000);
  send(TM_MSG_JOB_HEX, hex, sizeof hex);

  tensor_job(job, 3, 0, 10);
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES - 1, TM_PERR_MALFORMED);
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES + 1, TM_PERR_MALFORMED);
  tensor_job(job, 0, 0, 10);
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES, TM_PERR_MALFORMED);
  tensor_job(job, 3, 0, 0);
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES, TM_PERR_MALFORMED);
  tensor_job(job, 3, 0, 10);
  job[38] = 64; /* N above this board's 32 */
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES, TM_PERR_UNSUPPORTED_JOB);
  tensor_job(job, 3, 0, 10);
  job[72] ^= 1; /* a path target that is not the challenge hash's */
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES, TM_PERR_MALFORMED);
  tensor_job(job, 3, 0, 10);
  job[37] = 3;
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES, TM_PERR_MALFORMED);
  tensor_job(job, 3, UINT64_C(9007199254740992), 10);
  expect_refused(TM_MSG_JOB_TENSOR, job, TM_JOB_TENSOR_BYTES, TM_PERR_MALFORMED);
  hex_job(hex, 6, 0, 10);
  memset(hex + 84, 0xff, 32); /* target easier than difficulty 16 */
  expect_refused(TM_MSG_JOB_HEX, hex, TM_JOB_HEX_BYTES, TM_PERR_MALFORMED);
  {
    uint8_t baud[4];
    put32(baud, 12345);
    expect_refused(TM_MSG_SET_BAUD, baud, 4, TM_PERR_BAUD);
    put32(baud, 2000000); /* above max baud */
    expect_refused(TM_MSG_SET_BAUD, baud, 4, TM_PERR_BAUD);
  }
  expect_refused(0x33, job, 3, TM_PERR_UNKNOWN_TYPE);
  expect_refused(TM_MSG_REBOOT, job, 1, TM_PERR_MALFORMED);
  /* a refused job does not replace the running one */
  tm_device_status_get(&dev, &st);
  CHECK(st.job_id == 5 && st.job_kind == TM_JOB_HEX);
  CHECK(H.reboots == 0);
}

static void test_busy(void) {
  uint8_t job[TM_JOB_HEX_BYTES];
  tm_device_status st;
  uint32_t i, n;
  uint16_t seqs[TM_RESULT_SLOTS + 4];
  H.now = 60000;
  start(TM_RESET_POWER_ON);
  H.out.n = 0;
  hex_job(job, 8, 0, 100000);
  send(TM_MSG_JOB_HEX, job, sizeof job);
  run(100, 10, 1000);
  tm_device_status_get(&dev, &st);
  CHECK(st.pending_results == TM_RESULT_SLOTS && st.stalled);
  CHECK(st.job_id == 8 && st.job_remaining > 0);
  /* ERROR 5 once, mining paused */
  n = 0;
  for (i = 0; i < H.out.n; i++) n += H.out.frames[i].type == TM_MSG_ERROR && get16(H.out.frames[i].payload) == 5;
  CHECK(n == 1);
  CHECK(tm_device_poll(&dev, H.now, 1000) == 0);
  /* a new job is refused with 5 */
  hex_job(job, 9, 0, 10);
  expect_refused(TM_MSG_JOB_HEX, job, TM_JOB_HEX_BYTES, TM_PERR_BUSY);
  /* acknowledging the results resumes mining */
  n = 0;
  for (i = 0; i < TM_RESULT_SLOTS; i++) seqs[n++] = store.slots[i].seq;
  for (i = 0; i < n; i++) ack(seqs[i]);
  tm_device_status_get(&dev, &st);
  CHECK(st.pending_results == 0 && !st.stalled);
  CHECK(tm_device_poll(&dev, H.now, 10) > 0);
}

static void test_progress(void) {
  uint8_t job[TM_JOB_HEX_BYTES];
  const rec_frame *p;
  H.now = 70000;
  start(TM_RESET_POWER_ON);
  H.out.n = 0;
  run(12000, 100, 0);
  CHECK(count_type(&H.out, TM_MSG_PROGRESS) == 6); /* idle: every 2 s */
  p = find_type(&H.out, TM_MSG_PROGRESS, 0);
  CHECK(p != NULL && p->length == 24 && get32(p->payload) == 0 && get32(p->payload + 20) == 0);
  hard_hex_job(job, 4, 0, 100000000);
  send(TM_MSG_JOB_HEX, job, sizeof job);
  H.out.n = 0;
  run(3000, 100, 100); /* 100 nonces per 100 ms: 1000 nonces/s */
  CHECK(count_type(&H.out, TM_MSG_PROGRESS) == 3); /* busy: every second */
  p = find_type(&H.out, TM_MSG_PROGRESS, 2);
  CHECK(p != NULL && get32(p->payload) == 4 && get64(p->payload + 4) >= 1900 && get64(p->payload + 12) == get64(p->payload + 4));
  CHECK(p != NULL && get32(p->payload + 20) == 1000);
}

static void test_baud(void) {
  uint8_t baud[4];
  uint16_t seq;
  H.now = 80000;
  start(TM_RESET_POWER_ON);
  put32(baud, 921600);
  seq = send(TM_MSG_SET_BAUD, baud, 4);
  CHECK(ack_for(seq) != NULL && ack_for(seq)->payload[2] == 0);
  run(40, 10, 0);
  CHECK(H.n_bauds == 0); /* 50 ms after the ACK */
  run(20, 10, 0);
  CHECK(H.n_bauds == 1 && H.bauds[0] == 921600);
  /* a valid frame at the new rate: no fall-back */
  {
    const uint8_t v = 1;
    send(TM_MSG_HELLO_REQ, &v, 1);
  }
  run(3000, 10, 0);
  CHECK(H.n_bauds == 1);
  /* again, with silence: back to 115200 after 2 s */
  put32(baud, 460800);
  send(TM_MSG_SET_BAUD, baud, 4);
  run(60, 10, 0);
  CHECK(H.n_bauds == 2 && H.bauds[1] == 460800);
  run(1900, 10, 0);
  CHECK(H.n_bauds == 2);
  run(200, 10, 0);
  CHECK(H.n_bauds == 3 && H.bauds[2] == 115200);
}

static void test_reboot_keeps_results(void) {
  uint8_t job[TM_JOB_HEX_BYTES];
  rec_frame first;
  const rec_frame *r;
  uint16_t seq;
  H.now = 90000;
  start(TM_RESET_POWER_ON);
  hex_job(job, 11, 0, 48); /* the one solution, nonce 47 */
  send(TM_MSG_JOB_HEX, job, sizeof job);
  run(10, 10, 1000);
  r = find_type(&H.out, TM_MSG_RESULT, 0);
  CHECK(r != NULL);
  if (r == NULL) return;
  first = *r;
  seq = send(TM_MSG_REBOOT, NULL, 0);
  CHECK(ack_for(seq) != NULL && ack_for(seq)->payload[2] == 0);
  run(40, 10, 0);
  CHECK(H.reboots == 0);
  run(20, 10, 0);
  CHECK(H.reboots == 1);
  /* a software reset: the result and the seq counter survive */
  start(TM_RESET_SOFTWARE);
  CHECK(H.out.n == 3 && H.out.frames[0].type == TM_MSG_BOOT && H.out.frames[0].payload[0] == TM_RESET_SOFTWARE);
  CHECK(H.out.frames[1].type == TM_MSG_HELLO && H.out.frames[0].seq > first.seq);
  CHECK(H.out.frames[2].type == TM_MSG_RESULT && H.out.frames[2].seq == first.seq && H.out.frames[2].crc == first.crc);
  /* a power-on: nothing survives, seq restarts */
  start(TM_RESET_POWER_ON);
  CHECK(H.out.n == 2 && H.out.frames[0].seq == 0);
  /* a corrupted store is not trusted */
  start(TM_RESET_POWER_ON);
  hex_job(job, 12, 0, 48);
  send(TM_MSG_JOB_HEX, job, sizeof job);
  run(10, 10, 1000);
  store.slots[0].payload[20] ^= 1;
  start(TM_RESET_SOFTWARE);
  CHECK(H.out.n == 2 && H.out.frames[0].seq == 0);
}

static void test_config_checks(void) {
  tm_device_config c = config();
  c.scratch_words = TM_SCRATCH_WORDS_CONV(32u, 4u) - 1u;
  CHECK(tm_device_init(&dev, &c, 0) == TM_ERR_ARGUMENT);
  c = config();
  c.capabilities = TM_CAP_HEXCHAIN | TM_CAP_MATMUL;
  c.scratch_words = TM_SCRATCH_WORDS_MATMUL(32u);
  CHECK(tm_device_init(&dev, &c, 0) == TM_OK);
  c.write = NULL;
  CHECK(tm_device_init(&dev, &c, 0) == TM_ERR_ARGUMENT);
  c = config();
  c.max_n = 65;
  CHECK(tm_device_init(&dev, &c, 0) == TM_ERR_ARGUMENT);
}

int main(void) {
  test_crc();
  test_encode();
  test_rx_split_and_merged();
  test_rx_bad_crc_and_lengths();
  test_rx_frame_inside_bad_frame();
  test_rx_timeout();
  test_boot_and_hello();
  test_boot_reason();
  test_measured_rates();
  test_hex_job_result_and_retransmission();
  test_tensor_job();
  test_budget();
  test_dedup_cancel_replace();
  test_refusals();
  test_busy();
  test_progress();
  test_baud();
  test_reboot_keeps_results();
  test_config_checks();
  if (failures > 0) {
    printf("tm-proto-test: %u of %u checks FAILED\n", failures, checks);
    return 1;
  }
  printf("tm-proto-test: %u checks ok (frames, receiver, device)\n", checks);
  return 0;
}
