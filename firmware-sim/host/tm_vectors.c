/*
 * tm-vectors: a line-oriented driver of the C core for the test vectors (host only).
 *
 * Reads one command per line on stdin and writes exactly one line per command on stdout;
 * the commands are those of tm_vector_cmd.h. Each answer is flushed at once: a program that
 * sends one command and waits for its answer (the network tests' block solver) gets it.
 */
#include <stdio.h>
#include <string.h>

#include "tm_vector_cmd.h"

static char line[TM_VECTOR_LINE_MAX];
static char answer[TM_VECTOR_LINE_MAX];

int main(void) {
  while (fgets(line, sizeof line, stdin)) {
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] != '\n' && !feof(stdin)) {
      int c;
      while ((c = getchar()) != EOF && c != '\n') {
      }
      puts("error line too long");
      continue;
    }
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    tm_vector_line(line, answer, sizeof answer);
    puts(answer);
    fflush(stdout);
  }
  return 0;
}
