/*
 * tm_net_bsd.c: the socket seam over BSD sockets (tm_net_bsd.h). Every call is bounded by its
 * timeout through non-blocking sockets and poll(); nothing blocks the board's loop.
 */
#if !defined(ESP_PLATFORM) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "tm_net_bsd.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#ifdef ESP_PLATFORM
/* ESP-IDF (Arduino core 2.x and 3.x): lwIP's BSD sockets, poll() through the VFS */
#include <sys/poll.h>

#include "lwip/netdb.h"
#include "lwip/sockets.h"
#else
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#endif

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

static int set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* poll() one descriptor for `events` up to ms; 1 ready, 0 timeout, -1 error. */
static int wait_fd(int fd, short events, uint32_t ms) {
  struct pollfd p;
  int rc;
  p.fd = fd;
  p.events = events;
  p.revents = 0;
  do {
    rc = poll(&p, 1, ms > 0x7fffffffu ? 0x7fffffff : (int)ms);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) return -1;
  return rc == 0 ? 0 : 1;
}

static int32_t bsd_connect(void *ctx, const char *host, uint16_t port, uint32_t timeout_ms) {
  tm_net_bsd *n = (tm_net_bsd *)ctx;
  struct addrinfo hints, *list = NULL, *ai;
  char service[8];
  int32_t result = TM_NET_ERROR;
  const uint32_t start = n->now_ms(n->platform_ctx);
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  {
    unsigned v = port, i = 0;
    char rev[8];
    do {
      rev[i++] = (char)('0' + v % 10u);
      v /= 10u;
    } while (v);
    for (v = 0; v < i; v++) service[v] = rev[i - 1u - v];
    service[i] = '\0';
  }
  if (getaddrinfo(host, service, &hints, &list) != 0) return TM_NET_ERROR;
  for (ai = list; ai; ai = ai->ai_next) {
    const uint32_t elapsed = n->now_ms(n->platform_ctx) - start;
    int fd, err = 0, ready;
    socklen_t len = sizeof err;
    if (elapsed >= timeout_ms) {
      result = TM_NET_TIMEOUT;
      break;
    }
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) continue;
    if (set_nonblocking(fd) != 0) {
      close(fd);
      continue;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      close(fd);
      continue;
    }
    ready = wait_fd(fd, POLLOUT, timeout_ms - elapsed);
    if (ready == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      result = fd;
      break;
    }
    close(fd);
    if (ready == 0) result = TM_NET_TIMEOUT;
  }
  freeaddrinfo(list);
  return result;
}

static int32_t bsd_send(void *ctx, int32_t conn, const uint8_t *data, uint32_t len, uint32_t timeout_ms) {
  tm_net_bsd *n = (tm_net_bsd *)ctx;
  const uint32_t start = n->now_ms(n->platform_ctx);
  while (len > 0u) {
    const uint32_t elapsed = n->now_ms(n->platform_ctx) - start;
    ssize_t sent;
    if (elapsed >= timeout_ms) return TM_NET_TIMEOUT;
    if (wait_fd(conn, POLLOUT, timeout_ms - elapsed) != 1) return TM_NET_TIMEOUT;
    sent = send(conn, data, len, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return TM_NET_ERROR;
    }
    data += sent;
    len -= (uint32_t)sent;
  }
  return 0;
}

static int32_t bsd_recv(void *ctx, int32_t conn, uint8_t *buf, uint32_t cap, uint32_t timeout_ms) {
  ssize_t got;
  (void)ctx;
  for (;;) {
    const int ready = wait_fd(conn, POLLIN, timeout_ms);
    if (ready == 0) return TM_NET_TIMEOUT;
    if (ready < 0) return TM_NET_ERROR;
    got = recv(conn, buf, cap, 0);
    if (got > 0) return (int32_t)got;
    if (got == 0) return TM_NET_CLOSED;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
    return TM_NET_ERROR;
  }
}

static void bsd_close(void *ctx, int32_t conn) {
  (void)ctx;
  close(conn);
}

static int32_t bsd_accept(void *ctx) {
  tm_net_bsd *n = (tm_net_bsd *)ctx;
  int fd;
  if (n->listen_fd < 0) return TM_NET_NONE;
  fd = accept(n->listen_fd, NULL, NULL);
  if (fd < 0) return TM_NET_NONE;
  if (set_nonblocking(fd) != 0) {
    close(fd);
    return TM_NET_NONE;
  }
  return fd;
}

static uint32_t bsd_now(void *ctx) {
  tm_net_bsd *n = (tm_net_bsd *)ctx;
  return n->now_ms(n->platform_ctx);
}

static void bsd_random(void *ctx, uint8_t *buf, uint32_t len) {
  tm_net_bsd *n = (tm_net_bsd *)ctx;
  n->random(n->platform_ctx, buf, len);
}

int tm_net_bsd_open(tm_net_bsd *n, const char *bind_address, int32_t callback_port,
                    uint32_t (*now_ms)(void *ctx), void (*random)(void *ctx, uint8_t *buf, uint32_t len),
                    void *platform_ctx) {
  struct addrinfo hints, *list = NULL;
  struct sockaddr_storage bound;
  socklen_t len = sizeof bound;
  const int one = 1;
  char service[8] = "0";
  n->listen_fd = -1;
  n->port = 0;
  n->now_ms = now_ms;
  n->random = random;
  n->platform_ctx = platform_ctx;
  if (callback_port < 0) return 0;
  if (callback_port > 65535) return -1;
  {
    unsigned v = (unsigned)callback_port, i = 0, k;
    char rev[8];
    do {
      rev[i++] = (char)('0' + v % 10u);
      v /= 10u;
    } while (v);
    for (k = 0; k < i; k++) service[k] = rev[i - 1u - k];
    service[i] = '\0';
  }
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  if (getaddrinfo(bind_address, service, &hints, &list) != 0 || !list) return -1;
  n->listen_fd = socket(list->ai_family, list->ai_socktype, list->ai_protocol);
  if (n->listen_fd < 0 || setsockopt(n->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(n->listen_fd, list->ai_addr, list->ai_addrlen) != 0 || listen(n->listen_fd, 8) != 0 ||
      set_nonblocking(n->listen_fd) != 0 || getsockname(n->listen_fd, (struct sockaddr *)&bound, &len) != 0) {
    freeaddrinfo(list);
    tm_net_bsd_close(n);
    return -1;
  }
  freeaddrinfo(list);
  n->port = ntohs(bound.ss_family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
                                             : ((struct sockaddr_in6 *)&bound)->sin6_port);
  return 0;
}

void tm_net_bsd_close(tm_net_bsd *n) {
  if (n->listen_fd >= 0) close(n->listen_fd);
  n->listen_fd = -1;
}

void tm_net_bsd_port(tm_net_bsd *n, tm_net_port *port) {
  port->connect = bsd_connect;
  port->send = bsd_send;
  port->recv = bsd_recv;
  port->close = bsd_close;
  port->accept = bsd_accept;
  port->now_ms = bsd_now;
  port->random = bsd_random;
  port->ctx = n;
}

int tm_net_bsd_wait(tm_net_bsd *n, uint32_t ms) {
  if (n->listen_fd < 0) {
    struct pollfd none;
    none.fd = -1;
    none.events = 0;
    (void)poll(&none, 0, (int)ms);
    return 0;
  }
  return wait_fd(n->listen_fd, POLLIN, ms) == 1;
}
