/* Stub of the ESP32 Arduino core for the sketch check (make sketch-check): declarations only. */
#pragma once
typedef enum { ESP_RST_POWERON, ESP_RST_SW, ESP_RST_INT_WDT, ESP_RST_TASK_WDT, ESP_RST_WDT, ESP_RST_BROWNOUT } esp_reset_reason_t;
esp_reset_reason_t esp_reset_reason(void);
