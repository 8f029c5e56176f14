/*
 * tm-sim: a simulated mining board on the host. It opens a tty (a socat pseudo-terminal in the
 * tests, any serial port in principle), puts it in raw mode and speaks the device side of the
 * serial protocol (docs/serial-protocol.md) through core/tm_proto, mining with the same core as
 * the ESP32 sketch. Faults can be injected to test a host bridge. Logs go to stderr only.
 *
 *   tm-sim --port /dev/pts/N [--chip-id HEX16] [--seed N] [--board NAME]
 *          [--rate-cap HEX[,TENSOR]] [--max-n N] [--max-f F] [--caps MASK] [--max-baud B]
 *          [--calibrate-ms MS] [--fault garbage:P] [--fault drop:P] [--fault disconnect-after:S]
 *          [--fault reboot-after:S] [--fault wrong-result] [--verbose]
 *
 * Run `tm-sim --help` for the meaning of each option.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../core/tm_core.h"
#include "../core/tm_proto.h"
#include "../core/tm_selftest.h"
#include "tm_sim_net.h"

#define SIM_MAX_N TM_MAX_TENSOR_DIM
#define SIM_MAX_F TM_MAX_CONV_FILTERS
#define SIM_SCRATCH_WORDS TM_SCRATCH_WORDS_ANY(SIM_MAX_N, SIM_MAX_F)
#define SIM_OUT_BYTES 65536u

typedef struct {
  /* options */
  const char *port;
  uint8_t chip_id[8];
  int chip_id_set;
  uint64_t seed;
  const char *board;
  uint32_t hex_cap, tensor_cap;
  uint32_t max_n, max_f, caps, max_baud, calibrate_ms;
  double garbage_p, drop_p, corrupt_p;
  double disconnect_after, reboot_after; /* seconds; 0: never */
  int wrong_result;
  int verbose;

  /* state */
  int fd;
  uint64_t rng;
  struct timespec t0;
  uint8_t out[SIM_OUT_BYTES]; /* the UART's transmit queue */
  uint32_t out_head, out_len;
  int reboot_requested;
  int rebooted_by_fault;
  uint32_t boots;
} sim_t;

/* Memory of the simulated board: the tensor scratch, X and the result store (which a real board
 * keeps in RTC memory across a software reset). */
static int32_t scratch_words[SIM_SCRATCH_WORDS];
static int8_t input_buffer[SIM_MAX_N * SIM_MAX_N];
static tm_result_store result_store;
static tm_device device;
static sim_t sim;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static double seconds_since_start(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)(t.tv_sec - sim.t0.tv_sec) + (double)(t.tv_nsec - sim.t0.tv_nsec) / 1e9;
}

static uint32_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint32_t)((uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u);
}

static uint32_t clock_cb(void *ctx) {
  (void)ctx;
  return now_ms();
}

static void logf_(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "tm-sim %8.3f ", seconds_since_start());
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static uint64_t rng_next(void) { return splitmix64(&sim.rng); }

/* 1 with probability p. */
static int chance(double p) { return p > 0 && (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0) < p; }

static uint32_t crc_cb(uint32_t crc, const uint8_t *data, uint32_t len) {
  return (uint32_t)crc32((uLong)crc, (const Bytef *)data, (uInt)len);
}

static const char *type_name(uint8_t type) {
  switch (type) {
  case TM_MSG_HELLO_REQ: return "HELLO_REQ";
  case TM_MSG_SET_BAUD: return "SET_BAUD";
  case TM_MSG_JOB_HEX: return "JOB_HEX";
  case TM_MSG_JOB_TENSOR: return "JOB_TENSOR";
  case TM_MSG_CANCEL: return "CANCEL";
  case TM_MSG_REBOOT: return "REBOOT";
  case TM_MSG_BOOT: return "BOOT";
  case TM_MSG_HELLO: return "HELLO";
  case TM_MSG_PROGRESS: return "PROGRESS";
  case TM_MSG_RESULT: return "RESULT";
  case TM_MSG_JOB_DONE: return "JOB_DONE";
  case TM_MSG_ERROR: return "ERROR";
  case TM_MSG_ACK: return "ACK";
  default: return "unknown";
  }
}

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32); }

/* ---- The transmit queue ---- */

static void out_push(const uint8_t *data, uint32_t len) {
  uint32_t i;
  if (SIM_OUT_BYTES - sim.out_len < len) {
    logf_("transmit queue full (nobody reading the port?): %u bytes lost", len);
    return;
  }
  for (i = 0; i < len; i++) sim.out[(sim.out_head + sim.out_len + i) % SIM_OUT_BYTES] = data[i];
  sim.out_len += len;
}

static void port_gone(const char *what) {
  logf_("%s: the port is gone (%s); exiting", what, strerror(errno));
  exit(1);
}

static void out_flush(void) {
  while (sim.out_len > 0) {
    uint32_t n = SIM_OUT_BYTES - sim.out_head;
    ssize_t w;
    if (n > sim.out_len) n = sim.out_len;
    w = write(sim.fd, sim.out + sim.out_head, n);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      port_gone("write");
    }
    sim.out_head = (sim.out_head + (uint32_t)w) % SIM_OUT_BYTES;
    sim.out_len -= (uint32_t)w;
  }
}

/* ---- Device callbacks ---- */

static void log_frame(const char *dir, const uint8_t *frame, uint32_t len) {
  const uint8_t type = frame[3];
  const uint16_t seq = (uint16_t)(frame[4] | (frame[5] << 8));
  const uint8_t *p = frame + TM_FRAME_HEADER_BYTES;
  const uint32_t n = len - TM_FRAME_OVERHEAD;
  switch (type) {
  case TM_MSG_RESULT:
    logf_("%s RESULT seq %u job %u nonce %llu", dir, seq, le32(p), (unsigned long long)le64(p + 5));
    return;
  case TM_MSG_JOB_DONE:
    logf_("%s JOB_DONE seq %u job %u nonces %llu reason %u", dir, seq, le32(p), (unsigned long long)le64(p + 4),
          p[12]);
    return;
  case TM_MSG_ERROR:
    logf_("%s ERROR seq %u code %u job %u: %.*s", dir, seq, (unsigned)(p[0] | (p[1] << 8)), le32(p + 2), (int)p[6],
          (const char *)(p + 7));
    return;
  case TM_MSG_ACK:
    if (sim.verbose || p[2] != 0) logf_("%s ACK seq %u of seq %u status %u", dir, seq, p[0] | (p[1] << 8), p[2]);
    return;
  case TM_MSG_PROGRESS:
    if (sim.verbose) {
      logf_("%s PROGRESS seq %u job %u done %llu total %llu rate %u", dir, seq, le32(p),
            (unsigned long long)le64(p + 4), (unsigned long long)le64(p + 12), le32(p + 20));
    }
    return;
  default:
    if (sim.verbose || type == TM_MSG_BOOT) logf_("%s %s seq %u (%u bytes)", dir, type_name(type), seq, n);
    return;
  }
}

static void write_cb(void *ctx, const uint8_t *frame, uint32_t len) {
  uint8_t copy[TM_FRAME_MAX_BYTES];
  (void)ctx;
  if (len < TM_FRAME_OVERHEAD || len > sizeof copy) return;
  memcpy(copy, frame, len);
  if (sim.wrong_result && copy[3] == TM_MSG_RESULT && len > TM_FRAME_OVERHEAD) {
    /* the last payload byte (pow hash or computation hash); the CRC stays valid */
    const uint32_t n = len - TM_FRAME_OVERHEAD;
    copy[TM_FRAME_HEADER_BYTES + n - 1u] ^= 0x01u;
    tm_frame_encode(copy[3], (uint16_t)(copy[4] | (copy[5] << 8)), copy + TM_FRAME_HEADER_BYTES, n, crc_cb, copy);
  }
  if (chance(sim.drop_p)) {
    logf_("fault: dropped outgoing %s seq %u", type_name(copy[3]), copy[4] | (copy[5] << 8));
    return;
  }
  if (chance(sim.corrupt_p)) {
    /* one bit of the frame's body flipped after its CRC: the host must drop it (CRC error) */
    const uint32_t at = 2u + (uint32_t)(rng_next() % (len - 6u));
    copy[at] ^= (uint8_t)(1u << (rng_next() % 8u));
    logf_("fault: corrupted outgoing %s byte %u", type_name(copy[3]), (unsigned)at);
  }
  if (chance(sim.garbage_p)) {
    uint8_t junk[16];
    const uint32_t n = 1u + (uint32_t)(rng_next() % 16u);
    uint32_t i;
    for (i = 0; i < n; i++) junk[i] = (uint8_t)rng_next();
    if (sim.verbose) logf_("fault: %u garbage bytes", n);
    out_push(junk, n);
  }
  log_frame("->", copy, len);
  out_push(copy, len);
  out_flush();
}

static speed_t speed_of(uint32_t baud) {
  switch (baud) {
  case 9600: return B9600;
  case 19200: return B19200;
  case 38400: return B38400;
  case 57600: return B57600;
  case 230400: return B230400;
#ifdef B460800
  case 460800: return B460800;
#endif
#ifdef B921600
  case 921600: return B921600;
#endif
#ifdef B1000000
  case 1000000: return B1000000;
#endif
#ifdef B1500000
  case 1500000: return B1500000;
#endif
#ifdef B2000000
  case 2000000: return B2000000;
#endif
  default: return B115200;
  }
}

static void set_baud_cb(void *ctx, uint32_t baud) {
  struct termios t;
  (void)ctx;
  out_flush();
  if (tcgetattr(sim.fd, &t) == 0) {
    cfsetispeed(&t, speed_of(baud));
    cfsetospeed(&t, speed_of(baud));
    if (tcsetattr(sim.fd, TCSANOW, &t) != 0) logf_("baud %u: tcsetattr: %s", baud, strerror(errno));
  }
  logf_("baud rate now %u", baud);
}

static void reboot_cb(void *ctx) {
  (void)ctx;
  sim.reboot_requested = 1;
}

static void on_frame_cb(void *ctx, const tm_frame *f) {
  (void)ctx;
  if (sim.verbose) {
    logf_("<- %s seq %u (%u bytes)", type_name(f->type), f->seq, f->length);
  } else if (f->type == TM_MSG_JOB_HEX || f->type == TM_MSG_JOB_TENSOR || f->type == TM_MSG_CANCEL) {
    logf_("<- %s seq %u job %u", type_name(f->type), f->seq, f->length >= 4 ? le32(f->payload) : 0u);
  } else if (f->type != TM_MSG_ACK && f->type != TM_MSG_HELLO_REQ) {
    logf_("<- %s seq %u", type_name(f->type), f->seq);
  }
}

/* ---- Start-up ---- */

static void power_on(uint8_t reason) {
  static char firmware[40];
  tm_device_config cfg;
  memset(&cfg, 0, sizeof cfg);
  snprintf(firmware, sizeof firmware, "tm-sim %s", TM_CORE_VERSION_STRING);
  memcpy(cfg.chip_id, sim.chip_id, 8);
  cfg.firmware = firmware;
  cfg.board = sim.board;
  cfg.capabilities = (uint16_t)sim.caps;
  cfg.max_n = (uint8_t)sim.max_n;
  cfg.max_f = (uint8_t)sim.max_f;
  cfg.max_baud = sim.max_baud;
  cfg.hex_rate_cap = sim.hex_cap;
  cfg.tensor_rate_cap = sim.tensor_cap;
  cfg.scratch = scratch_words;
  cfg.scratch_words = SIM_SCRATCH_WORDS;
  cfg.input = input_buffer;
  cfg.input_bytes = sizeof input_buffer;
  cfg.store = &result_store;
  cfg.ctx = &sim;
  cfg.write = write_cb;
  cfg.crc32 = crc_cb;
  cfg.set_baud = set_baud_cb;
  cfg.reboot = reboot_cb;
  cfg.on_frame = on_frame_cb;
  if (tm_device_init(&device, &cfg, reason) != TM_OK) {
    logf_("invalid board configuration (max-n %u, max-f %u, caps 0x%x)", sim.max_n, sim.max_f, sim.caps);
    exit(2);
  }
  sim.boots++;
  if (tm_device_boot(&device, clock_cb, &sim, sim.calibrate_ms) != TM_OK) logf_("self-test FAILED");
  {
    tm_device_status st;
    tm_device_status_get(&device, &st);
    logf_("boot %u (reason %u): %u hex nonces/s, %u tensor nonces/s, %u results kept", sim.boots, reason,
          st.hex_rate, st.tensor_rate, st.pending_results);
  }
}

static int open_port(const char *path) {
  struct termios t;
  const int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    fprintf(stderr, "tm-sim: cannot open %s: %s\n", path, strerror(errno));
    exit(1);
  }
  if (tcgetattr(fd, &t) != 0) {
    fprintf(stderr, "tm-sim: %s is not a tty: %s\n", path, strerror(errno));
    exit(1);
  }
  /* raw: no line discipline, no echo, no signals, no translation; 8N1 */
  t.c_iflag &= (tcflag_t) ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF);
  t.c_oflag &= (tcflag_t)~OPOST;
  t.c_lflag &= (tcflag_t) ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
  t.c_cflag &= (tcflag_t) ~(CSIZE | PARENB | CSTOPB);
  t.c_cflag |= (tcflag_t)(CS8 | CREAD | CLOCAL);
  t.c_cc[VMIN] = 0;
  t.c_cc[VTIME] = 0;
  cfsetispeed(&t, B115200);
  cfsetospeed(&t, B115200);
  if (tcsetattr(fd, TCSANOW, &t) != 0) {
    fprintf(stderr, "tm-sim: cannot set raw mode on %s: %s\n", path, strerror(errno));
    exit(1);
  }
  return fd;
}

/* ---- Options ---- */

static void usage(FILE *to) {
  fprintf(to,
          "usage: tm-sim --port PATH [options]   (or tm-sim --net URL ...: the board on the network)\n"
          "A simulated tensormine board speaking docs/serial-protocol.md on a tty (e.g. one end of\n"
          "`socat -d -d pty,raw,echo=0 pty,raw,echo=0`). Logs to stderr.\n"
          "  --port PATH              the tty to open (required)\n"
          "  --chip-id HEX16          8-byte chip id as 16 hex digits (default: from --seed)\n"
          "  --seed N                 seeds the chip id and the fault generator (default 1)\n"
          "  --board NAME             board name sent in HELLO (default tm-sim)\n"
          "  --rate-cap HEX[,TENSOR]  nonces per second: hex, and tensor at max N (default TENSOR:\n"
          "                           HEX / 25); e.g. 50000,2000 behaves like an ESP32\n"
          "  --max-n N --max-f F      largest tensor side and conv filters (default 32 and 4)\n"
          "  --caps MASK              capability bits (default 0x1f: hex, matmul, conv, sigmoid, tanh)\n"
          "  --max-baud B             fastest rate SET_BAUD accepts (default 921600)\n"
          "  --calibrate-ms MS        rate measurement at boot, per kind (default 100; 0: none)\n"
          "  --fault garbage:P        random bytes before an outgoing frame with probability P\n"
          "  --fault corrupt:P        one bit of an outgoing frame flipped after its CRC, with probability P\n"
          "  --fault drop:P           drop an outgoing frame with probability P\n"
          "  --fault disconnect-after:S  exit after S seconds (closing the port)\n"
          "  --fault reboot-after:S   reboot once after S seconds (BOOT reason 1, job lost,\n"
          "                           unacknowledged results kept as in RTC memory)\n"
          "  --fault wrong-result     corrupt the last byte of every RESULT (valid CRC)\n"
          "  --verbose                log every frame\n");
}

static void bad_option(const char *opt, const char *value) {
  fprintf(stderr, "tm-sim: invalid %s %s\n", opt, value != NULL ? value : "(missing value)");
  usage(stderr);
  exit(2);
}

static uint64_t parse_u64(const char *opt, const char *s) {
  char *end;
  unsigned long long v;
  if (s == NULL || *s == '\0' || *s == '-') bad_option(opt, s);
  errno = 0;
  v = strtoull(s, &end, 0);
  if (errno != 0 || *end != '\0') bad_option(opt, s);
  return (uint64_t)v;
}

static double parse_number(const char *opt, const char *s) {
  char *end;
  double v;
  if (s == NULL || *s == '\0') bad_option(opt, s);
  v = strtod(s, &end);
  if (*end != '\0' || !(v >= 0)) bad_option(opt, s);
  return v;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static void parse_fault(const char *s) {
  const char *colon = s != NULL ? strchr(s, ':') : NULL;
  const size_t name = colon != NULL ? (size_t)(colon - s) : (s != NULL ? strlen(s) : 0);
  const char *value = colon != NULL ? colon + 1 : NULL;
  if (s == NULL) bad_option("--fault", s);
  if (name == 7 && strncmp(s, "garbage", 7) == 0) {
    sim.garbage_p = parse_number("--fault garbage:P", value);
    if (sim.garbage_p > 1) bad_option("--fault garbage:P", value);
  } else if (name == 7 && strncmp(s, "corrupt", 7) == 0) {
    sim.corrupt_p = parse_number("--fault corrupt:P", value);
    if (sim.corrupt_p > 1) bad_option("--fault corrupt:P", value);
  } else if (name == 4 && strncmp(s, "drop", 4) == 0) {
    sim.drop_p = parse_number("--fault drop:P", value);
    if (sim.drop_p > 1) bad_option("--fault drop:P", value);
  } else if (name == 16 && strncmp(s, "disconnect-after", 16) == 0) {
    sim.disconnect_after = parse_number("--fault disconnect-after:S", value);
  } else if (name == 12 && strncmp(s, "reboot-after", 12) == 0) {
    sim.reboot_after = parse_number("--fault reboot-after:S", value);
  } else if (name == 12 && strncmp(s, "wrong-result", 12) == 0 && value == NULL) {
    sim.wrong_result = 1;
  } else {
    bad_option("--fault", s);
  }
}

static void parse_args(int argc, char **argv) {
  int i;
  sim.seed = 1;
  sim.board = "tm-sim";
  sim.max_n = 32;
  sim.max_f = 4;
  sim.caps = TM_CAP_ALL;
  sim.max_baud = 921600;
  sim.calibrate_ms = 100;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
      sim.verbose = 1;
      continue;
    } else if (strcmp(a, "--port") == 0) {
      if (v == NULL) bad_option(a, v);
      sim.port = v;
    } else if (strcmp(a, "--chip-id") == 0) {
      int k;
      if (v == NULL || strlen(v) != 16) bad_option(a, v);
      for (k = 0; k < 8; k++) {
        const int hi = hex_digit(v[2 * k]), lo = hex_digit(v[2 * k + 1]);
        if (hi < 0 || lo < 0) bad_option(a, v);
        sim.chip_id[k] = (uint8_t)(hi * 16 + lo);
      }
      sim.chip_id_set = 1;
    } else if (strcmp(a, "--seed") == 0) {
      sim.seed = parse_u64(a, v);
    } else if (strcmp(a, "--board") == 0) {
      if (v == NULL || strlen(v) > TM_NAME_MAX) bad_option(a, v);
      sim.board = v;
    } else if (strcmp(a, "--rate-cap") == 0) {
      char buf[64];
      char *comma;
      if (v == NULL || strlen(v) >= sizeof buf) bad_option(a, v);
      strcpy(buf, v);
      comma = strchr(buf, ',');
      if (comma != NULL) *comma = '\0';
      sim.hex_cap = (uint32_t)parse_u64(a, buf);
      if (comma != NULL) {
        sim.tensor_cap = (uint32_t)parse_u64(a, comma + 1);
      } else {
        sim.tensor_cap = sim.hex_cap / 25u > 0 ? sim.hex_cap / 25u : 1u;
      }
      if (sim.hex_cap == 0 || sim.tensor_cap == 0) bad_option(a, v);
    } else if (strcmp(a, "--max-n") == 0) {
      sim.max_n = (uint32_t)parse_u64(a, v);
      if (sim.max_n < TM_MIN_TENSOR_DIM || sim.max_n > SIM_MAX_N) bad_option(a, v);
    } else if (strcmp(a, "--max-f") == 0) {
      sim.max_f = (uint32_t)parse_u64(a, v);
      if (sim.max_f < 1 || sim.max_f > SIM_MAX_F) bad_option(a, v);
    } else if (strcmp(a, "--caps") == 0) {
      sim.caps = (uint32_t)parse_u64(a, v);
      if (sim.caps > TM_CAP_ALL) bad_option(a, v);
    } else if (strcmp(a, "--max-baud") == 0) {
      sim.max_baud = (uint32_t)parse_u64(a, v);
      if (!tm_baud_supported(sim.max_baud, sim.max_baud) || sim.max_baud < TM_BAUD_DEFAULT) bad_option(a, v);
    } else if (strcmp(a, "--calibrate-ms") == 0) {
      sim.calibrate_ms = (uint32_t)parse_u64(a, v);
    } else if (strcmp(a, "--fault") == 0) {
      parse_fault(v);
    } else {
      fprintf(stderr, "tm-sim: unknown option %s\n", a);
      usage(stderr);
      exit(2);
    }
    i++;
  }
  if (sim.port == NULL) {
    fprintf(stderr, "tm-sim: --port is required\n");
    usage(stderr);
    exit(2);
  }
  if (!sim.chip_id_set) {
    /* like an ESP32: a 6-byte MAC (locally administered, unicast) and two zero bytes */
    uint64_t x = sim.seed, v = splitmix64(&x);
    int k;
    for (k = 0; k < 6; k++) sim.chip_id[k] = (uint8_t)(v >> (8 * k));
    sim.chip_id[0] = (uint8_t)((sim.chip_id[0] & 0xfcu) | 0x02u);
    sim.chip_id[6] = 0;
    sim.chip_id[7] = 0;
  }
  sim.rng = sim.seed ^ UINT64_C(0x5DEECE66D);
}

/* ---- The rate cap ---- */

/* Work per nonce relative to the tensor rate's reference (max N; matmul when supported). */
static double tensor_cost(const tm_device_status *st) {
  const double n = st->job_dim, ref_n = sim.max_n;
  const double job = st->job_operation == TM_OP_CONV ? 9.0 * st->job_filters * n * n : n * n * n;
  const double ref = (sim.caps & TM_CAP_MATMUL) != 0 ? ref_n * ref_n * ref_n : 9.0 * sim.max_f * ref_n * ref_n;
  return job / ref;
}

/* Nonces per second allowed for the current job (0: no cap). */
static double capped_rate(const tm_device_status *st) {
  if (sim.hex_cap == 0 || st->job_kind == TM_JOB_NONE) return 0;
  if (st->job_kind == TM_JOB_HEX) return sim.hex_cap;
  return sim.tensor_cap / tensor_cost(st);
}

int main(int argc, char **argv) {
  double credit = 0; /* seconds of mining the cap allows now */
  double last = 0;
  int arg;
  for (arg = 1; arg < argc; arg++) {
    if (strcmp(argv[arg], "--net") == 0) return tm_sim_net_main(argc, argv); /* the board on the network */
  }
  clock_gettime(CLOCK_MONOTONIC, &sim.t0);
  parse_args(argc, argv);
  sim.fd = open_port(sim.port);
  logf_("%s: chip id %02x%02x%02x%02x%02x%02x%02x%02x, board %s, caps 0x%02x, max N %u, max F %u%s", sim.port,
        sim.chip_id[0], sim.chip_id[1], sim.chip_id[2], sim.chip_id[3], sim.chip_id[4], sim.chip_id[5],
        sim.chip_id[6], sim.chip_id[7], sim.board, sim.caps, sim.max_n, sim.max_f,
        sim.wrong_result ? ", fault wrong-result" : "");
  {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
  }
  power_on(TM_RESET_POWER_ON);
  out_flush();

  for (;;) {
    struct pollfd pfd;
    tm_device_status st;
    double rate, t = seconds_since_start();
    uint32_t budget = 0;
    int timeout = 5;

    if (stop_signal != 0) {
      logf_("signal %d: closing the port", (int)stop_signal);
      out_flush();
      close(sim.fd);
      return 0;
    }
    if (sim.disconnect_after > 0 && t >= sim.disconnect_after) {
      logf_("fault: disconnecting after %.3f s", sim.disconnect_after);
      out_flush();
      close(sim.fd);
      return 0;
    }
    if (sim.reboot_after > 0 && !sim.rebooted_by_fault && t >= sim.reboot_after) {
      sim.rebooted_by_fault = 1;
      logf_("fault: rebooting after %.3f s", sim.reboot_after);
      sim.reboot_requested = 1;
    }
    if (sim.reboot_requested) {
      sim.reboot_requested = 0;
      power_on(TM_RESET_SOFTWARE);
    }

    tm_device_status_get(&device, &st);
    rate = capped_rate(&st);
    credit += t - last;
    last = t;
    if (credit > 0.05) credit = 0.05;
    if (st.job_kind != TM_JOB_NONE && !st.stalled) {
      const double allowed = credit * rate;
      if (rate <= 0 || allowed >= 1) {
        timeout = 0;
      } else {
        const double wait_ms = (1.0 - allowed) / rate * 1000.0;
        timeout = wait_ms < 1 ? 1 : (wait_ms > 5 ? 5 : (int)wait_ms);
      }
    }

    pfd.fd = sim.fd;
    pfd.events = (short)(POLLIN | (sim.out_len > 0 ? POLLOUT : 0));
    pfd.revents = 0;
    if (poll(&pfd, 1, timeout) < 0 && errno != EINTR) port_gone("poll");
    if ((pfd.revents & POLLIN) != 0) {
      uint8_t buf[4096];
      const ssize_t n = read(sim.fd, buf, sizeof buf);
      if (n > 0) {
        tm_device_feed(&device, buf, (uint32_t)n, now_ms());
      } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        port_gone("read");
      }
    } else if ((pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
      errno = EIO;
      port_gone("poll");
    }
    out_flush();

    /* mine: all out without a cap, else what the credit allows (0: the timers only) */
    t = seconds_since_start();
    credit += t - last;
    last = t;
    if (credit > 0.05) credit = 0.05;
    tm_device_status_get(&device, &st);
    rate = capped_rate(&st);
    if (st.job_kind == TM_JOB_NONE) {
      budget = 0;
    } else if (rate <= 0) {
      budget = TM_BUDGET_AUTO;
    } else {
      const double allowed = credit * rate;
      budget = allowed >= 1 ? (uint32_t)(allowed > 1e6 ? 1e6 : allowed) : 0;
    }
    {
      const uint32_t mined = tm_device_poll(&device, now_ms(), budget);
      if (rate > 0) credit -= mined / rate;
    }
    out_flush();
  }
}
