/*
 * tm_board.c: the network board's loop, clock, logging and mining (tm_board.h). The exchanges
 * with the validator are in tm_board_api.c, the callback port in tm_board_notify.c.
 */
#include "tm_board.h"

#include "tm_board_internal.h"
#include "tm_ed25519.h"

#define BACKOFF_MIN_MS 1000u
#define BACKOFF_MAX_MS 30000u
#define SLICE_TARGET_MS 4u
/* The node key (a status proxy's may change when it restarts) and the clock, read again this often. */
#define HEALTH_REFRESH_MS 600000u

uint64_t tm_board_now(tm_board *b) {
  const uint32_t now = b->cfg.net->now_ms(b->cfg.net->ctx);
  b->mono_ms += (uint32_t)(now - b->last_now);
  b->last_now = now;
  return b->mono_ms;
}

uint64_t tm_board_unix_ms(tm_board *b) { return (uint64_t)((int64_t)tm_board_now(b) + b->clock_offset_ms); }

void tm_board_sync_clock(tm_board *b, uint64_t date_s) {
  const int64_t offset = (int64_t)(date_s * 1000u + 500u) - (int64_t)tm_board_now(b);
  const int64_t drift = offset - b->clock_offset_ms;
  /* The Date header has whole seconds: keep the clock unless it is more than 1.5 s off. */
  if (b->clock_offset_ms == 0 || drift > 1500 || drift < -1500) b->clock_offset_ms = offset;
}

void tm_board_log(tm_board *b, const char *a, const char *c, const char *d, const char *e) {
  char line[256];
  tm_buf buf;
  if (!b->cfg.log) return;
  tm_buf_init(&buf, (uint8_t *)line, sizeof line - 1u);
  if (a) tm_buf_str(&buf, a);
  if (c) tm_buf_str(&buf, c);
  if (d) tm_buf_str(&buf, d);
  if (e) tm_buf_str(&buf, e);
  line[buf.len] = '\0';
  b->cfg.log(b->cfg.log_ctx, line);
}

void tm_board_log_u64(tm_board *b, const char *a, uint64_t v, const char *c) {
  char digits[24];
  tm_buf buf;
  tm_buf_init(&buf, (uint8_t *)digits, sizeof digits - 1u);
  tm_buf_u64(&buf, v);
  digits[buf.len] = '\0';
  tm_board_log(b, a, digits, c, 0);
}

void tm_board_fail(tm_board *b) {
  b->backoff_ms = b->backoff_ms == 0u ? BACKOFF_MIN_MS : b->backoff_ms * 2u;
  if (b->backoff_ms > BACKOFF_MAX_MS) b->backoff_ms = BACKOFF_MAX_MS;
  b->retry_at_ms = tm_board_now(b) + b->backoff_ms;
}

void tm_board_succeed(tm_board *b) {
  b->backoff_ms = 0;
  b->retry_at_ms = 0;
}

void tm_board_end_job(tm_board *b, uint32_t why) {
  static const char *const names[] = {"", "solved", "callback", "poll", "expired", "exhausted"};
  if (b->job == JOB_NONE) return;
  if (why == TM_JOB_CALLBACK) b->stats.dropped_callback++;
  if (why == TM_JOB_POLL) b->stats.dropped_poll++;
  if (why == TM_JOB_EXPIRED) b->stats.dropped_expired++;
  if (why != TM_JOB_SOLVED) tm_board_log(b, "job ", b->challenge_id, " dropped: ", names[why]);
  b->job = JOB_NONE;
}

/* Hexchain nonces per second of this board, measured for about 100 ms. */
static uint64_t measure_rate(tm_board *b) {
  uint8_t prefix[80] = {0}, target[32] = {0};
  tm_block_solution sol;
  uint64_t done = 0;
  const uint64_t start = tm_board_now(b);
  uint64_t elapsed;
  do {
    (void)tm_search_block_port(b->cfg.sha_port, prefix, target, done, 256, &sol);
    done += sol.iterations;
    elapsed = tm_board_now(b) - start;
  } while (elapsed < 100u);
  return done * 1000u / elapsed;
}

int32_t tm_board_init(tm_board *b, const tm_board_config *cfg) {
  const char *t = cfg->device_type;
  tm_zero(b, sizeof *b);
  b->cfg = *cfg;
  if (!cfg->net || !cfg->net->connect || !cfg->net->send || !cfg->net->recv || !cfg->net->close ||
      !cfg->net->accept || !cfg->net->now_ms || !cfg->net->random) {
    tm_board_log(b, "config: the socket seam is incomplete", 0, 0, 0);
    return TM_ERR_ARGUMENT;
  }
  if (!cfg->url || tm_url_parse(cfg->url, &b->url) != 0) {
    tm_board_log(b, "config: url: expected http://host[:port][/prefix], got ", cfg->url ? cfg->url : "none", 0, 0);
    return TM_ERR_ARGUMENT;
  }
  if (!t || !(tm_streq(t, "esp32") || tm_streq(t, "esp8266") || tm_streq(t, "native"))) {
    tm_board_log(b, "config: device_type: expected esp32, esp8266 or native", 0, 0, 0);
    return TM_ERR_ARGUMENT;
  }
  if (cfg->protocol != 0u && cfg->protocol != 40u && cfg->protocol != 41u) {
    tm_board_log(b, "config: protocol: expected 0 (detect), 40 or 41", 0, 0, 0);
    return TM_ERR_ARGUMENT;
  }
  if (!cfg->io || cfg->io_bytes < 2048u) {
    tm_board_log(b, "config: io: expected a buffer of at least 2048 bytes", 0, 0, 0);
    return TM_ERR_ARGUMENT;
  }
  if (cfg->scratch && (cfg->max_n < TM_MIN_TENSOR_DIM || cfg->max_n > TM_MAX_TENSOR_DIM || cfg->max_f < 1u ||
                       cfg->max_f > TM_MAX_CONV_FILTERS || !cfg->input ||
                       cfg->input_bytes < (uint32_t)cfg->max_n * cfg->max_n ||
                       cfg->scratch_words < TM_SCRATCH_WORDS_ANY((uint32_t)cfg->max_n, (uint32_t)cfg->max_f))) {
    tm_board_log(b, "config: v4.0 buffers: scratch, input, max_n and max_f do not fit together", 0, 0, 0);
    return TM_ERR_ARGUMENT;
  }
  if (!b->cfg.pool_stake) b->cfg.pool_stake = "0";
  if (b->cfg.http_timeout_ms == 0u) b->cfg.http_timeout_ms = 5000u;
  if (b->cfg.poll_ms == 0u) b->cfg.poll_ms = cfg->callback_port ? 30000u : 5000u;
  tm_ed25519_public_key(cfg->seed, b->pub);
  b->last_now = cfg->net->now_ms(cfg->net->ctx);
  b->mono_ms = 1; /* 0 means "not scheduled" */
  b->measured_rate = cfg->hashrate ? cfg->hashrate : measure_rate(b);
  b->slice = (uint32_t)(b->measured_rate * SLICE_TARGET_MS / 1000u);
  if (b->slice < 64u) b->slice = 64u;
  b->phase = PHASE_HEALTH;
  return TM_OK;
}

/* The next exchange of the start-up, when due. */
static void start_up(tm_board *b) {
  int32_t rc = 0;
  switch (b->phase) {
    case PHASE_HEALTH:
      rc = tm_board_health(b);
      if (rc == 0) b->phase = b->cfg.protocol ? PHASE_REGISTER : PHASE_DETECT;
      if (rc == 0 && b->cfg.protocol) b->version = b->cfg.protocol;
      break;
    case PHASE_DETECT:
      rc = tm_board_detect(b);
      if (rc == 0) b->phase = PHASE_REGISTER;
      break;
    case PHASE_REGISTER:
      rc = tm_board_register(b);
      if (rc == 0) b->phase = (b->cfg.pool && b->version == 41u) ? PHASE_POOL : PHASE_READY;
      break;
    case PHASE_POOL:
      (void)tm_board_join_pool(b); /* a pool that cannot be joined leaves the board mining solo */
      b->phase = PHASE_READY;
      break;
    default:
      break;
  }
  if (rc == 0) {
    tm_board_succeed(b);
  } else {
    tm_board_fail(b);
  }
  if (b->phase == PHASE_READY) b->next_health_ms = tm_board_now(b) + HEALTH_REFRESH_MS;
}

/* Mines the current job for about budget_ms and at most max_nonces, answering callbacks between slices. */
static uint64_t mine(tm_board *b, uint32_t budget_ms, uint64_t max_nonces) {
  const uint64_t start = tm_board_now(b);
  uint64_t done = 0;
  while (b->job != JOB_NONE && done < max_nonces && tm_board_now(b) - start < budget_ms) {
    const uint64_t t0 = tm_board_now(b);
    const uint32_t slice = max_nonces - done < b->slice ? (uint32_t)(max_nonces - done) : b->slice;
    uint64_t iterations = 0, elapsed;
    if (b->job == JOB_HEX) {
      tm_block_solution sol;
      const uint8_t *target = b->has_share_target ? b->share_target : b->target;
      const int32_t rc = tm_search_block_port(b->cfg.sha_port, b->prefix, target, b->next_nonce, slice, &sol);
      iterations = sol.iterations;
      b->next_nonce += iterations;
      if (rc == TM_FOUND) {
        tm_board_submit_hex(b, sol.nonce, sol.pow_hash);
      } else if (rc != TM_NOT_FOUND || iterations < slice) {
        tm_board_end_job(b, TM_JOB_EXHAUSTED); /* 2^53 - 1 reached */
      }
    } else {
      tm_tensor_solution sol;
      tm_scratch scratch;
      int32_t rc;
      scratch.words = b->cfg.scratch;
      scratch.n_words = b->cfg.scratch_words;
      rc = tm_search_tensor(&b->task, b->pub, b->next_nonce, slice, &b->thresholds, &scratch, &sol);
      iterations = sol.iterations;
      b->next_nonce += iterations;
      if (rc == TM_FOUND) {
        tm_board_submit_proof(b, sol.nonce, &sol.work);
      } else if (rc != TM_NOT_FOUND || iterations < slice) {
        tm_board_end_job(b, TM_JOB_EXHAUSTED);
      }
    }
    done += iterations;
    /* keep a whole slice near SLICE_TARGET_MS, so that callbacks are answered within a few ms */
    elapsed = tm_board_now(b) - t0;
    if (slice == b->slice && iterations == slice) {
      if (elapsed < SLICE_TARGET_MS / 2u && b->slice < (1u << 24)) b->slice *= 2u;
      else if (elapsed > SLICE_TARGET_MS * 2u && b->slice > 1u) b->slice /= 2u;
    }
    tm_board_serve(b);
  }
  return done;
}

uint64_t tm_board_step(tm_board *b, uint32_t budget_ms, uint64_t max_nonces) {
  uint64_t now, done = 0;
  tm_board_serve(b);
  now = tm_board_now(b);
  if (now < b->retry_at_ms) {
    b->state = TM_BOARD_WAITING;
    return 0;
  }
  if (b->phase != PHASE_READY) {
    b->state = TM_BOARD_STARTING;
    start_up(b);
    return 0;
  }
  if (now >= b->next_health_ms) {
    b->next_health_ms = now + HEALTH_REFRESH_MS;
    (void)tm_board_health(b); /* a failure keeps the key it has */
  }
  if (b->job == JOB_NONE) {
    b->state = TM_BOARD_IDLE;
    if (tm_board_fetch_job(b) == 0) {
      tm_board_succeed(b);
    } else {
      tm_board_fail(b);
    }
    if (b->job == JOB_NONE) return 0;
    b->next_poll_ms = tm_board_now(b) + b->cfg.poll_ms;
  }
  b->state = TM_BOARD_MINING;
  /* accepted while the validator's clock, in whole seconds, is at or before expires_at */
  if (b->clock_offset_ms != 0 && tm_board_unix_ms(b) / 1000u > b->expires_at_s) {
    tm_board_end_job(b, TM_JOB_EXPIRED);
    return 0;
  }
  if (b->job == JOB_HEX && tm_board_now(b) >= b->next_poll_ms) {
    b->next_poll_ms = tm_board_now(b) + b->cfg.poll_ms;
    if (tm_board_cell_taken(b) == 1) {
      tm_board_end_job(b, TM_JOB_POLL);
      return 0;
    }
  }
  if (budget_ms > 0u && max_nonces > 0u) done = mine(b, budget_ms, max_nonces);
  b->stats.nonces += done;
  return done;
}

uint8_t tm_board_state(const tm_board *b) { return b->state; }

uint8_t tm_board_job(const tm_board *b) { return b->job == JOB_HEX ? 41u : b->job == JOB_TENSOR ? 40u : 0u; }

const tm_board_stats *tm_board_stats_get(const tm_board *b) { return &b->stats; }

const uint8_t *tm_board_public_key(const tm_board *b) { return b->pub; }
