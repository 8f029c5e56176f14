/*
 * tm_vector_cmd.h: one command line of the vector driver in, exactly one answer line out
 * (`error <reason>` when a line cannot be handled). Fields are separated by single spaces;
 * byte strings are lowercase hex, integers decimal. Operations: matmul | conv; activations:
 * relu | sigmoid | tanh. A task is: <op> <act> <N> <F> <challenge_hash> <input_hex> <path_target>
 * (input_hex may be "-" to derive X from the challenge hash).
 *
 *   sha256 <hex>                          -> <digest>
 *   sha512 <hex>                          -> <digest>  (an empty message: no argument, as for sha256)
 *   ed25519_public <seed>                 -> <public key>
 *   ed25519_sign <seed> [<message hex>]   -> <public key> <signature>
 *   ed25519_verify <public key> <signature> [<message hex>] -> 1 | 0
 *   request_sign <seed> <method> <path> <body hex | -> <timestamp ms> <nonce>
 *                                         -> the four x-tm-* header lines, each ended by ';'
 *   submission_sign <seed> <challenge_id> <header>  -> <signature>  (PTM41/submit)
 *   notify_verify <node key> <signature> <body hex> -> 1 | 0   (PTM41/notify, protocol 4.17)
 *   json <path | .> <text hex>            -> <type> [<value text hex>]  (tm_json_get; type < 1: none)
 *   http_date <text hex>                  -> Unix seconds (0: not an IMF-fixdate)
 *   input <challenge_hash> <N>            -> <X hex>          (expand of taggedHash("PTM4/input", hash))
 *   path_target <challenge_hash>          -> <8 bytes hex>
 *   act <a>                               -> <relu> <sigmoid> <tanh>
 *   normalize <z,z,...>                   -> <out,out,...>
 *   mml <bitmap_hex> <count>              -> <score_q16>
 *   work <task> <pubkey> <nonce>          -> <seed> <result_hash> <mml_q16> <path_sig> <distance> <computation_hash> <acc_hash>
 *   search <task> <pubkey> <start> <count> <mml_threshold_q16> <path_distance_max>
 *                                         -> found <nonce> <iterations> <seed> <result_hash> <mml> <path> <distance> <computation>
 *                                            | not_found <iterations>
 *   crosscheck <task> <pubkey> <start> <count>
 *                                         -> ok <count>  (the search shortcut agrees with the full work for every nonce)
 *   header <q> <r> <s> <challenge_hash> <pubkey> <nonce> -> <header> <pow_hash> <block_hash>
 *   meets <hash> <target>                 -> 1 | 0
 *   search_block <header_prefix_80_bytes> <target> <start> <count>
 *                                         -> found <nonce> <iterations> <pow_hash> | not_found <iterations>
 *   search_block_port <same fields>       -> the same, through tm_search_block_port (core/tm_sha_port.h)
 *                                            with a software port that must be called once per nonce
 *   version                               -> <core version>
 */
#ifndef TM_VECTOR_CMD_H
#define TM_VECTOR_CMD_H

#include <stdint.h>

/* The longest command line, newline included (the host driver's sha256 of 100,003 bytes). */
#ifndef TM_VECTOR_LINE_MAX
#define TM_VECTOR_LINE_MAX (1u << 18)
#endif

/* Runs one command (the line is modified: split in place) and writes its answer, without a
 * newline, NUL-terminated, truncated to answer_cap - 1 characters. */
void tm_vector_line(char *line, char *answer, uint32_t answer_cap);

#endif
