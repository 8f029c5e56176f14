/*
 * tm_core.h: version and limits of the tensormine C mining core.
 *
 * The core is portable C99: fixed-width integers only (<stdint.h>), no floating point, no
 * dynamic allocation, no I/O, no platform-specific code. Every multi-byte integer that is
 * hashed is written byte by byte in little-endian order (big-endian only where SHA-256 and the
 * hexchain target comparison require it), so the result does not depend on the host's
 * endianness. The consensus it implements is docs/protocol.md, sections 1, 3 and 4.
 */
#ifndef TM_CORE_H
#define TM_CORE_H

#include <stdint.h>

#define TM_CORE_VERSION_MAJOR 0
#define TM_CORE_VERSION_MINOR 1
#define TM_CORE_VERSION_PATCH 0
#define TM_CORE_VERSION_STRING "0.1.0"

/* Protocol versions implemented. */
#define TM_PROTOCOL_TENSOR "4.0"
#define TM_PROTOCOL_HEXCHAIN "4.1"

/* v4.0 tensor limits (docs/protocol.md 3.1). */
#define TM_MIN_TENSOR_DIM 4u
#define TM_MAX_TENSOR_DIM 64u
#define TM_MAX_CONV_FILTERS 8u

/* The largest nonce of either protocol: 2^53 - 1 (exact as a JSON number). */
#define TM_MAX_NONCE UINT64_C(9007199254740991)

/* Return codes shared by every entry point. Searches return TM_FOUND or TM_NOT_FOUND. */
#define TM_OK 0
#define TM_FOUND 1
#define TM_NOT_FOUND 0
#define TM_ERR_ARGUMENT (-1) /* a parameter is outside its documented range */
#define TM_ERR_SCRATCH (-2)  /* the caller's scratch buffer is too small */
#define TM_ERR_NONCE (-3)    /* a nonce above TM_MAX_NONCE */
#define TM_ERR_INTERNAL (-4) /* a self-check failed (never expected) */

#endif
