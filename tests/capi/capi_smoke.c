/* Compiled as C: the header is plain C; validation runs without a GPU. */
#include <stdio.h>
#include <string.h>

#include "bandjit/bandjit.h"

int main(void) {
  const char* good = "{\"batch\":1,\"heads\":2,\"seq_len\":64,\"head_dim\":64,\"window_left\":4,"
                     "\"window_right\":4,\"dtype\":\"float16\"}";
  const char* bad = "{\"batch\":1,\"heads\":2,\"seq_len\":64,\"head_dim\":60,\"window_left\":4,"
                    "\"window_right\":4,\"dtype\":\"float16\"}";
  if (bandjit_validate_problem(good) != BANDJIT_OK) {
    fprintf(stderr, "valid problem refused: %s\n", bandjit_last_error());
    return 1;
  }
  if (bandjit_validate_problem(bad) != BANDJIT_ERROR_INVALID_PROBLEM || !strstr(bandjit_last_error(), "head_dim")) {
    fprintf(stderr, "head_dim 60 not refused by name: %s\n", bandjit_last_error());
    return 1;
  }
  printf("bandjit %s: C ABI ok\n", bandjit_version());
  return 0;
}
