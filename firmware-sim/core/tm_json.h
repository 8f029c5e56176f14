/*
 * tm_json.h: the JSON the board reads and writes, without allocation or a token array.
 *
 * Reading: a value is found by a path of member names ("block.coord.q") with one linear scan
 * of the text; everything skipped on the way is checked (strings, numbers, literals, nesting up
 * to TM_JSON_MAX_DEPTH), so a malformed answer is refused, never read past its end. Arrays are
 * walked with an iterator. Values come out as spans of the original text, converted on demand
 * (integers, lowercase hex, strings without escapes).
 *
 * Writing: a bounded buffer (tm_buf) that remembers an overflow instead of writing past its
 * capacity; the caller checks `overflow` once at the end.
 */
#ifndef TM_JSON_H
#define TM_JSON_H

#include <stdint.h>

#define TM_JSON_MAX_DEPTH 16u

/* Value types (a negative value is an error, 0 a missing member). */
#define TM_JSON_MALFORMED (-1)
#define TM_JSON_MISSING 0
#define TM_JSON_STRING 1
#define TM_JSON_NUMBER 2
#define TM_JSON_OBJECT 3
#define TM_JSON_ARRAY 4
#define TM_JSON_TRUE 5
#define TM_JSON_FALSE 6
#define TM_JSON_NULL 7

/* A slice of the text: a whole value, quotes and brackets included. */
typedef struct {
  const char *p;
  uint32_t n;
} tm_span;

/*
 * The value at `path` (member names separated by '.') inside the JSON value `doc`; an empty path
 * is `doc` itself. Returns its type and sets *out, TM_JSON_MISSING when a member is absent (or a
 * step is not an object), TM_JSON_MALFORMED when the text is not JSON. The whole document is
 * checked, not only the part before the member.
 */
int32_t tm_json_get(tm_span doc, const char *path, tm_span *out);

/* The type of a span's value (its first character), TM_JSON_MALFORMED if none. */
int32_t tm_json_type(tm_span v);

/* Walks the elements of an array: init with the array span, then next until it returns 0. */
typedef struct {
  const char *p, *end;
  int32_t started;
} tm_json_iter;
void tm_json_iter_init(tm_json_iter *it, tm_span array);
/* The next element's type (its span in *out), 0 after the last, TM_JSON_MALFORMED on bad text. */
int32_t tm_json_iter_next(tm_json_iter *it, tm_span *out);

/* An integer in [0, max] written without sign, fraction, exponent or leading zeros. 1 or 0. */
int32_t tm_json_u64(tm_span v, uint64_t max, uint64_t *out);
/* An integer in [min, max] (optional '-'). 1 or 0. */
int32_t tm_json_i64(tm_span v, int64_t min, int64_t max, int64_t *out);
/* A string of exactly 2 n lowercase hex digits, decoded into out[n]. 1 or 0. */
int32_t tm_json_hex(tm_span v, uint8_t *out, uint32_t n);
/* 1 when v is the string `s` (no escapes in either). */
int32_t tm_json_str_eq(tm_span v, const char *s);
/*
 * A string's contents into buf (NUL-terminated): strict (1 or 0) when `lossy` is 0, which
 * refuses escapes and characters outside printable ASCII; with `lossy` 1 (for log text) escapes
 * and other bytes become '?' and the text is cut to fit. Returns the length or -1.
 */
int32_t tm_json_str(tm_span v, char *buf, uint32_t cap, int32_t lossy);

/* ---- writing ---- */

typedef struct {
  uint8_t *p;
  uint32_t len, cap;
  int32_t overflow; /* set when anything did not fit */
} tm_buf;

void tm_buf_init(tm_buf *b, uint8_t *p, uint32_t cap);
void tm_buf_bytes(tm_buf *b, const uint8_t *data, uint32_t n);
void tm_buf_str(tm_buf *b, const char *s);
void tm_buf_char(tm_buf *b, char c);
void tm_buf_u64(tm_buf *b, uint64_t v);
void tm_buf_i64(tm_buf *b, int64_t v);
void tm_buf_hex(tm_buf *b, const uint8_t *data, uint32_t n);
/* A JSON string literal: quotes, and escapes for '"', '\\' and control characters. */
void tm_buf_json_str(tm_buf *b, const char *s);

/* Small helpers shared by the network code (the core links no C library). */
uint32_t tm_strlen(const char *s);
int32_t tm_streq(const char *a, const char *b);
void tm_copy(void *dst, const void *src, uint32_t n);
void tm_zero(void *dst, uint32_t n);
/* Lowercase hex of n bytes into out (2 n characters and a NUL). */
void tm_hex_encode(const uint8_t *data, uint32_t n, char *out);

#endif
