#pragma once
// What every result of the façade (wheelfit/api.hpp) is made with: a failed call's exit code and
// error, and a streamed result's text collected. For the façade's own calls, and for an
// embedder's command built the same way.
#include <string>
#include <string_view>

#include "wheelfit/api/exit_codes.hpp"
#include "wheelfit/util/expected.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::api::detail {

/// `r` as a failed call: the exit code and an Error (Errc::unsupported for "no index", exit code
/// 3, else invalid_input) with `message`, redacted (util::redact: whatever it quotes, no secret).
template <class Result>
Result failed(Result r, int code, const std::string& message) {
  r.exit_code = code;
  r.error = Error(code == kExitNoIndex ? Errc::unsupported : Errc::invalid_input, util::redact(message));
  return r;
}

/// What `write` gives its sink, as one string (json() and report() of a result that streams).
template <class Write>
std::string collected(const Write& write) {
  std::string out;
  write([&out](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace wheelfit::api::detail
