/* Stub of the Arduino-ESP32 API, only to check the sketch's syntax and types on the host. */
#pragma once
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
typedef uint32_t TickType_t;
typedef void (*TaskFunction_t)(void *);
int xTaskCreatePinnedToCore(TaskFunction_t, const char *, uint32_t, void *, unsigned, void *, int);
void vTaskDelay(TickType_t);
unsigned long millis(void);
void delay(unsigned long);
struct HardwareSerial {
  void begin(unsigned long);
  void setRxBufferSize(size_t);
  size_t write(const uint8_t *, size_t);
  int available();
  size_t readBytes(uint8_t *, size_t);
  void flush();
  void updateBaudRate(unsigned long);
  size_t println(const char *);
  int printf(const char *, ...) __attribute__((format(printf, 2, 3)));
};
extern HardwareSerial Serial;
struct EspClass { uint64_t getEfuseMac(); void restart(); };
extern EspClass ESP;
