/*
 * tm_http.h: the HTTP/1.1 the board needs, over the socket seam (tm_net.h): a client that sends
 * one request per connection (`Connection: close`) and reads a bounded answer, the parser of the
 * one kind of request the board serves (the validator's callback), and the URL and date formats.
 *
 * Plain HTTP only: every message that matters is signed (the board's requests and blocks by its
 * key, the callbacks by the validator's node key), so a network attacker can delay or drop work
 * but not steal it or steer the board; a board that must reach a validator over the internet
 * talks to a status proxy on its LAN, which reaches the validator over HTTPS.
 */
#ifndef TM_HTTP_H
#define TM_HTTP_H

#include <stdint.h>

#include "tm_net.h"

#define TM_URL_HOST_MAX 64u
#define TM_URL_PREFIX_MAX 64u

typedef struct {
  char host[TM_URL_HOST_MAX];     /* a name, an IPv4 address, or an IPv6 address without brackets */
  char prefix[TM_URL_PREFIX_MAX]; /* a path prefix without a trailing '/', usually empty */
  uint16_t port;                  /* 80 when the URL has none */
} tm_url;

/* Parses "http://host[:port][/prefix]". Returns 0 or TM_HTTP_ERR_URL. */
int32_t tm_url_parse(const char *url, tm_url *out);

#define TM_HTTP_OK 0
#define TM_HTTP_ERR_URL (-10)
#define TM_HTTP_ERR_CONNECT (-11)  /* could not connect, or send the request */
#define TM_HTTP_ERR_TIMEOUT (-12)  /* no complete answer in time */
#define TM_HTTP_ERR_MALFORMED (-13) /* the answer is not HTTP/1.x as expected */
#define TM_HTTP_ERR_TOO_LARGE (-14) /* the answer (head or body) does not fit the buffer */
#define TM_HTTP_ERR_REQUEST (-15)   /* the request does not fit its buffer */

typedef struct {
  int32_t status;      /* 100..599 */
  const uint8_t *body; /* inside the caller's buffer (dechunked), NUL-terminated */
  uint32_t body_len;
  uint64_t date_s;     /* the Date header as Unix seconds, 0 when absent or unreadable */
} tm_http_response;

/* One request. `headers` are extra header lines, each ending in "\r\n" (may be NULL); `path`
 * is sent as given (the URL's prefix is the caller's business). The answer is read into
 * buf[0..cap) (head and body; the body is moved to the front). `timeout_ms` bounds every step. */
int32_t tm_http_request(const tm_net_port *net, const tm_url *url, const char *method, const char *path,
                        const char *headers, const uint8_t *body, uint32_t body_len, uint8_t *buf, uint32_t cap,
                        uint32_t timeout_ms, tm_http_response *out);

/* ---- the server side: one request on the callback port ---- */

#define TM_HTTP_HEADER_VALUE_MAX 160u

typedef struct {
  char method[8];
  char path[64];
  uint32_t head_len;      /* bytes of the request line and headers, final CRLF CRLF included */
  int32_t has_length;     /* a Content-Length was given */
  uint32_t content_length;
  char signature[TM_HTTP_HEADER_VALUE_MAX]; /* x-tm-signature, "" when absent */
  char node[TM_HTTP_HEADER_VALUE_MAX];      /* x-tm-node-pubkey, "" when absent */
} tm_http_request_head;

#define TM_HTTP_INCOMPLETE 1 /* the head has not fully arrived */
/* Parses the head of a request in buf[0..len): TM_HTTP_OK, TM_HTTP_INCOMPLETE, or
 * TM_HTTP_ERR_MALFORMED (bad request line or header, a repeated or invalid Content-Length, a
 * Transfer-Encoding: the board accepts bodies with a length only). */
int32_t tm_http_parse_request_head(const uint8_t *buf, uint32_t len, tm_http_request_head *out);

/* Writes a whole answer (status line, Content-Type: application/json, Content-Length,
 * Connection: close, the body) into out; returns its length, 0 when it does not fit. */
uint32_t tm_http_answer(int32_t status, const char *body, uint8_t *out, uint32_t cap);

/* "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 IMF-fixdate) as Unix seconds; 0 when malformed. */
uint64_t tm_http_date(const char *s, uint32_t len);

#endif
