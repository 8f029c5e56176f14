/*
 * tm_net.h: the socket seam of the network board (core/tm_board.h), like tm_sha_port for the SHA
 * peripheral: the core speaks HTTP/JSON, the board port moves bytes. The host implements it with
 * POSIX sockets (host/tm_net_posix.c, used by `tm-sim --net`), the ESP32 sketch with lwIP's BSD
 * sockets (the same calls: socket, connect, send, recv, poll, accept), so one C file serves both.
 *
 * Contract:
 *   - every call returns within the timeout it is given (the board's loop never blocks longer);
 *   - a connection handle is an integer >= 0; a negative return is a failure (TM_NET_*);
 *   - `accept` never blocks: it returns a connection made to the callback port, or
 *     TM_NET_NONE when nobody is waiting (and TM_NET_NONE forever when no port was opened);
 *   - `now_ms` is a monotonic millisecond clock that may wrap (the core subtracts);
 *   - `random` fills bytes from a cryptographic generator (esp_fill_random, /dev/urandom): the
 *     nonces of signed requests come from it.
 */
#ifndef TM_NET_H
#define TM_NET_H

#include <stdint.h>

#define TM_NET_NONE (-1)    /* accept: nobody waiting */
#define TM_NET_ERROR (-2)   /* resolve, connect, send or receive failed */
#define TM_NET_TIMEOUT (-3) /* nothing within the timeout */
#define TM_NET_CLOSED 0     /* recv: the peer closed the connection */

typedef struct {
  /* Connects to host (a name or a numeric address) and port; returns a handle or TM_NET_ERROR /
   * TM_NET_TIMEOUT. */
  int32_t (*connect)(void *ctx, const char *host, uint16_t port, uint32_t timeout_ms);
  /* Sends all `len` bytes; returns 0 or TM_NET_ERROR / TM_NET_TIMEOUT. */
  int32_t (*send)(void *ctx, int32_t conn, const uint8_t *data, uint32_t len, uint32_t timeout_ms);
  /* Receives at most `cap` bytes: the count (> 0), TM_NET_CLOSED, TM_NET_ERROR or TM_NET_TIMEOUT. */
  int32_t (*recv)(void *ctx, int32_t conn, uint8_t *buf, uint32_t cap, uint32_t timeout_ms);
  void (*close)(void *ctx, int32_t conn);
  /* A connection waiting on the callback port, or TM_NET_NONE; never blocks. */
  int32_t (*accept)(void *ctx);
  uint32_t (*now_ms)(void *ctx);
  void (*random)(void *ctx, uint8_t *buf, uint32_t len);
  void *ctx;
} tm_net_port;

#endif
