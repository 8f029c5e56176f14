/*
 * tm-image: a firmware-shaped image of the core for size and stack measurement on a target.
 *
 * It configures tm_device as the ESP32 sketch does (static scratch, input and result store
 * sized for the target's largest tensor), boots it and runs the feed/poll loop, so the linker
 * keeps exactly the code a board runs (protocol, self-test, both searches) and nothing else.
 * The UART is a stub: this image measures, it is not flashed. TM_IMAGE_MAX_N / _MAX_F select
 * the device type (esp32: 32, 4; esp8266: 16, 1).
 */
#include "../core/tm_core.h"
#include "../core/tm_proto.h"
#include "../core/tm_selftest.h"
#include "../core/tm_tensor.h"

#ifndef TM_IMAGE_MAX_N
#define TM_IMAGE_MAX_N 32u
#endif
#ifndef TM_IMAGE_MAX_F
#define TM_IMAGE_MAX_F 4u
#endif

#define WORDS_NEEDED TM_SCRATCH_WORDS_ANY(TM_IMAGE_MAX_N, TM_IMAGE_MAX_F)
#define SCRATCH_WORDS (WORDS_NEEDED > TM_SELFTEST_SCRATCH_WORDS ? WORDS_NEEDED : TM_SELFTEST_SCRATCH_WORDS)
#define INPUT_BYTES                                                                                        \
  (TM_IMAGE_MAX_N * TM_IMAGE_MAX_N > TM_SELFTEST_INPUT_BYTES ? TM_IMAGE_MAX_N * TM_IMAGE_MAX_N           \
                                                             : TM_SELFTEST_INPUT_BYTES)

static int32_t scratch[SCRATCH_WORDS];
static int8_t input[INPUT_BYTES];
static tm_result_store store;
static tm_device dev;
static volatile uint32_t uart_sink;
static volatile uint32_t ticks;

static void uart_write(void *ctx, const uint8_t *frame, uint32_t len) {
  uint32_t i;
  (void)ctx;
  for (i = 0; i < len; i++) uart_sink = frame[i];
}

static uint32_t millis(void *ctx) {
  (void)ctx;
  return ticks++;
}

static uint32_t uart_read(uint8_t *buf, uint32_t cap) {
  if (cap == 0) return 0;
  buf[0] = (uint8_t)uart_sink;
  return 1;
}

int main(void) {
  static const uint8_t chip_id[8] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00};
  tm_device_config cfg;
  uint8_t buf[64];
  uint32_t i;
  for (i = 0; i < sizeof cfg; i++) ((uint8_t *)&cfg)[i] = 0;
  for (i = 0; i < 8; i++) cfg.chip_id[i] = chip_id[i];
  cfg.firmware = "tm-fw " TM_CORE_VERSION_STRING;
  cfg.board = "image";
  cfg.capabilities = TM_CAP_ALL;
  cfg.max_n = (uint8_t)TM_IMAGE_MAX_N;
  cfg.max_f = (uint8_t)TM_IMAGE_MAX_F;
  cfg.max_baud = 921600;
  cfg.scratch = scratch;
  cfg.scratch_words = SCRATCH_WORDS;
  cfg.input = input;
  cfg.input_bytes = INPUT_BYTES;
  cfg.store = &store;
  cfg.write = uart_write;
  cfg.crc32 = tm_crc32;
  if (tm_device_init(&dev, &cfg, TM_RESET_POWER_ON) != TM_OK) return 1;
  (void)tm_device_boot(&dev, millis, 0, 0);
  for (;;) {
    const uint32_t n = uart_read(buf, sizeof buf);
    tm_device_feed(&dev, buf, n, ticks);
    (void)tm_device_poll(&dev, ticks, TM_BUDGET_AUTO);
  }
}
