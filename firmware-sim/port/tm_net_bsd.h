/*
 * tm_net_bsd.h: the socket seam (core/tm_net.h) over BSD sockets. The same file builds on a POSIX
 * host (tm-sim --net) and on the ESP32 with lwIP, whose socket API has the same calls (socket,
 * connect, send, recv, poll, accept, getaddrinfo, fcntl O_NONBLOCK). The clock and the random
 * generator are the platform's, passed in.
 */
#ifndef TM_NET_BSD_H
#define TM_NET_BSD_H

#include <stdint.h>

#include "tm_net.h" /* core/: -Icore on the host, the same folder in a sketch */

typedef struct {
  int listen_fd;     /* the callback port's socket, -1 when none */
  uint16_t port;     /* the port it listens on (the one chosen when 0 was asked) */
  uint32_t (*now_ms)(void *ctx);
  void (*random)(void *ctx, uint8_t *buf, uint32_t len);
  void *platform_ctx;
} tm_net_bsd;

/*
 * Opens the callback listener on bind_address:port (port 0: any free port, read back into
 * n->port; callback_port < 0: no listener). Returns 0 or -1 (errno says why).
 */
int tm_net_bsd_open(tm_net_bsd *n, const char *bind_address, int32_t callback_port,
                    uint32_t (*now_ms)(void *ctx), void (*random)(void *ctx, uint8_t *buf, uint32_t len),
                    void *platform_ctx);
void tm_net_bsd_close(tm_net_bsd *n);

/* The seam for tm_board_config.net. */
void tm_net_bsd_port(tm_net_bsd *n, tm_net_port *port);

/* Waits up to ms for a connection on the callback port (or just ms without one): 1 when one is
 * waiting, 0 otherwise. A host that paces its mining sleeps here. */
int tm_net_bsd_wait(tm_net_bsd *n, uint32_t ms);

#endif
