/* tm-selftest: runs the core's known-answer self-test on the host (`make test`). */
#include <stdio.h>

#include "../core/tm_core.h"
#include "../core/tm_selftest.h"

static int32_t words[TM_SELFTEST_SCRATCH_WORDS];
static int8_t input[TM_SELFTEST_INPUT_BYTES];

int main(void) {
  const tm_scratch scratch = {words, TM_SELFTEST_SCRATCH_WORDS};
  const int32_t rc = tm_self_test(&scratch, input);
  if (rc != TM_OK) {
    printf("tm-selftest: core %s FAILED at check %ld\n", TM_CORE_VERSION_STRING, (long)rc);
    return 1;
  }
  printf("tm-selftest: core %s ok (SHA-256, v4.0 worked example 3.8, v4.1 worked example 4.10)\n",
         TM_CORE_VERSION_STRING);
  return 0;
}
