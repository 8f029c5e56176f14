/*
 * tm_config.h: the Wi-Fi mode of the tensormine sketch (firmware-sim/README.md, "The board on
 * Wi-Fi"). Copy this file to tm_config.h beside tensormine.ino and fill it in; tm_config.h is
 * git-ignored, so the credentials stay on your machine. Without tm_config.h (or without
 * TM_WIFI_SSID) the sketch is the serial board of docs/serial-protocol.md.
 */
#ifndef TM_CONFIG_H
#define TM_CONFIG_H

/* Your Wi-Fi network (2.4 GHz). */
#define TM_WIFI_SSID "my-network"
#define TM_WIFI_PASSWORD "my-password"

/* The validator, or a status proxy on your LAN (which reaches a validator over HTTPS): plain
 * http://host[:port][/prefix]. The board finds out by itself whether it speaks v4.1 or v4.0. */
#define TM_VALIDATOR_URL "http://192.168.1.10:8420"

/* The port the board listens on for the validator's callbacks (docs/protocol.md 4.17); 0: none,
 * the board then looks at its cell every TM_POLL_MS. */
#define TM_CALLBACK_PORT 4242

/* How often the board looks at its job's cell anyway, ms (0: 30 s with callbacks, 5 s without). */
#define TM_POLL_MS 0

/* 1: join the validator's mining pool when it runs one (stake TM_POOL_STAKE PTM), and mine shares. */
#define TM_POOL 0
#define TM_POOL_STAKE "0"

#endif
