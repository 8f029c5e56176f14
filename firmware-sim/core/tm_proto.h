/*
 * tm_proto.h: the device side of the serial protocol (docs/serial-protocol.md, version 1).
 *
 * Portable C99 like the rest of the core: <stdint.h> only, no allocation, no globals, no I/O,
 * no libc. Everything platform-specific comes from the caller:
 *   - bytes out: a write callback that sends one whole frame (a UART write, a tty write);
 *   - bytes in: the caller reads its port and hands the bytes to tm_device_feed;
 *   - time: a millisecond counter passed to every call (it may wrap: only differences are used);
 *   - CRC-32: a function with zlib's crc32 semantics (zlib crc32 on a host, esp_rom_crc32_le on
 *     an ESP32, or tm_crc32 below, a portable bitwise version);
 *   - memory: the tensor scratch, the input buffer and the result store (see below).
 *
 * The frame receiver (tm_rx) is usable on its own: it resynchronises exactly as section 2 of
 * the document says, including the 1 s partial-frame timeout.
 *
 * One device runs one job at a time. tm_device_poll mines a bounded number of nonces per call
 * (tm_search_block / tm_search_tensor over small ranges) and runs the timers: RESULT
 * retransmission every 250 ms until acknowledged, PROGRESS every second while a job runs and
 * every 2 s when idle, the baud switch 50 ms after its ACK and the fall-back to 115200 after 2 s
 * without a valid frame, and the delayed reboot.
 *
 * The unacknowledged RESULTs and the frame sequence counter live in a tm_result_store that the
 * caller owns, so that a board can keep it in memory that survives a software reset (ESP32:
 * RTC_NOINIT_ATTR). tm_device_init keeps a store whose check value is intact unless the reset
 * reason is power-on, so a found result survives a reboot and is lost only with the power.
 */
#ifndef TM_PROTO_H
#define TM_PROTO_H

#include <stdint.h>

#include "tm_core.h"
#include "tm_hexchain.h"
#include "tm_sha_port.h"
#include "tm_tensor.h"

/* ---- Frames (section 2) ---- */

#define TM_PROTO_VERSION 1u
#define TM_FRAME_MAGIC0 0xA5u
#define TM_FRAME_MAGIC1 0x5Au
#define TM_FRAME_HEADER_BYTES 8u
#define TM_FRAME_CRC_BYTES 4u
#define TM_FRAME_OVERHEAD 12u
#define TM_FRAME_MAX_PAYLOAD 1024u
#define TM_FRAME_MAX_BYTES (TM_FRAME_MAX_PAYLOAD + TM_FRAME_OVERHEAD)
#define TM_FRAME_PARTIAL_TIMEOUT_MS 1000u

/* ---- Message types (section 4) ---- */

#define TM_MSG_HELLO_REQ 0x01u
#define TM_MSG_SET_BAUD 0x02u
#define TM_MSG_JOB_HEX 0x03u
#define TM_MSG_JOB_TENSOR 0x04u
#define TM_MSG_CANCEL 0x05u
#define TM_MSG_REBOOT 0x06u
#define TM_MSG_BOOT 0x40u
#define TM_MSG_HELLO 0x41u
#define TM_MSG_PROGRESS 0x42u
#define TM_MSG_RESULT 0x43u
#define TM_MSG_JOB_DONE 0x44u
#define TM_MSG_ERROR 0x45u
#define TM_MSG_ACK 0x7Fu

#define TM_JOB_HEX_BYTES 128u
#define TM_JOB_TENSOR_BYTES 102u
#define TM_RESULT_HEX_BYTES 45u    /* job id, kind, nonce, pow hash */
#define TM_RESULT_TENSOR_BYTES 90u /* job id, kind, nonce, result hash, mml, path, distance, computation hash */
#define TM_RESULT_MAX_BYTES 90u

#define TM_RESULT_KIND_HEX 0u
#define TM_RESULT_KIND_TENSOR 1u

/* ERROR.code and ACK.status (section 5); 0 is "ok" in an ACK. */
#define TM_PERR_OK 0u
#define TM_PERR_UNKNOWN_TYPE 1u
#define TM_PERR_MALFORMED 2u
#define TM_PERR_UNSUPPORTED_JOB 3u
#define TM_PERR_BAUD 4u
#define TM_PERR_BUSY 5u
#define TM_PERR_INTERNAL 6u

/* BOOT reset reasons. */
#define TM_RESET_POWER_ON 0u
#define TM_RESET_SOFTWARE 1u
#define TM_RESET_WATCHDOG 2u
#define TM_RESET_BROWNOUT 3u
#define TM_RESET_OTHER 4u

/* JOB_DONE reasons. */
#define TM_DONE_EXHAUSTED 0u
#define TM_DONE_CANCELLED 1u
#define TM_DONE_REPLACED 2u

/* HELLO capabilities (relu is always present). */
#define TM_CAP_HEXCHAIN 0x0001u
#define TM_CAP_MATMUL 0x0002u
#define TM_CAP_CONV 0x0004u
#define TM_CAP_SIGMOID 0x0008u
#define TM_CAP_TANH 0x0010u
#define TM_CAP_ALL 0x001Fu

/* Timings (sections 2, 3, 4 and 6), in milliseconds. */
#define TM_RETRANSMIT_MS 250u
#define TM_PROGRESS_BUSY_MS 1000u
#define TM_PROGRESS_IDLE_MS 2000u /* under the host's 3 s "no device" timeout */
#define TM_BAUD_SWITCH_DELAY_MS 50u
#define TM_BAUD_FALLBACK_MS 2000u
#define TM_REBOOT_DELAY_MS 50u
#define TM_BAUD_DEFAULT 115200u

/* Unacknowledged RESULTs a device keeps (the document asks for at least 8). */
#ifndef TM_RESULT_SLOTS
#define TM_RESULT_SLOTS 8u
#endif
/* Acked host frames remembered to recognise a retransmission (same seq and CRC). */
#define TM_DEDUP_SLOTS 8u
/* Longest firmware or board name sent in HELLO (longer ones are cut). */
#define TM_NAME_MAX 32u
/* Largest payload the device sends (HELLO with two 32-byte names is 91 bytes). */
#define TM_DEVICE_TX_PAYLOAD 128u

/* ---- CRC-32 ---- */

/*
 * CRC-32/ISO-HDLC with zlib's calling convention: crc32(0, data, len) is the CRC of data, and
 * crc32(crc32(0, a, n), b, m) that of a || b. zlib's crc32 and ESP-IDF's esp_rom_crc32_le have
 * this meaning (wrap them to this signature).
 */
typedef uint32_t (*tm_crc32_fn)(uint32_t crc, const uint8_t *data, uint32_t len);

/* A portable bitwise CRC-32 with the same meaning (no table; about 8 shifts per bit). */
uint32_t tm_crc32(uint32_t crc, const uint8_t *data, uint32_t len);

/*
 * Encodes a frame into out (TM_FRAME_OVERHEAD + len bytes): magic, version 1, type, seq, len,
 * payload, CRC. Returns the frame length, or 0 when len > TM_FRAME_MAX_PAYLOAD.
 */
uint32_t tm_frame_encode(uint8_t type, uint16_t seq, const uint8_t *payload, uint32_t len, tm_crc32_fn crc,
                         uint8_t *out);

/* ---- The receiver (section 2, "Receiving and resynchronisation") ---- */

typedef struct {
  uint8_t type;
  uint16_t seq;
  uint16_t length;
  const uint8_t *payload; /* valid only during the handler call */
  uint32_t crc;           /* the frame's CRC (with seq, it identifies a retransmission) */
} tm_frame;

typedef void (*tm_frame_handler)(void *ctx, const tm_frame *frame);

typedef struct {
  uint8_t buf[TM_FRAME_MAX_BYTES];
  uint32_t used;     /* bytes in buf; buf[0] starts a candidate frame (or a lone 0xA5) */
  uint32_t start_ms; /* when the candidate at buf[0] began */
  uint32_t last_ms;  /* when the last byte arrived */
  tm_crc32_fn crc;
  /* counters, for diagnostics */
  uint32_t frames;        /* delivered */
  uint32_t garbage_bytes; /* dropped while looking for the magic (bad candidates included) */
  uint32_t bad_headers;   /* candidates dropped for their version or length */
  uint32_t bad_crcs;      /* candidates dropped for their CRC */
  uint32_t timeouts;      /* partial frames dropped after 1 s */
} tm_rx;

void tm_rx_init(tm_rx *rx, tm_crc32_fn crc);

/*
 * Takes received bytes (any split: a byte at a time, a frame in pieces, several frames at
 * once), delivering every valid frame to on_frame in order. A partial frame older than 1 s is
 * discarded first (tm_rx_tick). The handler must not feed the same receiver.
 */
void tm_rx_feed(tm_rx *rx, const uint8_t *data, uint32_t len, uint32_t now_ms, tm_frame_handler on_frame,
                void *ctx);

/*
 * Applies the partial-frame timeout: when the candidate frame began more than 1 s ago, its
 * first byte is dropped and the rest is searched again (a frame may start inside it); bytes
 * that all arrived more than 1 s ago are dropped. Frames found complete are delivered.
 */
void tm_rx_tick(tm_rx *rx, uint32_t now_ms, tm_frame_handler on_frame, void *ctx);

/* ---- The device ---- */

typedef struct {
  uint16_t seq;    /* the RESULT frame's seq (a retransmission repeats it) */
  uint8_t length;  /* payload bytes; 0: free slot */
  uint8_t tries;   /* transmissions so far (saturates at 255) */
  uint32_t sent_ms;
  uint8_t payload[TM_RESULT_MAX_BYTES];
} tm_result_slot;

/* Caller-owned; place it in memory that survives a software reset to keep results across one. */
typedef struct {
  uint32_t magic;
  uint16_t next_seq; /* the device's next frame seq */
  uint16_t reserved;
  tm_result_slot slots[TM_RESULT_SLOTS];
  uint32_t check; /* CRC-32 of the fields above, as tm_device computes it */
} tm_result_store;

typedef uint32_t (*tm_clock_fn)(void *ctx);

typedef struct {
  /* Identity, sent in HELLO. */
  uint8_t chip_id[8];   /* ESP32: the 6-byte eFuse MAC, then two zero bytes */
  const char *firmware; /* e.g. "tm-fw 0.1.0" (NUL-terminated, cut at TM_NAME_MAX) */
  const char *board;    /* e.g. "esp32-devkitc" */
  uint16_t capabilities; /* TM_CAP_* */
  uint8_t max_n;         /* largest tensor side, TM_MIN_TENSOR_DIM..TM_MAX_TENSOR_DIM */
  uint8_t max_f;         /* largest number of conv filters, 1..TM_MAX_CONV_FILTERS */
  uint32_t max_baud;     /* fastest rate accepted by SET_BAUD (from the standard list below) */
  uint32_t hex_rate_cap;    /* when non-zero, HELLO reports at most this hex rate */
  uint32_t tensor_rate_cap; /* ... and at most this tensor rate */

  /* Memory. */
  int32_t *scratch;       /* at least TM_SCRATCH_WORDS_ANY(max_n, max_f) words, and */
  uint32_t scratch_words; /* at least TM_SELFTEST_SCRATCH_WORDS */
  int8_t *input;          /* at least max_n * max_n bytes, and TM_SELFTEST_INPUT_BYTES */
  uint32_t input_bytes;
  tm_result_store *store;

  /* Callbacks; ctx is passed to each. write and crc32 are required. */
  void *ctx;
  void (*write)(void *ctx, const uint8_t *frame, uint32_t len); /* one whole frame */
  tm_crc32_fn crc32;
  void (*set_baud)(void *ctx, uint32_t baud); /* switch the UART (optional) */
  void (*reboot)(void *ctx);                   /* restart the board (optional; may not return) */
  /* Every valid received frame, before the device acts on it (optional, for logs). */
  void (*on_frame)(void *ctx, const tm_frame *frame);
  /* The SHA-256 compression of the block search (optional; NULL: software). A board with a
   * SHA peripheral that can load a midstate implements it: see tm_sha_port.h. */
  const tm_sha_port *sha_port;
} tm_device_config;

#define TM_JOB_NONE 0u
#define TM_JOB_HEX 1u
#define TM_JOB_TENSOR 2u

typedef struct {
  tm_device_config cfg;
  tm_result_store *store;
  tm_rx rx;
  uint8_t tx[TM_FRAME_OVERHEAD + TM_DEVICE_TX_PAYLOAD];
  uint32_t now_ms;
  uint8_t reset_reason;
  uint8_t booted;
  int32_t self_test; /* TM_OK, or the failed check (tm_self_test) */
  uint32_t hex_rate, tensor_rate;

  /* Acked host frames already processed: seq, CRC and the status answered. */
  uint16_t dedup_seq[TM_DEDUP_SLOTS];
  uint32_t dedup_crc[TM_DEDUP_SLOTS];
  uint8_t dedup_status[TM_DEDUP_SLOTS];
  uint8_t dedup_count, dedup_next;

  /* The job. */
  uint8_t job_kind; /* TM_JOB_* */
  uint8_t stalled;  /* the result store is full: mining waits (ERROR 5 sent once) */
  uint32_t job_id;
  uint64_t next_nonce, end_nonce; /* [next, end) remains */
  uint64_t job_done;              /* nonces done in this job */
  uint8_t header[TM_HEX_PREFIX_BYTES];
  uint8_t target[32];
  uint8_t pubkey[32];
  tm_task task;
  tm_thresholds thresholds;

  /* Counters and timers. */
  uint64_t hashes; /* nonces since boot */
  uint64_t rate_mark_hashes;
  uint32_t rate_mark_ms;
  uint32_t rate; /* nonces per second over the last PROGRESS interval */
  uint32_t last_progress_ms;
  uint32_t baud;
  uint32_t baud_pending; /* non-zero: switch to it at baud_switch_ms */
  uint32_t baud_switch_ms;
  uint8_t baud_watch; /* waiting for a valid frame at the new rate until baud_deadline_ms */
  uint32_t baud_deadline_ms;
  uint8_t reboot_pending;
  uint32_t reboot_ms;
} tm_device;

typedef struct {
  uint8_t job_kind; /* TM_JOB_* */
  uint8_t stalled;
  uint8_t job_operation, job_dim, job_filters; /* tensor jobs */
  uint32_t job_id;
  uint64_t job_done, job_remaining;
  uint64_t hashes;
  uint32_t rate, hex_rate, tensor_rate;
  uint32_t pending_results;
  uint32_t baud;
  int32_t self_test;
  uint32_t rx_frames, rx_garbage_bytes, rx_bad_headers, rx_bad_crcs, rx_timeouts;
} tm_device_status;

/*
 * Checks the configuration and prepares the device; no I/O yet. The store is kept when its
 * check value is intact and reset_reason is not TM_RESET_POWER_ON, else cleared (seq 0).
 * Returns TM_OK or TM_ERR_ARGUMENT (a missing callback or buffer, a buffer too small for
 * max_n and max_f, a limit out of range).
 */
int32_t tm_device_init(tm_device *dev, const tm_device_config *cfg, uint8_t reset_reason);

/*
 * Starts the device: sends BOOT (the reset reason), runs the known-answer self-test, measures
 * the hex and tensor rates (calibrate_ms of each, timed with clock; tensor: the search at
 * max_n, matmul when supported, else conv with max_f; 0 skips the measurement and reports the
 * caps), sends HELLO, then retransmits any result kept from before the reset. A failed self-test
 * is reported as ERROR 6 and every job is then refused with status 6. Returns the self-test
 * result (TM_OK or the failed check).
 */
int32_t tm_device_boot(tm_device *dev, tm_clock_fn clock, void *clock_ctx, uint32_t calibrate_ms);

/* Received bytes, any split. Frames are handled (and answered) during the call. */
void tm_device_feed(tm_device *dev, const uint8_t *data, uint32_t len, uint32_t now_ms);

/* A poll budget: about 20 ms of work at the rate measured at boot. */
#define TM_BUDGET_AUTO 0xFFFFFFFFu

/*
 * Runs the timers, then mines at most `budget` nonces of the current job (0: none, only the
 * timers; TM_BUDGET_AUTO: about 20 ms of work). Returns the nonces mined. Call it in the main
 * loop, often: between two calls the device does not read its port.
 */
uint32_t tm_device_poll(tm_device *dev, uint32_t now_ms, uint32_t budget);

/* Sends HELLO now (as the answer to HELLO_REQ does). */
void tm_device_send_hello(tm_device *dev);

void tm_device_status_get(const tm_device *dev, tm_device_status *out);

/* 1 when SET_BAUD may select this rate on a board whose max baud is max_baud: 9600, 19200,
 * 38400, 57600, 115200, 230400, 460800, 921600, 1000000, 1500000, 2000000 up to max_baud. */
int32_t tm_baud_supported(uint32_t baud, uint32_t max_baud);

#endif
