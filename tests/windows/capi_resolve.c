/* A C program built with MinGW calling wheelfit.dll (through its import library): resolves one
 * package of a local index for an H100 machine and checks the answer. Usage:
 * capi_resolve INDEX_DIR PACKAGE; exit 0 when the result names cu12.8/torch2.8 and a wheel of PACKAGE. */
#include <stdio.h>
#include <string.h>

#include "wheelfit/wheelfit.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_resolve INDEX_DIR PACKAGE\n");
    return 2;
  }
  char request[4096];
  char index[2048];
  size_t j = 0;
  for (const char* c = argv[1]; *c && j + 2 < sizeof index; ++c) { /* a JSON string: '\' doubled */
    if (*c == '\\') index[j++] = '\\';
    index[j++] = *c;
  }
  index[j] = '\0';
  snprintf(request, sizeof request,
           "{\"envs\": [{\"name\": \"c\", \"python\": \"3.12\", \"packages\": [\"%s\"]}], \"index\": \"%s\", "
           "\"no_cache\": true, \"machine\": {\"os\": \"linux\", \"cpu_arch\": \"x86_64\", \"glibc\": \"2.35\", "
           "\"python\": \"3.12\", \"torch\": \"2.8.0+cu128\", \"backend\": \"cuda\", \"driver_version\": \"580.65.06\", "
           "\"cuda_driver\": \"13.0\", \"gpus\": [\"9.0\"]}}",
           argv[2], index);
  char* result = NULL;
  const int code = wheelfit_resolve_json(request, &result);
  printf("wheelfit %s: exit %d\n%s\n", wheelfit_version(), code, result ? result : "(null)");
  const int ok = code == 0 && result != NULL && strstr(result, "\"cuda\":\"12.8\"") != NULL &&
                 strstr(result, "\"torch\":\"2.8\"") != NULL && strstr(result, ".whl") != NULL;
  wheelfit_free(result);
  char* bad = NULL;
  const int refused = wheelfit_resolve_json("{\"nope\": 1}", &bad);
  const int named = refused == 2 && bad != NULL && strstr(bad, "nope") != NULL;
  printf("a bad request: exit %d %s\n", refused, bad ? bad : "(null)");
  wheelfit_free(bad);
  return ok && named ? 0 : 1;
}
