/*
 * tm_board_internal.h: what the three files of the network board share (tm_board.c: the loop,
 * clock and mining; tm_board_api.c: the exchanges with the validator; tm_board_notify.c: the
 * callback port). Not part of the core's API.
 */
#ifndef TM_BOARD_INTERNAL_H
#define TM_BOARD_INTERNAL_H

#include "tm_board.h"
#include "tm_json.h"

/* Phases before mining. */
#define PHASE_HEALTH 0
#define PHASE_DETECT 1
#define PHASE_REGISTER 2
#define PHASE_POOL 3
#define PHASE_READY 4

/* The kind of job. */
#define JOB_NONE 0
#define JOB_HEX 1
#define JOB_TENSOR 2

/* The seam's clock, unwrapped to 64 bits. */
uint64_t tm_board_now(tm_board *b);
/* Unix milliseconds by the validator's clock (as far as the board knows it). */
uint64_t tm_board_unix_ms(tm_board *b);
/* Sets the clock from an answer's Date header (seconds: the middle of that second is assumed). */
void tm_board_sync_clock(tm_board *b, uint64_t date_s);

/* A log line built from pieces; NULL ends the list. */
void tm_board_log(tm_board *b, const char *a, const char *c, const char *d, const char *e);
void tm_board_log_u64(tm_board *b, const char *a, uint64_t v, const char *c);

/* Ends the current job, counting why. */
void tm_board_end_job(tm_board *b, uint32_t why);
/* Schedules the next attempt of a failed exchange (doubling back-off, 1 s to 30 s). */
void tm_board_fail(tm_board *b);
void tm_board_succeed(tm_board *b);

/* Exchanges (tm_board_api.c). Each returns 0 on success, -1 on failure (already logged). */
int32_t tm_board_health(tm_board *b);
int32_t tm_board_detect(tm_board *b);
int32_t tm_board_register(tm_board *b);
int32_t tm_board_join_pool(tm_board *b);
int32_t tm_board_fetch_job(tm_board *b);
/* The job's cell: 1 taken, 0 free, -1 unknown. */
int32_t tm_board_cell_taken(tm_board *b);
/* A solution of the current job: submits it and updates the job (ended or continued). */
void tm_board_submit_hex(tm_board *b, uint64_t nonce, const uint8_t pow_hash[32]);
void tm_board_submit_proof(tm_board *b, uint64_t nonce, const tm_work_result *w);

#endif
