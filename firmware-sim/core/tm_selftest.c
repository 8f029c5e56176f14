/* tm_selftest.c: known answers from docs/protocol.md and FIPS 180-4. */
#include "tm_selftest.h"

#include "sha256.h"
#include "tm_hexchain.h"

static int32_t hex_equal(const uint8_t *bytes, const char *hex, uint32_t n) {
  uint32_t i;
  for (i = 0; i < n; i++) {
    const char h = hex[2 * i], l = hex[2 * i + 1];
    const uint32_t hv = (uint32_t)(h <= '9' ? h - '0' : h - 'a' + 10);
    const uint32_t lv = (uint32_t)(l <= '9' ? l - '0' : l - 'a' + 10);
    if (bytes[i] != (uint8_t)(hv * 16 + lv)) return 0;
  }
  return 1;
}

static void from_hex(const char *hex, uint8_t *out, uint32_t n) {
  uint32_t i;
  for (i = 0; i < n; i++) {
    const char h = hex[2 * i], l = hex[2 * i + 1];
    out[i] = (uint8_t)((uint32_t)(h <= '9' ? h - '0' : h - 'a' + 10) * 16 + (uint32_t)(l <= '9' ? l - '0' : l - 'a' + 10));
  }
}

int32_t tm_self_test(const tm_scratch *scratch, int8_t *input_buffer) {
  static const uint8_t abc[3] = {0x61, 0x62, 0x63};
  uint8_t digest[32], hash[32], key[32], prefix[88];
  tm_task task;
  tm_work_result work;
  tm_tensor_solution solution;
  tm_block_solution block;
  tm_thresholds thresholds;

  if (scratch == 0 || scratch->n_words < TM_SELFTEST_SCRATCH_WORDS) return TM_ERR_SCRATCH;

  tm_sha256(abc, 3, digest);
  if (!hex_equal(digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 32)) return 1;

  /* 3.8: esp8266 matmul relu, N = 16, difficulty 3 */
  from_hex("85fda3817c1614f068a9a0373637de357855f1394964a626a507a3d7f2e27b21", hash, 32);
  from_hex("4640a09fb16ad51274818d3c667bc58d229c4093d2e2173a0e8d537bb5960fe0", key, 32);
  if (tm_task_init(&task, hash, TM_OP_MATMUL, TM_ACT_RELU, 16, 0, input_buffer) != TM_OK) return 2;
  if (!hex_equal((const uint8_t *)input_buffer, "f191207b7b0d802332ee2da00ca838fb00dc1423b114b80de75a7353aab263aa", 32) ||
      !hex_equal(task.path_target, "4972e795191dbe5d", 8))
    return 2;
  if (tm_compute_work(&task, key, 0, scratch, &work) != TM_OK) return 3;
  if (!hex_equal(work.tensor_result_hash, "54a247bc8f1631485590e8366942361296d5acafedfa2b01bf2be8967aec0fd4", 32))
    return 3;
  if (work.mml_score_q16 != 65536 || work.path_distance != 27 || !hex_equal(work.path_signature, "4858d4f12b696252", 8))
    return 4;
  if (!hex_equal(work.computation_hash, "452a995765091bf39db65bbac6cd9279010a60b9988bff8269171baf04b568f5", 32))
    return 5;
  thresholds.mml_threshold_q16 = 65536;
  thresholds.path_distance_max = 29;
  if (tm_search_tensor(&task, key, 1, 100, &thresholds, scratch, &solution) != TM_FOUND || solution.nonce != 4 ||
      solution.iterations != 4)
    return 6;
  if (!hex_equal(solution.work.computation_hash, "1f6365301a1301568f3f51c3d10b62afba9e8429abeefcacc8763cbd5e567c57",
                 32))
    return 7;

  /* 4.10: the first block of the chain, D = 16 */
  from_hex("295db96cc34fbc43b84954ba4b79c063719648419e45a7ff380a80fad932158c", hash, 32);
  from_hex("8b463259be576f09398f2dd84a8556812662610b274dd3c783ef0451a26dd837", key, 32);
  if (tm_hex_encode_header(0, -1, 1, hash, key, 0, prefix) != TM_OK) return 8;
  from_hex("0fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", hash, 32);
  if (tm_search_block(prefix, hash, 0, 1000, &block) != TM_FOUND || block.nonce != 47 || block.iterations != 48)
    return 8;
  if (!hex_equal(block.pow_hash, "02053b00db818af8af8bef78d477e528bdad913f42a00d5451af4a4570d346f5", 32)) return 9;
  return TM_OK;
}
