/*
 * tm_http.c: HTTP/1.1 for the network board (tm_http.h): URL, client exchange over the socket
 * seam, the callback request's head, answers and IMF-fixdate. No allocation, no libc.
 */
#include "tm_http.h"

#include "tm_json.h"

static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

/* Case-insensitive comparison of n bytes of p with the lowercase word w (exactly n long). */
static int32_t name_is(const uint8_t *p, uint32_t n, const char *w) {
  uint32_t i;
  if (tm_strlen(w) != n) return 0;
  for (i = 0; i < n; i++) {
    if (lower((char)p[i]) != w[i]) return 0;
  }
  return 1;
}

static int32_t parse_u32(const uint8_t *p, uint32_t n, uint32_t max, uint32_t *out) {
  uint64_t v = 0;
  uint32_t i;
  if (n == 0u || n > 10u) return 0;
  for (i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return 0;
    v = v * 10u + (uint32_t)(p[i] - '0');
  }
  if (v > max) return 0;
  *out = (uint32_t)v;
  return 1;
}

int32_t tm_url_parse(const char *url, tm_url *out) {
  const char *p = url;
  uint32_t n = 0, port = 80;
  const char *scheme = "http://";
  while (*scheme) {
    if (lower(*p) != *scheme) return TM_HTTP_ERR_URL;
    p++;
    scheme++;
  }
  if (*p == '[') { /* an IPv6 literal */
    p++;
    while (*p && *p != ']') {
      if (n + 1u >= TM_URL_HOST_MAX) return TM_HTTP_ERR_URL;
      out->host[n++] = *p++;
    }
    if (*p != ']') return TM_HTTP_ERR_URL;
    p++;
  } else {
    while (*p && *p != ':' && *p != '/') {
      const char c = *p;
      if (n + 1u >= TM_URL_HOST_MAX || !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                         (c >= '0' && c <= '9') || c == '-' || c == '.'))
        return TM_HTTP_ERR_URL;
      out->host[n++] = *p++;
    }
  }
  if (n == 0u) return TM_HTTP_ERR_URL;
  out->host[n] = '\0';
  if (*p == ':') {
    const char *digits = ++p;
    while (*p >= '0' && *p <= '9') p++;
    if (!parse_u32((const uint8_t *)digits, (uint32_t)(p - digits), 65535u, &port) || port == 0u)
      return TM_HTTP_ERR_URL;
  }
  out->port = (uint16_t)port;
  n = 0;
  if (*p == '/') {
    while (*p) {
      const char c = *p;
      if (n + 1u >= TM_URL_PREFIX_MAX || c <= ' ' || c > '~' || c == '?' || c == '#') return TM_HTTP_ERR_URL;
      out->prefix[n++] = *p++;
    }
    while (n > 0u && out->prefix[n - 1u] == '/') n--; /* no trailing slash */
  }
  if (*p) return TM_HTTP_ERR_URL;
  out->prefix[n] = '\0';
  return 0;
}

/* ---- dates ---- */

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  int64_t era, yoe, doy, doe;
  y -= m <= 2;
  era = y / 400; /* y >= 1969 here: never negative */
  yoe = y - era * 400;
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

uint64_t tm_http_date(const char *s, uint32_t len) {
  static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
  uint32_t day, year, hh, mm, ss, m;
  const uint8_t *u = (const uint8_t *)s;
  if (len != 29u || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' ||
      s[22] != ':' || s[25] != ' ' || s[26] != 'G' || s[27] != 'M' || s[28] != 'T')
    return 0;
  for (m = 0; m < 12u; m++) {
    if (months[3u * m] == s[8] && months[3u * m + 1u] == s[9] && months[3u * m + 2u] == s[10]) break;
  }
  if (m == 12u || !parse_u32(u + 5, 2, 31, &day) || day == 0u || !parse_u32(u + 12, 4, 9999, &year) ||
      year < 1970u || !parse_u32(u + 17, 2, 23, &hh) || !parse_u32(u + 20, 2, 59, &mm) ||
      !parse_u32(u + 23, 2, 60, &ss))
    return 0;
  return (uint64_t)days_from_civil(year, m + 1u, day) * 86400u + hh * 3600u + mm * 60u + ss;
}

/* ---- the client ---- */

static uint32_t find_head_end(const uint8_t *p, uint32_t n) {
  uint32_t i;
  for (i = 3; i < n; i++) {
    if (p[i - 3u] == '\r' && p[i - 2u] == '\n' && p[i - 1u] == '\r' && p[i] == '\n') return i + 1u;
  }
  return 0;
}

typedef struct {
  int32_t status;
  int32_t chunked;
  int32_t has_length;
  uint32_t length;
  uint64_t date_s;
} head_info;

/* The status line and the headers the client cares about. 0 or TM_HTTP_ERR_MALFORMED. */
static int32_t parse_response_head(const uint8_t *p, uint32_t head_len, head_info *h) {
  uint32_t i = 0, status;
  tm_zero(h, sizeof *h);
  if (head_len < 16u || !name_is(p, 7, "http/1.") || (p[7] != '1' && p[7] != '0') || p[8] != ' ' ||
      !parse_u32(p + 9, 3, 599, &status) || status < 100u)
    return TM_HTTP_ERR_MALFORMED;
  h->status = (int32_t)status;
  while (i + 1u < head_len && !(p[i] == '\r' && p[i + 1u] == '\n')) i++;
  i += 2u;
  while (i + 2u < head_len) { /* each header line; the head ends with an empty line */
    const uint32_t start = i;
    uint32_t colon = 0, end, v;
    while (i + 1u < head_len && !(p[i] == '\r' && p[i + 1u] == '\n')) {
      if (p[i] == ':' && colon == 0u) colon = i;
      i++;
    }
    end = i;
    i += 2u;
    if (colon == 0u) return TM_HTTP_ERR_MALFORMED;
    v = colon + 1u;
    while (v < end && (p[v] == ' ' || p[v] == '\t')) v++;
    while (end > v && (p[end - 1u] == ' ' || p[end - 1u] == '\t')) end--;
    if (name_is(p + start, colon - start, "content-length")) {
      if (h->has_length || !parse_u32(p + v, end - v, 0x7fffffffu, &h->length)) return TM_HTTP_ERR_MALFORMED;
      h->has_length = 1;
    } else if (name_is(p + start, colon - start, "transfer-encoding")) {
      h->chunked = name_is(p + v, end - v, "chunked");
      if (!h->chunked) return TM_HTTP_ERR_MALFORMED; /* no other coding is expected */
    } else if (name_is(p + start, colon - start, "date")) {
      h->date_s = tm_http_date((const char *)(p + v), end - v);
    }
  }
  return 0;
}

/* Scans (write 0) or decodes in place (write 1) a chunked body in p[0..n); returns its length,
 * or -1 (malformed) or -2 (the last chunk has not arrived). Scan first: a failed decode would
 * leave a partial body moved. */
static int32_t dechunk(uint8_t *p, uint32_t n, int32_t write) {
  uint32_t in = 0, out = 0;
  for (;;) {
    uint32_t size = 0, digits = 0;
    while (in < n && p[in] != '\r' && p[in] != ';') {
      const uint8_t c = p[in];
      uint32_t d;
      if (c >= '0' && c <= '9') d = (uint32_t)(c - '0');
      else if (c >= 'a' && c <= 'f') d = (uint32_t)(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = (uint32_t)(c - 'A' + 10);
      else return -1;
      if (++digits > 7u) return -1;
      size = size * 16u + d;
      in++;
    }
    while (in < n && p[in] != '\r') in++; /* chunk extensions */
    if (in + 1u >= n) return -2;
    if (digits == 0u || p[in + 1u] != '\n') return -1;
    in += 2u;
    if (size == 0u) return (int32_t)out; /* trailers are ignored */
    if (n - in < size + 2u) return -2;
    if (write) tm_copy(p + out, p + in, size); /* out <= in: a forward copy is safe */
    out += size;
    in += size;
    if (p[in] != '\r' || p[in + 1u] != '\n') return -1;
    in += 2u;
  }
}

static int32_t send_all(const tm_net_port *net, int32_t conn, const uint8_t *p, uint32_t n, uint32_t timeout) {
  return n == 0u ? 0 : net->send(net->ctx, conn, p, n, timeout);
}

int32_t tm_http_request(const tm_net_port *net, const tm_url *url, const char *method, const char *path,
                        const char *headers, const uint8_t *body, uint32_t body_len, uint8_t *buf, uint32_t cap,
                        uint32_t timeout_ms, tm_http_response *out) {
  uint8_t head[1024];
  tm_buf b;
  int32_t conn, rc = TM_HTTP_ERR_TIMEOUT;
  uint32_t have = 0, head_len = 0;
  const uint32_t started = net->now_ms(net->ctx);
  head_info h;
  tm_zero(out, sizeof *out);
  tm_zero(&h, sizeof h);
  tm_buf_init(&b, head, sizeof head);
  tm_buf_str(&b, method);
  tm_buf_char(&b, ' ');
  tm_buf_str(&b, path);
  tm_buf_str(&b, " HTTP/1.1\r\nHost: ");
  if (url->host[0] != '\0' && tm_strlen(url->host) > 0u) {
    uint32_t i, colon = 0;
    for (i = 0; url->host[i]; i++) colon |= url->host[i] == ':';
    if (colon) tm_buf_char(&b, '[');
    tm_buf_str(&b, url->host);
    if (colon) tm_buf_char(&b, ']');
  }
  if (url->port != 80u) {
    tm_buf_char(&b, ':');
    tm_buf_u64(&b, url->port);
  }
  tm_buf_str(&b, "\r\nUser-Agent: tm-board/" "0.1" "\r\nAccept: application/json\r\nConnection: close\r\n");
  if (body) {
    tm_buf_str(&b, "Content-Type: application/json\r\nContent-Length: ");
    tm_buf_u64(&b, body_len);
    tm_buf_str(&b, "\r\n");
  }
  if (headers) tm_buf_str(&b, headers);
  tm_buf_str(&b, "\r\n");
  if (b.overflow || cap < 2u) return TM_HTTP_ERR_REQUEST;

  conn = net->connect(net->ctx, url->host, url->port, timeout_ms);
  if (conn < 0) return conn == TM_NET_TIMEOUT ? TM_HTTP_ERR_TIMEOUT : TM_HTTP_ERR_CONNECT;
  if (send_all(net, conn, head, b.len, timeout_ms) != 0 || (body && send_all(net, conn, body, body_len, timeout_ms) != 0)) {
    net->close(net->ctx, conn);
    return TM_HTTP_ERR_CONNECT;
  }
  for (;;) {
    const uint32_t elapsed = net->now_ms(net->ctx) - started;
    int32_t n;
    if (elapsed >= timeout_ms) break;
    if (have + 1u >= cap) {
      rc = TM_HTTP_ERR_TOO_LARGE;
      break;
    }
    n = net->recv(net->ctx, conn, buf + have, cap - 1u - have, timeout_ms - elapsed);
    if (n == TM_NET_TIMEOUT) break;
    if (n < 0) {
      rc = TM_HTTP_ERR_MALFORMED;
      break;
    }
    if (n > 0) have += (uint32_t)n;
    if (head_len == 0u) {
      head_len = find_head_end(buf, have);
      if (head_len != 0u && parse_response_head(buf, head_len, &h) != 0) {
        rc = TM_HTTP_ERR_MALFORMED;
        break;
      }
      if (head_len != 0u) out->status = h.status;
    }
    if (head_len != 0u) {
      const uint32_t body_have = have - head_len;
      if (h.has_length && !h.chunked) {
        if (h.length >= cap - head_len) {
          rc = TM_HTTP_ERR_TOO_LARGE;
          break;
        }
        if (body_have >= h.length) {
          out->body_len = h.length;
          rc = TM_HTTP_OK;
          break;
        }
      } else if (h.chunked) {
        const int32_t len = dechunk(buf + head_len, body_have, 0);
        if (len >= 0) {
          out->body_len = (uint32_t)dechunk(buf + head_len, body_have, 1);
          rc = TM_HTTP_OK;
          break;
        }
        if (len == -1) {
          rc = TM_HTTP_ERR_MALFORMED;
          break;
        }
      } else if (n == TM_NET_CLOSED) { /* no length: the body ends with the connection */
        out->body_len = body_have;
        rc = TM_HTTP_OK;
        break;
      }
    }
    if (n == TM_NET_CLOSED) {
      rc = TM_HTTP_ERR_MALFORMED; /* closed before a complete answer */
      break;
    }
  }
  net->close(net->ctx, conn);
  if (rc != TM_HTTP_OK) return rc;
  tm_copy(buf, buf + head_len, out->body_len); /* the body to the front: forward copy */
  buf[out->body_len] = 0;
  out->body = buf;
  out->date_s = h.date_s;
  return TM_HTTP_OK;
}

/* ---- the server side ---- */

static void copy_value(char *dst, const uint8_t *p, uint32_t n) {
  if (n >= TM_HTTP_HEADER_VALUE_MAX) n = TM_HTTP_HEADER_VALUE_MAX - 1u; /* a too long value fails its check */
  tm_copy(dst, p, n);
  dst[n] = '\0';
}

int32_t tm_http_parse_request_head(const uint8_t *buf, uint32_t len, tm_http_request_head *out) {
  const uint32_t head_len = find_head_end(buf, len);
  uint32_t i = 0, n;
  tm_zero(out, sizeof *out);
  if (head_len == 0u) return len >= 2048u ? TM_HTTP_ERR_MALFORMED : TM_HTTP_INCOMPLETE;
  out->head_len = head_len;
  for (n = 0; i < head_len && buf[i] >= 'A' && buf[i] <= 'Z'; i++) {
    if (n + 1u >= sizeof out->method) return TM_HTTP_ERR_MALFORMED;
    out->method[n++] = (char)buf[i];
  }
  if (n == 0u || buf[i] != ' ') return TM_HTTP_ERR_MALFORMED;
  i++;
  for (n = 0; i < head_len && buf[i] > ' ' && buf[i] <= '~'; i++) {
    if (n + 1u >= sizeof out->path) return TM_HTTP_ERR_MALFORMED;
    out->path[n++] = (char)buf[i];
  }
  if (n == 0u || buf[i] != ' ' || !name_is(buf + i + 1u, 7, "http/1.")) return TM_HTTP_ERR_MALFORMED;
  while (i + 1u < head_len && !(buf[i] == '\r' && buf[i + 1u] == '\n')) i++;
  i += 2u;
  while (i + 2u < head_len) {
    const uint32_t start = i;
    uint32_t colon = 0, end, v;
    while (i + 1u < head_len && !(buf[i] == '\r' && buf[i + 1u] == '\n')) {
      if (buf[i] == ':' && colon == 0u) colon = i;
      i++;
    }
    end = i;
    i += 2u;
    if (colon == 0u) return TM_HTTP_ERR_MALFORMED;
    v = colon + 1u;
    while (v < end && (buf[v] == ' ' || buf[v] == '\t')) v++;
    while (end > v && (buf[end - 1u] == ' ' || buf[end - 1u] == '\t')) end--;
    if (name_is(buf + start, colon - start, "content-length")) {
      if (out->has_length || !parse_u32(buf + v, end - v, 0x7fffffffu, &out->content_length))
        return TM_HTTP_ERR_MALFORMED;
      out->has_length = 1;
    } else if (name_is(buf + start, colon - start, "transfer-encoding")) {
      return TM_HTTP_ERR_MALFORMED;
    } else if (name_is(buf + start, colon - start, "x-tm-signature")) {
      copy_value(out->signature, buf + v, end - v);
    } else if (name_is(buf + start, colon - start, "x-tm-node-pubkey")) {
      copy_value(out->node, buf + v, end - v);
    }
  }
  return TM_HTTP_OK;
}

static const char *reason(int32_t status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    default:
      return "Error";
  }
}

uint32_t tm_http_answer(int32_t status, const char *body, uint8_t *out, uint32_t cap) {
  tm_buf b;
  tm_buf_init(&b, out, cap);
  tm_buf_str(&b, "HTTP/1.1 ");
  tm_buf_u64(&b, (uint64_t)status);
  tm_buf_char(&b, ' ');
  tm_buf_str(&b, reason(status));
  tm_buf_str(&b, "\r\nContent-Type: application/json\r\nContent-Length: ");
  tm_buf_u64(&b, tm_strlen(body));
  tm_buf_str(&b, "\r\nConnection: close\r\n\r\n");
  tm_buf_str(&b, body);
  return b.overflow ? 0u : b.len;
}
