/*
 * tm_selftest.h: a known-answer self-test of the core, for a board to run at start-up or when
 * a host asks (the worked examples of docs/protocol.md 3.8 and 4.10, and FIPS 180-4 "abc").
 *
 * Memory: the caller's scratch (at least TM_SELFTEST_SCRATCH_WORDS words) and an input buffer
 * of at least TM_SELFTEST_INPUT_BYTES bytes; under 1 KiB of stack.
 */
#ifndef TM_SELFTEST_H
#define TM_SELFTEST_H

#include <stdint.h>

#include "tm_tensor.h"

#define TM_SELFTEST_SCRATCH_WORDS TM_SCRATCH_WORDS_MATMUL(16u)
#define TM_SELFTEST_INPUT_BYTES 256u

/*
 * Returns TM_OK, or the number (1..9) of the first check that failed, or TM_ERR_SCRATCH.
 *   1 SHA-256("abc")  2 X and path target of the 3.8 challenge  3..5 nonce 0 of 3.8
 *   6 the 3.8 search finds nonce 7 after 8 iterations  7 its computation hash
 *   8 the 4.10 block search finds nonce 47  9 its pow hash
 */
int32_t tm_self_test(const tm_scratch *scratch, int8_t *input_buffer);

#endif
