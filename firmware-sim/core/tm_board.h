/*
 * tm_board.h: the board on the network. A board that mines on its own over Wi-Fi (or, on the host,
 * `tm-sim --net`): it talks HTTP/JSON to a validator or a status proxy through the socket seam
 * (tm_net.h), holds its own ed25519 key, and follows docs/protocol.md:
 *
 *   1. GET /health: the node key that signs callbacks (callback_pubkey, else node_pubkey) and
 *      the clock (the Date header: signed requests need Unix milliseconds);
 *   2. GET /api/hexchain/status: 200 is v4.1 (hexchain), 404 is v4.0, as the SDK detects it;
 *   3. POST /devices/register, signed: its key, device_type and (v4.1) callback port;
 *   4. with `pool` set and a validator that runs a pool: POST /pool/join, signed, and shares;
 *   5. then forever: a challenge (v4.1 with miner_pubkey, or v4.0 sized for its device type),
 *      mining in slices, a signed block (or share, or v4.0 proof) for every solution.
 *
 * Work goes stale when another block takes its cell (or the difficulty falls below the
 * challenge's): the validator then sends a node-signed callback to the board's port
 * (docs/protocol.md 4.17), which the board checks and acts on within its current slice; it also
 * looks at its cell every `poll_ms` (a safety net when callbacks cannot reach it) and drops a
 * challenge when it expires.
 *
 * Like the rest of the core: C99, fixed-width integers, no allocation, no globals, no libc; all
 * state is in tm_board and the caller's buffers.
 */
#ifndef TM_BOARD_H
#define TM_BOARD_H

#include <stdint.h>

#include "tm_hexchain.h"
#include "tm_http.h"
#include "tm_net.h"
#include "tm_sha_port.h"
#include "tm_tensor.h"

#define TM_BOARD_CALLBACK_PATH "/tm/notify"
#define TM_BOARD_CALLBACK_MAX_BODY 1024u
#define TM_BOARD_ID_MAX 129u /* challenge ids are at most 128 characters */

typedef struct {
  const char *url;         /* "http://host[:port][/prefix]" of a validator or a status proxy */
  uint8_t seed[32];        /* the board's secret key: it never leaves the board */
  const char *device_type; /* "esp32", "esp8266" or "native" */
  uint16_t callback_port;  /* the port the board listens on for callbacks; 0: none (poll only) */
  uint8_t protocol;        /* 0: detect; 40 or 41: forced */
  uint8_t pool;            /* 1: join the validator's pool when it runs one, and mine shares */
  const char *pool_stake;  /* stake_amount of the join (default "0") */
  uint32_t poll_ms;        /* look at the job's cell this often (0: 30 s with a callback port, 5 s without) */
  uint32_t http_timeout_ms; /* every exchange (0: 5000) */
  uint16_t max_n;          /* v4.0: the largest tensor the board accepts (its buffers' size) */
  uint8_t max_f;           /* v4.0: the most conv filters */
  int32_t *scratch;        /* v4.0 scratch, TM_SCRATCH_WORDS_ANY(max_n, max_f) words; NULL: v4.1 only */
  uint32_t scratch_words;
  int8_t *input;           /* v4.0 X, max_n * max_n bytes */
  uint32_t input_bytes;
  uint8_t *io;             /* the HTTP buffer for answers: 2 KiB for v4.1, about 8 KiB for a v4.0 challenge at N = 32 */
  uint32_t io_bytes;
  const tm_net_port *net;
  const tm_sha_port *sha_port; /* optional: the block search's compression (NULL: software) */
  uint64_t hashrate;       /* hexchain nonces per second to report (0: measured at start) */
  void (*log)(void *ctx, const char *line); /* optional: one line per event, no newline */
  void *log_ctx;
} tm_board_config;

/* What the board does (tm_board_status). */
#define TM_BOARD_STARTING 0  /* health, detection, registration, pool: not mining yet */
#define TM_BOARD_IDLE 1      /* registered, asking for work */
#define TM_BOARD_MINING 2    /* a job is running */
#define TM_BOARD_WAITING 3   /* backing off after a failure */

/* Why a job ended. */
#define TM_JOB_SOLVED 1     /* its block was accepted (or refused) */
#define TM_JOB_CALLBACK 2   /* a callback said it is stale */
#define TM_JOB_POLL 3       /* its cell was found taken */
#define TM_JOB_EXPIRED 4    /* its challenge expired */
#define TM_JOB_EXHAUSTED 5  /* every nonce was tried */

typedef struct {
  uint64_t nonces;             /* hashed, both kinds */
  uint64_t blocks_accepted, blocks_rejected;
  uint64_t shares_accepted, shares_rejected;
  uint64_t proofs_accepted, proofs_rejected;
  uint64_t jobs;
  uint64_t dropped_callback, dropped_poll, dropped_expired;
  uint64_t callbacks_accepted, callbacks_refused;
  uint64_t http_errors;
  uint64_t registrations;
} tm_board_stats;

typedef struct {
  tm_board_config cfg;
  tm_url url;
  uint8_t pub[32];
  uint8_t node_key[32];
  uint8_t phase, version, pool_member, job, state;
  uint64_t mono_ms;  /* the seam's clock, unwrapped */
  uint32_t last_now;
  int64_t clock_offset_ms; /* Unix ms = mono_ms + clock_offset_ms; 0 until synced */
  uint64_t retry_at_ms;
  uint32_t backoff_ms;
  uint64_t next_health_ms; /* GET /health again (a status proxy's callback key may have changed) */
  uint64_t measured_rate;  /* hexchain nonces per second */
  uint32_t slice;          /* nonces per mining slice, adapted to about 4 ms */
  /* the job */
  char challenge_id[TM_BOARD_ID_MAX];
  int32_t q, r, s;
  uint8_t challenge_hash[32];
  uint8_t prefix[80];
  uint8_t target[32], share_target[32];
  uint8_t has_share_target;
  uint64_t difficulty;
  uint64_t expires_at_s;
  uint64_t next_nonce;
  uint64_t next_poll_ms;
  uint64_t job_started_ms;
  tm_task task;
  tm_thresholds thresholds;
  /* the callbacks already acted on (their signatures' first bytes): an exact replay is refused */
  uint8_t seen[8][8];
  uint32_t seen_next;
  tm_board_stats stats;
  /* request buffers */
  uint8_t body[1024];
  uint8_t headers[512];
  char path[160];
} tm_board;

/* Checks the configuration (TM_ERR_ARGUMENT with a log line for a bad one) and derives the key. */
int32_t tm_board_init(tm_board *b, const tm_board_config *cfg);

/*
 * One turn of the board's loop: answers the callbacks waiting on its port, runs the next network
 * exchange that is due, and mines for about `budget_ms` and at most `max_nonces` nonces (0 ms: no
 * mining; TM_BOARD_UNLIMITED: no nonce bound), answering callbacks between slices. Returns the
 * nonces hashed. The caller loops; a host that caps the rate passes the nonces its rate allows
 * and sleeps between calls (waiting on the callback port, so that a callback is answered at once).
 */
#define TM_BOARD_UNLIMITED UINT64_MAX
uint64_t tm_board_step(tm_board *b, uint32_t budget_ms, uint64_t max_nonces);

/* Handles the connections waiting on the callback port (tm_board_step calls it). */
void tm_board_serve(tm_board *b);

/* The board's state (TM_BOARD_*) and its counters. */
uint8_t tm_board_state(const tm_board *b);
/* 0 without a job, 41 mining a v4.1 block (or shares), 40 mining a v4.0 proof. */
uint8_t tm_board_job(const tm_board *b);
const tm_board_stats *tm_board_stats_get(const tm_board *b);
/* The board's public key. */
const uint8_t *tm_board_public_key(const tm_board *b);

#endif
