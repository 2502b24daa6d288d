// The option table's readers (wheelfit/api/options.hpp): look-ups, the values of the kinds the
// core reads, and the usage text built from the rows' help lines.
#include <algorithm>

#include "wheelfit/api/options.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::api::options {
namespace {

// The usage text before the sections: the commands.
constexpr std::string_view kUsageHead = R"(usage: wheelfit <command> [options]

commands:
  resolve [CONFIG...]   resolve each [cuda] package of the comfy-env.toml files for this machine
  plugins               list the backend plugins loaded and the files skipped (--json: one object)
  detect                print this machine's profile: each fact with the source that answered it
  explain WHEEL         the seven demands of one wheel (a .whl file, its URL, or a bare wheel file
                        name) from its name and its binaries, against this machine; or a library
                        (libtorch_cuda.so, torch_cuda.dll): its GPU archs, read by its headers
  doctor                every installed distribution with compiled modules: what will not run here
  cache info|prune|clean  the HTTP cache: what it holds; trim it to its size cap (least recently
                        used first); empty it
  download [CONFIG...] -d DIR   resolve, then fetch every picked wheel into DIR, sha256-verified
  mirror CONFIG... --out DIR    resolve a fleet and publish a static index of its wheels
  check LOCK...         each wheel a pixi.toml, requirements.txt or pylock.toml pins, checked
                        again: still listed with its sha256, not yanked, runs on this machine
                        (or --machine/--machines); the resolve options pick the index and network
  version               print the version

)";

// Each section's heading, in the order of Section (none has none).
constexpr std::string_view kHeadings[] = {
    "",
    "resolve options:\n",
    "network options (http(s) indexes; README \"Network\"):\n",
    "\ndetect options:\n",
    "\nexplain options:\n",
    "\ndoctor options:\n",
    "\ndownload options (and the resolve options: --index, --machine, --policy, --combo, network):\n",
    "\nmirror options (and the resolve options):\n",
    "\ncache options:\n",
    "\n",
};

// The usage text after the sections: the advice and the exit codes.
constexpr std::string_view kUsageTail = R"(When no tier covers every package, resolve prints advice: the combos the index publishes that
would (newest torch first), what to install for each, and with another Python; --json carries
all of them under "suggestions" (or "near_misses": the package that rules each combo out),
and under "advice" the combos set aside because their torch cannot run on the GPUs. When the
installed torch cannot run on the GPUs, the advice names the same version on a line that does
("advice": {"torch": {version, line, index, file, sha256, ...}}), resolved or not.

exit codes: 0 resolved, 1 no combo covers every package, 2 bad input or usage,
            3 the backend publishes no wheel index, 4 the index could not be read,
            5 a wheel could not be fetched or verified, 6 an output could not be written,
            70 internal error; check: 0 every locked wheel is ok, 1 one is yanked, gone,
            will not run or not checkable, 4 the index could not be read, 5 one is listed
            with another sha256
)";

// One non-empty line without control characters: what goes into a header line as it is (no
// CR/LF: a header injected).
bool one_line(std::string_view text) {
  return !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

Error usage_error(std::string_view source, std::string_view what) {
  return Error(Errc::usage, std::string(source) + ": " + std::string(what));
}

}  // namespace

const Option* find_flag(std::string_view flag) noexcept {
  if (flag.empty()) return nullptr;
  const auto rows = table();
  const auto it = std::find_if(rows.begin(), rows.end(), [flag](const Option& o) { return o.flag == flag || o.alias == flag; });
  return it == rows.end() ? nullptr : &*it;
}

const Option* find_key(std::string_view key, unsigned request) noexcept {
  if (key.empty()) return nullptr;
  const auto rows = table();
  const auto it = std::find_if(rows.begin(), rows.end(), [&](const Option& o) { return o.json_key == key && (o.requests & request); });
  return it == rows.end() ? nullptr : &*it;
}

Expected<Value> parse_text(const Option& row, std::string text, std::string_view source, const Parsers& parsers) {
  Value v;
  switch (row.kind) {
    case Kind::file:
      if (text.empty()) return usage_error(source, row.empty_hint);
      break;
    case Kind::line:
      if (!one_line(text)) return usage_error(source, "must be one non-empty line without control characters");
      break;
    case Kind::size: {
      auto size = util::parse_size(text);
      if (!size) return usage_error(source, size.error().message);
      v.size = *size;
      break;
    }
    case Kind::proxy_auth: {
      auto auth = parsers.proxy_auth(text, source);
      if (!auth) return auth.error();
      v.proxy_auth = *auth;
      break;
    }
    case Kind::host_list: {
      auto hosts = parsers.host_list(text, source);
      if (!hosts) return hosts.error();
      v.hosts = std::move(*hosts);
      break;
    }
    default:
      break;
  }
  v.text = std::move(text);
  return v;
}

std::string usage() {
  std::string out(kUsageHead);
  for (std::size_t s = 1; s < std::size(kHeadings); ++s) {
    out += kHeadings[s];
    for (const Option& row : table()) {
      for (const Help& h : row.help) {
        if (h.section == static_cast<Section>(s)) out += h.text;
      }
    }
  }
  out += kUsageTail;
  return out;
}

}  // namespace wheelfit::api::options
