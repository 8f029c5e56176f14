/* Stub of the ESP32 Arduino core for the sketch check (make sketch-check): declarations only. */
#pragma once
#include <stdint.h>
uint32_t esp_rom_crc32_le(uint32_t, const uint8_t *, uint32_t);
