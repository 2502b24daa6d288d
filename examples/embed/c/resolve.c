/* The C API from C: reads one request (JSON) from a file, or from the first argument when it
 * begins with '{', hands it to wheelfit_resolve_json, prints the result object and exits with the
 * code the CLI would. Built three ways in CI: with `pkg-config --cflags --libs wheelfit` against
 * the unpacked Debian packages (scripts/check_packages.sh), and with CMake against
 * wheelfit::capi, installed and as a subproject (examples/embed/cpp, scripts/embed_example.sh).
 *
 *   wheelfit_resolve_c REQUEST.json | '{"configs": [...], "index": "...", "machine": {...}}'
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wheelfit/wheelfit.h>

/* The whole of `path` as a NUL-terminated string (NULL, with a message, when it cannot be read). */
static char* read_all(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return NULL;
  }
  size_t size = 0, cap = 4096;
  char* text = malloc(cap);
  size_t n;
  while (text && (n = fread(text + size, 1, cap - size - 1, f)) > 0) {
    size += n;
    if (cap - size - 1 == 0) {
      char* bigger = realloc(text, cap *= 2);
      if (!bigger) free(text);
      text = bigger;
    }
  }
  int failed = ferror(f);
  fclose(f);
  if (!text || failed) {
    fprintf(stderr, "%s: cannot be read\n", path);
    free(text);
    return NULL;
  }
  text[size] = '\0';
  return text;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s REQUEST.json | '{...}'   (wheelfit %s)\n", argv[0], wheelfit_version());
    return 2;
  }
  char* request = argv[1][0] == '{' ? strdup(argv[1]) : read_all(argv[1]);
  if (!request) return 2;
  char* result = NULL;
  const int code = wheelfit_resolve_json(request, &result);
  free(request);
  if (!result) {
    fprintf(stderr, "wheelfit_resolve_json: out of memory\n");
    return 70;
  }
  printf("%s\n", result);
  wheelfit_free(result);
  return code;
}
