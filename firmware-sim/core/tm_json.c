/*
 * tm_json.c: a checking JSON scanner over a text buffer and a bounded writer (tm_json.h).
 * RFC 8259 grammar; no allocation, no libc; recursion is bounded by TM_JSON_MAX_DEPTH.
 */
#include "tm_json.h"

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

static int32_t is_digit(char c) { return c >= '0' && c <= '9'; }

static int32_t hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static int32_t any_hex(char c) { return hex_digit(c) >= 0 || (c >= 'A' && c <= 'F'); }

/* A string starting at p (a '"'); returns the position after it or 0. */
static const char *skip_string(const char *p, const char *end) {
  p++;
  while (p < end) {
    const unsigned char c = (unsigned char)*p;
    if (c == '"') return p + 1;
    if (c < 0x20u) return 0;
    if (c == '\\') {
      if (p + 1 >= end) return 0;
      switch (p[1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          p += 2;
          break;
        case 'u':
          if (end - p < 6 || !any_hex(p[2]) || !any_hex(p[3]) || !any_hex(p[4]) || !any_hex(p[5])) return 0;
          p += 6;
          break;
        default:
          return 0;
      }
    } else {
      p++;
    }
  }
  return 0;
}

static const char *skip_number(const char *p, const char *end) {
  if (p < end && *p == '-') p++;
  if (p >= end || !is_digit(*p)) return 0;
  if (*p == '0') {
    p++;
  } else {
    while (p < end && is_digit(*p)) p++;
  }
  if (p < end && *p == '.') {
    p++;
    if (p >= end || !is_digit(*p)) return 0;
    while (p < end && is_digit(*p)) p++;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-')) p++;
    if (p >= end || !is_digit(*p)) return 0;
    while (p < end && is_digit(*p)) p++;
  }
  return p;
}

static const char *skip_literal(const char *p, const char *end, const char *word) {
  while (*word) {
    if (p >= end || *p != *word) return 0;
    p++;
    word++;
  }
  return p;
}

/* A member's key and colon at p (a '"'); returns the position of its value or 0. */
static const char *skip_key(const char *p, const char *end) {
  if (p >= end || *p != '"') return 0;
  p = skip_string(p, end);
  if (!p) return 0;
  p = skip_ws(p, end);
  if (p >= end || *p != ':') return 0;
  return skip_ws(p + 1, end);
}

/* A string, number or literal at p; returns the position after it or 0. */
static const char *skip_scalar(const char *p, const char *end) {
  switch (*p) {
    case '"':
      return skip_string(p, end);
    case 't':
      return skip_literal(p, end, "true");
    case 'f':
      return skip_literal(p, end, "false");
    case 'n':
      return skip_literal(p, end, "null");
    default:
      return skip_number(p, end);
  }
}

/*
 * The value starting at p (nested inside `outer` containers already); returns the position
 * after it or 0. Iterative, with the closing bracket of each open container on a small stack,
 * so that the stack use is fixed (the core has no recursion).
 */
static const char *skip_value(const char *p, const char *end, uint32_t outer) {
  char close[TM_JSON_MAX_DEPTH];
  uint32_t depth = 0;
  for (;;) {
    int32_t have_value = 0;
    if (p >= end) return 0;
    if (*p == '{' || *p == '[') {
      if (outer + depth >= TM_JSON_MAX_DEPTH) return 0;
      close[depth++] = *p == '{' ? '}' : ']';
      p = skip_ws(p + 1, end);
      if (p < end && *p == close[depth - 1u]) {
        p++;
        depth--;
        have_value = 1;
      } else if (close[depth - 1u] == '}') {
        p = skip_key(p, end);
        if (!p) return 0;
      }
    } else {
      p = skip_scalar(p, end);
      if (!p) return 0;
      have_value = 1;
    }
    /* after a complete value: close containers, or move to the next element */
    while (have_value) {
      if (depth == 0u) return p;
      p = skip_ws(p, end);
      if (p >= end) return 0;
      if (*p == close[depth - 1u]) {
        p++;
        depth--;
        continue;
      }
      if (*p != ',') return 0;
      p = skip_ws(p + 1, end);
      if (close[depth - 1u] == '}') {
        p = skip_key(p, end);
        if (!p) return 0;
      }
      have_value = 0;
    }
  }
}

int32_t tm_json_type(tm_span v) {
  if (v.n == 0u) return TM_JSON_MALFORMED;
  switch (v.p[0]) {
    case '"':
      return TM_JSON_STRING;
    case '{':
      return TM_JSON_OBJECT;
    case '[':
      return TM_JSON_ARRAY;
    case 't':
      return TM_JSON_TRUE;
    case 'f':
      return TM_JSON_FALSE;
    case 'n':
      return TM_JSON_NULL;
    default:
      return TM_JSON_NUMBER;
  }
}

/* Finds member `name` (length n) in the object span; 1 found (value in *out), 0 absent, -1 bad. */
static int32_t member(tm_span obj, const char *name, uint32_t n, tm_span *out) {
  const char *p = obj.p, *end = obj.p + obj.n;
  int32_t found = 0;
  p = skip_ws(p + 1, end);
  if (p < end && *p == '}') return 0;
  for (;;) {
    const char *key, *key_end, *value;
    if (p >= end || *p != '"') return -1;
    key = p + 1;
    p = skip_string(p, end);
    if (!p) return -1;
    key_end = p - 1;
    p = skip_ws(p, end);
    if (p >= end || *p != ':') return -1;
    value = skip_ws(p + 1, end);
    p = skip_value(value, end, 1);
    if (!p) return -1;
    if (!found && (uint32_t)(key_end - key) == n) {
      uint32_t i = 0;
      while (i < n && key[i] == name[i]) i++;
      if (i == n) {
        found = 1; /* the first one wins; the rest of the object is still checked */
        out->p = value;
        out->n = (uint32_t)(p - value);
      }
    }
    p = skip_ws(p, end);
    if (p >= end) return -1;
    if (*p == '}') return found;
    if (*p != ',') return -1;
    p = skip_ws(p + 1, end);
  }
}

int32_t tm_json_get(tm_span doc, const char *path, tm_span *out) {
  const char *end = doc.p + doc.n;
  const char *start = skip_ws(doc.p, end);
  const char *after = skip_value(start, end, 0);
  tm_span cur;
  if (!after || skip_ws(after, end) != end) return TM_JSON_MALFORMED;
  cur.p = start;
  cur.n = (uint32_t)(after - start);
  while (*path) {
    uint32_t n = 0;
    int32_t rc;
    while (path[n] && path[n] != '.') n++;
    if (tm_json_type(cur) != TM_JSON_OBJECT) return TM_JSON_MISSING;
    rc = member(cur, path, n, &cur);
    if (rc < 0) return TM_JSON_MALFORMED;
    if (rc == 0) return TM_JSON_MISSING;
    path += n;
    if (*path == '.') path++;
  }
  *out = cur;
  return tm_json_type(cur);
}

void tm_json_iter_init(tm_json_iter *it, tm_span array) {
  it->p = array.p;
  it->end = array.p + array.n;
  it->started = 0;
}

int32_t tm_json_iter_next(tm_json_iter *it, tm_span *out) {
  const char *p = it->p, *v;
  if (p >= it->end) return 0;
  if (!it->started) {
    if (*p != '[') return TM_JSON_MALFORMED;
    it->started = 1;
    p = skip_ws(p + 1, it->end);
    if (p < it->end && *p == ']') {
      it->p = it->end;
      return 0;
    }
  } else {
    p = skip_ws(p, it->end);
    if (p >= it->end) return TM_JSON_MALFORMED;
    if (*p == ']') {
      it->p = it->end;
      return 0;
    }
    if (*p != ',') return TM_JSON_MALFORMED;
    p = skip_ws(p + 1, it->end);
  }
  v = skip_value(p, it->end, 1);
  if (!v) return TM_JSON_MALFORMED;
  out->p = p;
  out->n = (uint32_t)(v - p);
  it->p = v;
  return tm_json_type(*out);
}

int32_t tm_json_u64(tm_span v, uint64_t max, uint64_t *out) {
  uint64_t x = 0;
  uint32_t i;
  if (v.n == 0u || v.n > 20u || (v.p[0] == '0' && v.n > 1u)) return 0;
  for (i = 0; i < v.n; i++) {
    uint64_t d;
    if (!is_digit(v.p[i])) return 0;
    d = (uint64_t)(v.p[i] - '0');
    if (d > max || x > (max - d) / 10u) return 0;
    x = x * 10u + d;
  }
  *out = x;
  return 1;
}

int32_t tm_json_i64(tm_span v, int64_t min, int64_t max, int64_t *out) {
  uint64_t m;
  if (v.n > 0u && v.p[0] == '-') {
    tm_span rest;
    rest.p = v.p + 1;
    rest.n = v.n - 1u;
    if (min >= 0 || !tm_json_u64(rest, (uint64_t)0 - (uint64_t)min, &m) || m == 0u) return 0;
    *out = (int64_t)((uint64_t)0 - m);
    return 1;
  }
  if (max < 0 || !tm_json_u64(v, (uint64_t)max, &m) || (int64_t)m < min) return 0;
  *out = (int64_t)m;
  return 1;
}

int32_t tm_json_hex(tm_span v, uint8_t *out, uint32_t n) {
  uint32_t i;
  if (v.n != 2u * n + 2u || v.p[0] != '"' || v.p[v.n - 1u] != '"') return 0;
  for (i = 0; i < n; i++) {
    const int32_t hi = hex_digit(v.p[1u + 2u * i]), lo = hex_digit(v.p[2u + 2u * i]);
    if (hi < 0 || lo < 0) return 0;
    out[i] = (uint8_t)(hi * 16 + lo);
  }
  return 1;
}

int32_t tm_json_str_eq(tm_span v, const char *s) {
  uint32_t i;
  if (v.n < 2u || v.p[0] != '"') return 0;
  for (i = 0; i + 2u < v.n; i++) {
    if (s[i] == '\0' || v.p[1u + i] != s[i] || s[i] == '\\') return 0;
  }
  return s[i] == '\0';
}

int32_t tm_json_str(tm_span v, char *buf, uint32_t cap, int32_t lossy) {
  uint32_t i, n = 0;
  if (cap == 0u || v.n < 2u || v.p[0] != '"') return -1;
  for (i = 1; i + 1u < v.n; i++) {
    char c = v.p[i];
    if (c == '\\' || (unsigned char)c < 0x20u || (unsigned char)c > 0x7eu) {
      if (!lossy) return -1;
      if (c == '\\') i += v.p[i + 1u] == 'u' ? 5u : 1u;
      c = '?';
    }
    if (n + 1u >= cap) {
      if (!lossy) return -1;
      break;
    }
    buf[n++] = c;
  }
  buf[n] = '\0';
  return (int32_t)n;
}

/* ---- writing ---- */

void tm_buf_init(tm_buf *b, uint8_t *p, uint32_t cap) {
  b->p = p;
  b->len = 0;
  b->cap = cap;
  b->overflow = 0;
}

void tm_buf_bytes(tm_buf *b, const uint8_t *data, uint32_t n) {
  if (n > b->cap - b->len) {
    b->overflow = 1;
    return;
  }
  tm_copy(b->p + b->len, data, n);
  b->len += n;
}

void tm_buf_str(tm_buf *b, const char *s) { tm_buf_bytes(b, (const uint8_t *)s, tm_strlen(s)); }

void tm_buf_char(tm_buf *b, char c) {
  const uint8_t byte = (uint8_t)c;
  tm_buf_bytes(b, &byte, 1);
}

void tm_buf_u64(tm_buf *b, uint64_t v) {
  char digits[20];
  uint32_t n = 0;
  do {
    digits[n++] = (char)('0' + (char)(v % 10u));
    v /= 10u;
  } while (v != 0u);
  while (n > 0u) tm_buf_char(b, digits[--n]);
}

void tm_buf_i64(tm_buf *b, int64_t v) {
  if (v < 0) {
    tm_buf_char(b, '-');
    tm_buf_u64(b, (uint64_t)0 - (uint64_t)v);
  } else {
    tm_buf_u64(b, (uint64_t)v);
  }
}

void tm_buf_hex(tm_buf *b, const uint8_t *data, uint32_t n) {
  static const char digits[] = "0123456789abcdef";
  uint32_t i;
  for (i = 0; i < n; i++) {
    tm_buf_char(b, digits[data[i] >> 4]);
    tm_buf_char(b, digits[data[i] & 15u]);
  }
}

void tm_buf_json_str(tm_buf *b, const char *s) {
  static const char digits[] = "0123456789abcdef";
  tm_buf_char(b, '"');
  for (; *s; s++) {
    const unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      tm_buf_char(b, '\\');
      tm_buf_char(b, (char)c);
    } else if (c < 0x20u) {
      tm_buf_str(b, "\\u00");
      tm_buf_char(b, digits[c >> 4]);
      tm_buf_char(b, digits[c & 15u]);
    } else {
      tm_buf_char(b, (char)c);
    }
  }
  tm_buf_char(b, '"');
}

uint32_t tm_strlen(const char *s) {
  uint32_t n = 0;
  while (s[n]) n++;
  return n;
}

int32_t tm_streq(const char *a, const char *b) {
  while (*a && *a == *b) {
    a++;
    b++;
  }
  return *a == *b;
}

void tm_copy(void *dst, const void *src, uint32_t n) {
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  while (n-- > 0u) *d++ = *s++;
}

void tm_zero(void *dst, uint32_t n) {
  uint8_t *d = (uint8_t *)dst;
  while (n-- > 0u) *d++ = 0;
}

void tm_hex_encode(const uint8_t *data, uint32_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  uint32_t i;
  for (i = 0; i < n; i++) {
    out[2u * i] = digits[data[i] >> 4];
    out[2u * i + 1u] = digits[data[i] & 15u];
  }
  out[2u * n] = '\0';
}
