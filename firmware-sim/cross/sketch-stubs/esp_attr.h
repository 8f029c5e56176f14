/* Stub of the ESP32 Arduino core for the sketch check (make sketch-check): declarations only. */
#pragma once
#define RTC_NOINIT_ATTR
