/* Stub of the ESP32 Arduino core for the sketch check (make sketch-check): declarations only. */
#pragma once
#include "Arduino.h"
#define WL_CONNECTED 3
#define WIFI_STA 1
struct StringStub { const char *c_str() const; };
struct IPAddress { StringStub toString() const; };
struct WiFiClass { int status(); void mode(int); void begin(const char *, const char *); IPAddress localIP(); };
extern WiFiClass WiFi;
