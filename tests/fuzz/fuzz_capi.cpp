// libFuzzer target: the C API's request parser (capi/request.hpp), the one parser of outside
// input that reads the option table. The first byte picks the request ('0' resolve, '1' explain,
// '2' detect, '3' doctor: its value mod 4), the rest is the JSON request. Besides "no crash": a
// request the parser refuses says so with a BadRequest naming "request" (any other exception
// would be an internal error of the C API, exit 70); a resolve it takes has configs or envs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "capi/request.hpp"

namespace capi = wheelfit::capi;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned which = data[0] % 4;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  boost::json::error_code ec;
  const boost::json::value doc = boost::json::parse(text, ec);
  if (ec) return 0;
  try {
    capi::refuse_nul_bytes(doc, "");
    if (which == 0) {
      std::optional<std::vector<wheelfit::api::FleetMachine>> fleet;
      const auto r = capi::resolve_request_of(doc, fleet);
      if (r.configs.empty() && r.envs.empty()) {
        std::fprintf(stderr, "a resolve request without configs or envs was taken\n");
        std::abort();
      }
    } else if (which == 1) {
      (void)capi::explain_request_of(doc);
    } else if (which == 2) {
      (void)capi::detect_request_of(doc);
    } else {
      (void)capi::doctor_request_of(doc);
    }
  } catch (const capi::BadRequest& e) {
    if (std::string_view(e.message).substr(0, 7) != "request") {
      std::fprintf(stderr, "a refusal that does not name the request: %s\n", e.message.c_str());
      std::abort();
    }
  }
  return 0;
}
