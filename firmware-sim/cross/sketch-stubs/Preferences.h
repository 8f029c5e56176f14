/* Stub of the ESP32 Arduino core for the sketch check (make sketch-check): declarations only. */
#pragma once
#include <stddef.h>
struct Preferences { bool begin(const char *, bool); size_t getBytes(const char *, void *, size_t); size_t putBytes(const char *, const void *, size_t); void end(); };
