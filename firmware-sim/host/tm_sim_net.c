/*
 * tm-sim --net: the board on the network, on the host. The same C as the ESP32 sketch's Wi-Fi
 * mode (core/tm_board over port/tm_net_bsd.c), on POSIX sockets: it registers its key with a
 * validator (or a status proxy), listens on its callback port, and mines. Logs go to stderr, one
 * line per event, each line starting with "tm-sim <seconds> ".
 *
 *   tm-sim --net http://host:port [--key-file PATH | --key HEX64 | --seed N] [--device-type T]
 *          [--callback-port P | --no-callbacks] [--listen ADDR] [--poll-ms MS] [--protocol V]
 *          [--pool] [--pool-stake AMOUNT] [--rate-cap HEX[,TENSOR]] [--max-n N] [--max-f F]
 *          [--exit-after S]
 *
 * Run `tm-sim --net URL --help` for the meaning of each option.
 */
#define _POSIX_C_SOURCE 200809L

#include "tm_sim_net.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/sha256.h"
#include "../core/tm_board.h"
#include "../port/tm_net_bsd.h"

#define NET_MAX_N 32u
#define NET_MAX_F 4u

static int32_t scratch[TM_SCRATCH_WORDS_ANY(NET_MAX_N, NET_MAX_F)];
static int8_t input[NET_MAX_N * NET_MAX_N];
static uint8_t io[16384];
static tm_board board;
static tm_net_bsd net;
static tm_net_port port;
static struct timespec t0;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
}

static void say(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "tm-sim %8.3f ", seconds());
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static void log_line(void *ctx, const char *line) {
  (void)ctx;
  say("%s", line);
}

static uint32_t clock_ms(void *ctx) {
  struct timespec t;
  (void)ctx;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint32_t)((uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u);
}

static void urandom(void *ctx, uint8_t *buf, uint32_t len) {
  static int fd = -1;
  (void)ctx;
  if (fd < 0) fd = open("/dev/urandom", O_RDONLY);
  while (len > 0u) {
    const ssize_t n = fd < 0 ? -1 : read(fd, buf, len);
    if (n <= 0) {
      say("cannot read /dev/urandom: %s", strerror(errno));
      exit(1);
    }
    buf += n;
    len -= (uint32_t)n;
  }
}

static void usage(FILE *to) {
  fprintf(to,
          "usage: tm-sim --net URL [options]\n"
          "The board on the network: registers its key with the validator (or status proxy) at URL,\n"
          "listens for its callbacks and mines, with the C core of the ESP32 sketch. Logs to stderr.\n"
          "  --net URL                http://host[:port][/prefix] of a validator or a status proxy\n"
          "  --key-file PATH          the board's secret key, 64 hex digits; created (mode 0600) when missing\n"
          "  --key HEX64              the secret key itself (tests)\n"
          "  --seed N                 a test key derived from N (default 1, when no key is given)\n"
          "  --device-type T          esp32 | esp8266 | native (default esp32)\n"
          "  --callback-port P        listen for callbacks on P (default 0: any free port)\n"
          "  --no-callbacks           no callback port: the board polls its cell\n"
          "  --listen ADDR            the address the callback port binds (default 0.0.0.0)\n"
          "  --poll-ms MS             look at the job's cell this often (default 30000 with callbacks, 5000 without)\n"
          "  --protocol V             auto | 4.0 | 4.1 (default auto: detected as the SDK does)\n"
          "  --pool                   join the validator's pool when it runs one, and mine shares\n"
          "  --pool-stake AMOUNT      the stake of the pool join (default 0)\n"
          "  --rate-cap HEX[,TENSOR]  nonces per second, hexchain and tensor (default: full speed);\n"
          "                           50000,2000 behaves like an ESP32\n"
          "  --exit-after S           stop after S seconds (0: run until a signal)\n"
          "Exit status: 0 after a signal or --exit-after, 1 when the board cannot start, 2 for bad options.\n");
}

static void bad(const char *opt, const char *value) {
  fprintf(stderr, "tm-sim: invalid %s %s\n", opt, value ? value : "(missing value)");
  usage(stderr);
  exit(2);
}

static uint64_t number(const char *opt, const char *s, uint64_t max) {
  char *end;
  unsigned long long v;
  if (!s || *s == '\0' || *s == '-') bad(opt, s);
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno || *end != '\0' || v > max) bad(opt, s);
  return (uint64_t)v;
}

static int hex_seed(const char *s, uint8_t out[32]) {
  unsigned i;
  if (strlen(s) != 64u) return 0;
  for (i = 0; i < 32u; i++) {
    unsigned v;
    if (sscanf(s + 2u * i, "%2x", &v) != 1) return 0;
    out[i] = (uint8_t)v;
  }
  return 1;
}

/* Reads the key file, or creates it with a fresh random key (as a board keeps its key in flash). */
static void key_file(const char *path, uint8_t seed[32]) {
  char text[80] = {0};
  FILE *f = fopen(path, "r");
  if (f) {
    const size_t n = fread(text, 1, sizeof text - 1u, f);
    fclose(f);
    while (n > 0u && (text[strlen(text) - 1u] == '\n' || text[strlen(text) - 1u] == '\r')) text[strlen(text) - 1u] = 0;
    if (!hex_seed(text, seed)) {
      say("%s: expected 64 hex digits", path);
      exit(2);
    }
    return;
  }
  {
    char hex[65];
    int fd;
    unsigned i;
    urandom(NULL, seed, 32);
    for (i = 0; i < 32u; i++) snprintf(hex + 2u * i, 3, "%02x", seed[i]);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || write(fd, hex, 64) != 64 || write(fd, "\n", 1) != 1) {
      say("%s: cannot create the key file: %s", path, strerror(errno));
      exit(1);
    }
    close(fd);
    say("new key written to %s", path);
  }
}

int tm_sim_net_main(int argc, char **argv) {
  tm_board_config cfg;
  const char *listen = "0.0.0.0", *key = NULL, *keyfile = NULL;
  int32_t callback_port = 0;
  uint64_t seed_n = 1, hex_cap = 0, tensor_cap = 0;
  double exit_after = 0, last_stats = 0;
  int i;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  memset(&cfg, 0, sizeof cfg);
  cfg.device_type = "esp32";
  for (i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(o, "--no-callbacks")) {
      callback_port = -1;
    } else if (!strcmp(o, "--pool")) {
      cfg.pool = 1;
    } else if (!v) {
      bad(o, v);
    } else {
      i++;
      if (!strcmp(o, "--net")) cfg.url = v;
      else if (!strcmp(o, "--key")) key = v;
      else if (!strcmp(o, "--key-file")) keyfile = v;
      else if (!strcmp(o, "--seed")) seed_n = number(o, v, UINT64_MAX);
      else if (!strcmp(o, "--device-type")) cfg.device_type = v;
      else if (!strcmp(o, "--callback-port")) callback_port = (int32_t)number(o, v, 65535);
      else if (!strcmp(o, "--listen")) listen = v;
      else if (!strcmp(o, "--poll-ms")) cfg.poll_ms = (uint32_t)number(o, v, 86400000u);
      else if (!strcmp(o, "--pool-stake")) cfg.pool_stake = v;
      else if (!strcmp(o, "--exit-after")) exit_after = (double)number(o, v, 86400u * 365u);
      else if (!strcmp(o, "--protocol")) {
        if (!strcmp(v, "auto")) cfg.protocol = 0;
        else if (!strcmp(v, "4.0")) cfg.protocol = 40;
        else if (!strcmp(v, "4.1")) cfg.protocol = 41;
        else bad(o, v);
      } else if (!strcmp(o, "--rate-cap")) {
        char *comma = strchr(v, ',');
        if (comma) {
          *comma = '\0';
          tensor_cap = number(o, comma + 1, 1000000000u);
        }
        hex_cap = number(o, v, 1000000000000u);
        if (!comma) tensor_cap = hex_cap / 25u;
      } else bad(o, NULL);
    }
  }
  if (!cfg.url) bad("--net", NULL);
  if (key) {
    if (!hex_seed(key, cfg.seed)) bad("--key", key);
  } else if (keyfile) {
    key_file(keyfile, cfg.seed);
  } else {
    /* a test key: taggedHash("tm-sim/key", u64le(seed)); never for real use */
    uint8_t le[8];
    tm_sha256_ctx ctx;
    unsigned k;
    for (k = 0; k < 8u; k++) le[k] = (uint8_t)(seed_n >> (8u * k));
    tm_tagged_init(&ctx, "tm-sim/key");
    tm_sha256_update(&ctx, le, 8);
    tm_sha256_final(&ctx, cfg.seed);
  }
  if (tm_net_bsd_open(&net, listen, callback_port, clock_ms, urandom, NULL) != 0) {
    say("cannot listen on %s:%d: %s", listen, (int)callback_port, strerror(errno));
    return 1;
  }
  tm_net_bsd_port(&net, &port);
  cfg.callback_port = net.port;
  cfg.net = &port;
  cfg.scratch = scratch;
  cfg.scratch_words = sizeof scratch / sizeof scratch[0];
  cfg.input = input;
  cfg.input_bytes = sizeof input;
  cfg.max_n = NET_MAX_N;
  cfg.max_f = NET_MAX_F;
  cfg.io = io;
  cfg.io_bytes = sizeof io;
  cfg.hashrate = hex_cap;
  cfg.log = log_line;
  {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
  }
  if (tm_board_init(&board, &cfg) != TM_OK) return 2;
  {
    char hex[65];
    unsigned k;
    for (k = 0; k < 32u; k++) snprintf(hex + 2u * k, 3, "%02x", tm_board_public_key(&board)[k]);
    say("net board %s, %s, validator %s, callback port %s%u", hex, cfg.device_type, cfg.url,
        net.listen_fd < 0 ? "none " : "", (unsigned)net.port);
  }
  {
    double credit = 0, last = seconds();
    while (!stop_signal && !(exit_after > 0 && seconds() >= exit_after)) {
      const double t = seconds();
      const uint8_t job = tm_board_job(&board);
      const double cap = job == 40u ? (double)tensor_cap : (double)hex_cap;
      uint64_t done;
      /* a capped board mines only what its rate allows, and waits on the callback port meanwhile */
      credit += (t - last) * cap;
      last = t;
      if (cap > 0 && credit > cap * 0.1) credit = cap * 0.1;
      if (cap > 0 && job != 0u && credit < (cap * 0.02 > 1.0 ? cap * 0.02 : 1.0)) {
        /* wait for 20 ms of credit (at least one nonce) */
        const double wait_ms = ((cap * 0.02 > 1.0 ? cap * 0.02 : 1.0) - credit) / cap * 1000.0 + 1.0;
        if (tm_net_bsd_wait(&net, wait_ms > 50.0 ? 50u : (uint32_t)wait_ms)) tm_board_serve(&board);
        continue;
      }
      done = tm_board_step(&board, 20, cap > 0 ? (uint64_t)(credit > 1.0 ? credit : 1.0) : TM_BOARD_UNLIMITED);
      credit -= (double)done;
      if (done == 0u && tm_board_job(&board) == 0u) {
        if (tm_net_bsd_wait(&net, 20)) tm_board_serve(&board); /* idle or backing off */
      }
      if (t - last_stats >= 10.0) {
        const tm_board_stats *s = tm_board_stats_get(&board);
        last_stats = t;
        say("stats nonces=%llu blocks=%llu shares=%llu jobs=%llu dropped_callback=%llu dropped_poll=%llu "
            "callbacks=%llu refused=%llu",
            (unsigned long long)s->nonces, (unsigned long long)s->blocks_accepted,
            (unsigned long long)s->shares_accepted, (unsigned long long)s->jobs,
            (unsigned long long)s->dropped_callback, (unsigned long long)s->dropped_poll,
            (unsigned long long)s->callbacks_accepted, (unsigned long long)s->callbacks_refused);
      }
    }
  }
  {
    const tm_board_stats *s = tm_board_stats_get(&board);
    say("stopped: nonces=%llu blocks=%llu shares=%llu proofs=%llu jobs=%llu dropped_callback=%llu "
        "dropped_poll=%llu dropped_expired=%llu callbacks=%llu refused=%llu",
        (unsigned long long)s->nonces, (unsigned long long)s->blocks_accepted,
        (unsigned long long)s->shares_accepted, (unsigned long long)s->proofs_accepted,
        (unsigned long long)s->jobs, (unsigned long long)s->dropped_callback, (unsigned long long)s->dropped_poll,
        (unsigned long long)s->dropped_expired, (unsigned long long)s->callbacks_accepted,
        (unsigned long long)s->callbacks_refused);
  }
  tm_net_bsd_close(&net);
  return 0;
}
