/*
 * tm_native.h: the miner's native search kernels for x86-64 (SHA-NI and AVX2), beside the C
 * mining core whose definitions they share (core/sha256.h, core/tm_hexchain.h,
 * core/tm_tensor.h).
 *
 * The miner (packages/miner/src/kernels/native/) compiles these files together with the
 * core's sha256.c, tm_hexchain.c, tm_tensor.c and tm_selftest.c into one shared library with
 * the system's C compiler, on first use, into the user's cache, and calls it through an FFI.
 * Only the functions below are exported. The hot functions are compiled for
 * sse4.1 + ssse3 + sha + avx2 through function attributes, so the library loads on any
 * x86-64 CPU; tm_native_cpu_features says whether this one may call them.
 *
 * What they compute is the consensus of docs/protocol.md (3.3 and 4.7), the same as the core:
 *   - the hexchain scan is the inner loop of tm_search_block (one compression of the header's
 *     second block per nonce from the midstate of the first), on SHA-NI, several nonces
 *     interleaved; it returns candidates by the first digest word and the caller checks the
 *     whole hash, as the miner's other kernels do;
 *   - the tensor search is tm_search_tensor's per-nonce path (work seed from a midstate,
 *     weights, int8 multiply-accumulates, the accumulator fold and hash, normalisation, fired
 *     bitmap, path signature and distance, MML score), with SHA-256 on SHA-NI and the
 *     multiply-accumulates and the passes over the accumulators on AVX2.
 * The miner checks both against the protocol's vectors before it mines with them (its
 * self-test), and every nonce they find is checked again by the reference implementation.
 *
 * No global state: a tensor task lives in a caller-owned buffer (tm_native_tensor_bytes), so
 * any number of threads may call the library at once with buffers of their own.
 */
#ifndef TM_NATIVE_H
#define TM_NATIVE_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define TM_NATIVE_API __attribute__((visibility("default")))
#else
#define TM_NATIVE_API
#endif

/* The version of this interface; the miner refuses a library with another. */
#define TM_NATIVE_ABI 1

/* CPU features the kernels need (bits of tm_native_cpu_features). */
#define TM_NATIVE_SSSE3 1u
#define TM_NATIVE_SSE41 2u
#define TM_NATIVE_AVX 4u /* AVX with the YMM state enabled by the OS (XGETBV) */
#define TM_NATIVE_AVX2 8u
#define TM_NATIVE_SHA 16u
#define TM_NATIVE_ALL (TM_NATIVE_SSSE3 | TM_NATIVE_SSE41 | TM_NATIVE_AVX | TM_NATIVE_AVX2 | TM_NATIVE_SHA)

/* Hexchain scan parameters (13 words): the midstate h[0..7] of the header's first 64 bytes,
 * the block words 0..3 (header bytes 64..80, big-endian), and word 5 (the nonce's high 32
 * bits as little-endian bytes read big-endian). */
#define TM_NATIVE_HEX_PARAMS 13u

/* Tensor search results (tm_native_tensor_search out[]). */
#define TM_NATIVE_OUT_NONCE 0u      /* the solution, when TM_FOUND */
#define TM_NATIVE_OUT_ITERATIONS 1u /* nonces tried, the solution included */
#define TM_NATIVE_OUT_MML 2u        /* the solution's MML score, Q16 */
#define TM_NATIVE_OUT_DISTANCE 3u   /* the solution's path distance */
#define TM_NATIVE_OUT_WORDS 4u

/* tm_native_tensor_probe: the per-nonce fields, laid out in out[] as bytes. */
#define TM_NATIVE_PROBE_SEED 0u  /* work seed, 32 bytes */
#define TM_NATIVE_PROBE_ACC 32u  /* accumulator hash, 32 bytes */
#define TM_NATIVE_PROBE_PATH 64u /* path signature, 8 bytes */
#define TM_NATIVE_PROBE_MML 72u  /* MML score Q16, u32le */
#define TM_NATIVE_PROBE_DISTANCE 76u
#define TM_NATIVE_PROBE_BYTES 80u

TM_NATIVE_API int32_t tm_native_abi(void);

/* The features of TM_NATIVE_ALL this CPU has (CPUID and XGETBV). */
TM_NATIVE_API uint32_t tm_native_cpu_features(void);

/*
 * The core's known-answer test (tm_self_test) and the SHA-NI compression against the core's
 * portable one on fixed blocks: TM_OK, or the number of the first check that failed. Call it
 * only when tm_native_cpu_features() == TM_NATIVE_ALL.
 */
TM_NATIVE_API int32_t tm_native_self_test(void);

/*
 * The first lo in [lo_start, lo_start + count) whose pow hash's first word is <= t0
 * (unsigned), as an offset from lo_start, or -1. count <= 2^30 and lo_start + count <= 2^32.
 * The nonce is hi * 2^32 + lo, hi given by params[12].
 */
TM_NATIVE_API int32_t tm_native_hex_scan(const uint32_t params[13], uint32_t lo_start, uint32_t count, uint32_t t0);

/* The whole pow hash state (8 words, big-endian digest words) of nonce hi * 2^32 + lo. */
TM_NATIVE_API void tm_native_hex_hash(const uint32_t params[13], uint32_t lo, uint32_t out[8]);

/* The buffer a tensor task needs (0 when the shape is outside the protocol's ranges). */
TM_NATIVE_API uint32_t tm_native_tensor_bytes(uint32_t operation, uint32_t dim, uint32_t filters);

/*
 * Lays out a task in `state` (`bytes` from tm_native_tensor_bytes): the input X (dim * dim
 * int8, row-major), the path target, the key and the seed midstate. TM_OK, TM_ERR_ARGUMENT
 * or TM_ERR_SCRATCH.
 */
TM_NATIVE_API int32_t tm_native_tensor_init(void *state, uint32_t bytes, const uint8_t challenge_hash[32],
                                            const uint8_t pubkey[32], uint32_t operation, uint32_t dim,
                                            uint32_t filters, const int8_t *input, const uint8_t path_target[8]);

/*
 * Tries nonces start, start + 1, ..., at most `count` (never beyond 2^53 - 1), and stops at
 * the first whose path distance is <= distance_max and MML score <= mml_max_q16. TM_FOUND
 * (out[] holds the solution), TM_NOT_FOUND (out[TM_NATIVE_OUT_ITERATIONS] nonces tried),
 * TM_ERR_NONCE or TM_ERR_ARGUMENT (a state that tm_native_tensor_init did not lay out).
 */
TM_NATIVE_API int32_t tm_native_tensor_search(void *state, uint64_t start, uint64_t count, uint32_t mml_max_q16,
                                              int32_t distance_max, double out[4]);

/* One nonce's search fields (TM_NATIVE_PROBE_*), for the self-test against the vectors. */
TM_NATIVE_API int32_t tm_native_tensor_probe(void *state, uint64_t nonce, uint8_t out[80]);

#endif
