#pragma once
// The option table (docs/decisions/0038): every option of the CLI and every key of the C API's
// JSON requests as one row: its flag and short form, its JSON key, the environment variable the
// CLI falls back to, the kind and range of its value, which commands take it, its lines of the
// usage text, what the bash completion offers after it, and how it sets the request. The CLI's
// parser (apps/wheelfit), the C API's request parser (capi/), the usage text and the completion's
// test all read this table; nothing else lists options.
//
// Thread safety: the table is immutable; every function here may be called from any thread.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/options.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::api {
struct ResolveRequest;
}

namespace wheelfit::api::options {

/// The commands (CLI) and requests (C API) an option belongs to, as bits.
enum Command : unsigned {
  kResolve = 1u << 0,
  kDownload = 1u << 1,
  kMirror = 1u << 2,
  kExplain = 1u << 3,
  kDoctor = 1u << 4,
  kDetect = 1u << 5,
  kCache = 1u << 6,
  kPlugins = 1u << 7,
  kCheck = 1u << 8,
};
/// The options resolve shares with download and mirror.
inline constexpr unsigned kResolveFamily = kResolve | kDownload | kMirror;

/// What an option's value is. A switch takes none (JSON: true or false); `structured` is a
/// C API key whose value the request parser reads itself (a machine profile, an array).
enum class Kind {
  toggle,      ///< a switch: --json, "offline": true
  text,        ///< free text: a URL, a name, a combo
  file,        ///< a path that must not be empty (`empty_hint` says what to give)
  number,      ///< a whole number in [lo, hi]
  size,        ///< a size: 500M, 1GiB (util::parse_size)
  line,        ///< one non-empty line without control characters (a header's value)
  proxy_auth,  ///< auto, basic, negotiate or none (Parsers::proxy_auth)
  host_list,   ///< HOST[:PORT][,...] (Parsers::host_list)
  structured,  ///< C API only: read by the request parser itself
};

/// What the bash completion offers after the option.
enum class Complete { nothing, files, dirs, words };

/// The sections of the usage text, in the order they are printed.
enum class Section { none, resolve, network, detect, explain, doctor, download, mirror, cache, resolve_more };

/// One part of an option's usage: its lines in a section, exactly as printed (each ends in "\n").
struct Help {
  Section section = Section::none;
  std::string_view text{};
};

/// A value read and checked against its row's kind.
struct Value {
  std::string text;  ///< the text given (text, file, line kinds)
  long number = 0;
  bool on = false;
  std::uint64_t size = 0;
  net::ProxyAuth proxy_auth = net::ProxyAuth::automatic;
  std::vector<std::string> hosts;
};

/// The parsers of the transports the table needs and the core does not have; the caller passes
/// wheelfit::transports' own (parse_proxy_auth, parse_host_list). Each names `source` in its error.
struct Parsers {
  Expected<net::ProxyAuth> (*proxy_auth)(std::string_view text, std::string_view source) = nullptr;
  Expected<std::vector<std::string>> (*host_list)(std::string_view text, std::string_view source) = nullptr;
};

/// One option.
struct Option {
  std::string_view flag{};  ///< "--retries"; "" for a C API key that has no flag
  std::string_view alias{};  ///< "-o"; "" when none
  std::string_view json_key{};  ///< "retries"; "" when the C API does not take it
  std::string_view env{};  ///< the environment variable that stands for it (README); ""
  bool cli_reads_env = false;  ///< the CLI reads `env` itself when the flag is not given
  Kind kind = Kind::text;
  long lo = 0, hi = 0;  ///< a number's range
  unsigned commands = 0;  ///< the CLI commands taking the flag (Command bits)
  unsigned requests = 0;  ///< the C API requests taking the key (Command bits)
  /// The commands where the flag may be given several times (--machine A --machine B).
  unsigned repeatable = 0;
  std::string_view empty_hint{};  ///< a file's "give ..." when it is empty (the CLI's message)
  Complete complete = Complete::nothing;
  std::string_view words{};  ///< Complete::words: what is offered
  std::array<Help, 5> help{};  ///< its lines of the usage text, per section
  /// Sets the network options from the value (nullptr: not a network option). `source` is the
  /// flag, the variable or "request.<key>": what the options record as the value's origin.
  void (*network)(net::HttpOptions&, Value&, std::string_view source) = nullptr;
  /// Sets a resolve request (resolve, download, mirror) from the value (nullptr: none).
  void (*resolve)(ResolveRequest&, Value&) = nullptr;
};

/// Every option, in the order of the usage text (and the order the CLI applies them in).
[[nodiscard]] std::span<const Option> table() noexcept;

/// The row of `flag` (its long form or its alias), or nullptr.
[[nodiscard]] const Option* find_flag(std::string_view flag) noexcept;
/// The row of the C API key `key` taken by `request` (a Command bit), or nullptr.
[[nodiscard]] const Option* find_key(std::string_view key, unsigned request) noexcept;

/// Reads `text` as the value of `row` (any kind but toggle, number and structured: the CLI and
/// the C API read those themselves, each with its own message). The error (Errc::usage) names
/// `source` ("--cache-max-size: ...", "request.proxy_auth: ...").
[[nodiscard]] Expected<Value> parse_text(const Option& row, std::string text, std::string_view source, const Parsers& parsers);

/// The text `wheelfit --help` prints: the command list, then each section's lines from the rows,
/// then the notes and the exit codes.
[[nodiscard]] std::string usage();

}  // namespace wheelfit::api::options
