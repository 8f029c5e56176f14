/*
 * tensormine.ino: the ESP32 mining board firmware. A thin wrapper: everything that matters is
 * the portable core (core/: the mining code and core/tm_proto.c, the serial protocol of
 * docs/serial-protocol.md), exactly as the host simulator build/tm-sim runs it.
 *
 * The core files are not in this folder (no symlinks, they are not portable). Either:
 *   - Arduino IDE: `make sketch` in firmware-sim/ writes build/tensormine/ (this file and the
 *     core's .c/.h files side by side); open build/tensormine/tensormine.ino; or
 *   - PlatformIO: firmware-sim/arduino/platformio.ini builds this folder and links the core
 *     as a library (lib_deps = tensormine-core=symlink://../core).
 * See firmware-sim/README.md, "Flashing an ESP32".
 *
 * Two modes, chosen at build time:
 *
 *   - Serial (the default): the board of docs/serial-protocol.md behind a host bridge. What the
 *     board supplies to the core: Serial at 115200 (the protocol's only channel: nothing else is
 *     ever printed on it), esp_rom_crc32_le as the CRC-32, the eFuse MAC as the chip id,
 *     esp_reset_reason() for BOOT, millis() as the clock, and RTC memory that keeps
 *     unacknowledged results across a software or watchdog reset.
 *   - Wi-Fi: with a tm_config.h beside this file (copy tm_config.example.h) that defines
 *     TM_WIFI_SSID, the board mines on its own: core/tm_board.c over lwIP's BSD sockets
 *     (port/tm_net_bsd.c), its own ed25519 key kept in NVS, a callback port for the
 *     validator's notifications. Serial then carries log lines only.
 */
#include <Arduino.h>
#include <esp_attr.h>
#include <esp_rom_crc.h>
#include <esp_system.h>

#if defined(__has_include)
#if __has_include("tm_config.h")
#include "tm_config.h"
#endif
#endif

#ifdef TM_WIFI_SSID
/* ---- Wi-Fi mode ------------------------------------------------------------------------- */
#include <Preferences.h>
#include <WiFi.h>
#include <esp_random.h>

extern "C" {
#include "tm_board.h"
#include "tm_json.h"
#include "tm_net_bsd.h"
#include "tm_selftest.h"
}

#ifndef TM_CALLBACK_PORT
#define TM_CALLBACK_PORT 4242
#endif
#ifndef TM_POLL_MS
#define TM_POLL_MS 0
#endif
#ifndef TM_POOL
#define TM_POOL 0
#endif
#ifndef TM_POOL_STAKE
#define TM_POOL_STAKE "0"
#endif
#define TM_BOARD_MAX_N 32u /* the esp32 device type of docs/protocol.md 3.1 */
#define TM_BOARD_MAX_F 4u
/* the board's task: its worst case is about 5.5 KiB (a callback's ed25519 verification, README) */
#define TM_BOARD_STACK_BYTES 16384u

static int32_t scratch_words[TM_SCRATCH_WORDS_ANY(TM_BOARD_MAX_N, TM_BOARD_MAX_F)]; /* 16,932 B, v4.0 */
static int8_t input_buffer[TM_BOARD_MAX_N * TM_BOARD_MAX_N];                         /* 1,024 B */
static uint8_t io_buffer[8192]; /* an answer; a v4.0 challenge at N = 32 is about 6 KB */
static tm_board board;
static tm_net_bsd net;
static tm_net_port port;

static uint32_t clock_ms(void *ctx) {
  (void)ctx;
  return millis();
}

/* esp_fill_random is a true random source while the radio is on (Wi-Fi is, here). */
static void random_bytes(void *ctx, uint8_t *buf, uint32_t len) {
  (void)ctx;
  esp_fill_random(buf, len);
}

static void log_line(void *ctx, const char *line) {
  (void)ctx;
  Serial.printf("[%10lu] %s\n", (unsigned long)millis(), line);
}

/* The board's secret key: made once, on the first boot, and kept in NVS (flash). */
static void load_key(uint8_t seed[32]) {
  Preferences nvs;
  nvs.begin("tensormine", false);
  if (nvs.getBytes("seed", seed, 32) != 32) {
    esp_fill_random(seed, 32);
    nvs.putBytes("seed", seed, 32);
    Serial.println("tensormine: a new key was made and kept in NVS");
  }
  nvs.end();
}

static void wifi_connect(void) {
  if (WiFi.status() == WL_CONNECTED) return;
  Serial.printf("tensormine: connecting to %s\n", TM_WIFI_SSID);
  WiFi.mode(WIFI_STA);
  WiFi.begin(TM_WIFI_SSID, TM_WIFI_PASSWORD);
  while (WiFi.status() != WL_CONNECTED) delay(250);
  Serial.printf("tensormine: Wi-Fi up, address %s\n", WiFi.localIP().toString().c_str());
}

static void board_task(void *arg) {
  (void)arg;
  for (;;) {
    if (WiFi.status() != WL_CONNECTED) {
      wifi_connect(); /* the board registers again by itself if the validator forgot it */
      continue;
    }
    /* about 20 ms of mining per turn, callbacks answered between 4 ms slices */
    if (tm_board_step(&board, 20, TM_BOARD_UNLIMITED) == 0) {
      if (tm_net_bsd_wait(&net, 20)) tm_board_serve(&board);
    }
    vTaskDelay(1); /* let the idle task run (watchdog) */
  }
}

void setup() {
  tm_board_config cfg;
  /* the known-answer self-test in the v4.0 buffers, before they are the board's */
  const tm_scratch selftest = {scratch_words, sizeof scratch_words / sizeof scratch_words[0]};
  Serial.begin(115200);
  if (tm_self_test(&selftest, input_buffer) != TM_OK) {
    Serial.println("tensormine: the core's known-answer self-test failed; not mining");
    for (;;) delay(1000);
  }
  wifi_connect();
  memset(&cfg, 0, sizeof cfg);
  load_key(cfg.seed);
  if (tm_net_bsd_open(&net, "0.0.0.0", TM_CALLBACK_PORT ? TM_CALLBACK_PORT : -1, clock_ms, random_bytes, NULL) != 0) {
    Serial.println("tensormine: cannot listen on the callback port; polling only");
    tm_net_bsd_open(&net, "0.0.0.0", -1, clock_ms, random_bytes, NULL);
  }
  tm_net_bsd_port(&net, &port);
  cfg.url = TM_VALIDATOR_URL;
  cfg.device_type = "esp32";
  cfg.callback_port = net.port;
  cfg.poll_ms = TM_POLL_MS;
  cfg.pool = TM_POOL;
  cfg.pool_stake = TM_POOL_STAKE;
  cfg.max_n = TM_BOARD_MAX_N;
  cfg.max_f = TM_BOARD_MAX_F;
  cfg.scratch = scratch_words;
  cfg.scratch_words = sizeof scratch_words / sizeof scratch_words[0];
  cfg.input = input_buffer;
  cfg.input_bytes = sizeof input_buffer;
  cfg.io = io_buffer;
  cfg.io_bytes = sizeof io_buffer;
  cfg.net = &port;
  cfg.log = log_line;
  if (tm_board_init(&board, &cfg) != TM_OK) {
    Serial.println("tensormine: tm_config.h is not valid (see the line above); not mining");
    for (;;) delay(1000);
  }
  {
    char hex[65];
    tm_hex_encode(tm_board_public_key(&board), 32, hex);
    Serial.printf("tensormine: board key %s, validator %s, callback port %u\n", hex, TM_VALIDATOR_URL,
                  (unsigned)net.port);
  }
  xTaskCreatePinnedToCore(board_task, "tm-board", TM_BOARD_STACK_BYTES, NULL, 1, NULL, 1);
}

void loop() { vTaskDelay(1000); /* the board runs in its own task */ }

#else
/* ---- Serial mode ------------------------------------------------------------------------ */

extern "C" {
#include "tm_proto.h"
#include "tm_selftest.h"
}

#define TM_BOARD_MAX_N 32u /* the esp32 device type of docs/protocol.md 3.1 */
#define TM_BOARD_MAX_F 4u
#define TM_BOARD_MAX_BAUD 921600u
#define TM_BOARD_CALIBRATE_MS 200u
#ifndef TM_BOARD_NAME
#ifdef ARDUINO_BOARD
#define TM_BOARD_NAME ARDUINO_BOARD
#else
#define TM_BOARD_NAME "esp32"
#endif
#endif

static int32_t scratch_words[TM_SCRATCH_WORDS_ANY(TM_BOARD_MAX_N, TM_BOARD_MAX_F)]; /* 16,932 B */
static int8_t input_buffer[TM_BOARD_MAX_N * TM_BOARD_MAX_N];                         /* 1,024 B */
RTC_NOINIT_ATTR static tm_result_store result_store; /* survives a software reset, not a power-on */
static tm_device device;
static tm_crc32_fn crc_function = tm_crc32;

static uint32_t rom_crc32(uint32_t crc, const uint8_t *data, uint32_t len) { return esp_rom_crc32_le(crc, data, len); }

static void write_frame(void *ctx, const uint8_t *frame, uint32_t len) {
  (void)ctx;
  Serial.write(frame, len);
}

static void set_baud(void *ctx, uint32_t baud) {
  (void)ctx;
  Serial.flush(); /* the ACK leaves at the old rate */
  Serial.updateBaudRate(baud);
}

static void reboot_board(void *ctx) {
  (void)ctx;
  Serial.flush();
  ESP.restart();
}

static uint32_t clock_ms(void *ctx) {
  (void)ctx;
  return millis();
}

static uint8_t reset_reason(void) {
  switch (esp_reset_reason()) {
  case ESP_RST_POWERON: return TM_RESET_POWER_ON;
  case ESP_RST_SW: return TM_RESET_SOFTWARE;
  case ESP_RST_INT_WDT:
  case ESP_RST_TASK_WDT:
  case ESP_RST_WDT: return TM_RESET_WATCHDOG;
  case ESP_RST_BROWNOUT: return TM_RESET_BROWNOUT;
  default: return TM_RESET_OTHER; /* panic, deep sleep, external pin, unknown */
  }
}

void setup() {
  static const uint8_t check[9] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  tm_device_config cfg;
  const uint64_t mac = ESP.getEfuseMac(); /* the 6 MAC bytes, first byte lowest */

  Serial.setRxBufferSize(2048); /* a whole 1,036-byte frame while a poll mines */
  Serial.begin(TM_BAUD_DEFAULT);

  /* The ROM CRC is zlib's CRC-32; the portable one is used if a ROM ever disagrees. */
  if (esp_rom_crc32_le(0, check, 9) == 0xCBF43926u) crc_function = rom_crc32;

  memset(&cfg, 0, sizeof cfg);
  for (int i = 0; i < 6; i++) cfg.chip_id[i] = (uint8_t)(mac >> (8 * i));
  cfg.firmware = "tm-fw " TM_CORE_VERSION_STRING;
  cfg.board = TM_BOARD_NAME;
  cfg.capabilities = TM_CAP_ALL;
  cfg.max_n = TM_BOARD_MAX_N;
  cfg.max_f = TM_BOARD_MAX_F;
  cfg.max_baud = TM_BOARD_MAX_BAUD;
  cfg.scratch = scratch_words;
  cfg.scratch_words = sizeof scratch_words / sizeof scratch_words[0];
  cfg.input = input_buffer;
  cfg.input_bytes = sizeof input_buffer;
  cfg.store = &result_store;
  cfg.write = write_frame;
  cfg.crc32 = crc_function;
  cfg.set_baud = set_baud;
  cfg.reboot = reboot_board;
  if (tm_device_init(&device, &cfg, reset_reason()) != TM_OK) {
    for (;;) delay(1000); /* a build configuration error: nothing can run */
  }
  /* BOOT, self-test, rate measurement (2 x 200 ms), HELLO, then any results kept in RTC memory */
  tm_device_boot(&device, clock_ms, NULL, TM_BOARD_CALIBRATE_MS);
}

void loop() {
  uint8_t buf[256];
  int available;
  while ((available = Serial.available()) > 0) {
    const size_t n = Serial.readBytes(buf, available < (int)sizeof buf ? (size_t)available : sizeof buf);
    if (n == 0) break;
    tm_device_feed(&device, buf, (uint32_t)n, millis());
  }
  /* about 20 ms of mining per call at the rate measured at boot, then back to the port */
  tm_device_poll(&device, millis(), TM_BUDGET_AUTO);
}

#endif /* TM_WIFI_SSID */
