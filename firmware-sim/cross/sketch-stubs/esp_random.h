/* Stub of the ESP32 Arduino core for the sketch check (make sketch-check): declarations only. */
#pragma once
#include <stdint.h>
#include <stddef.h>
void esp_fill_random(void *, size_t);
