#pragma once
// Where policies come from: the core defines what a policy is (policy.hpp), policies/ defines
// the data format and its parser. The format's reader is installed once at start-up, as
// transports are (wheelfit::policies::register_format(), called by the wheelfit executable, the C
// API library and embedders); the registry's make_policy reads a backend's built-in policy and a
// --policy file through it. Without a reader, reading a policy is Errc::unsupported, saying which
// call installs one.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::semantics {

/// Reads a policy document's text. `source` names it in errors; `rules` validates and
/// canonicalises the target lists (nullptr: kept as written).
using FormatReader = Expected<Policy> (*)(std::string_view text, std::string_view source,
                                          std::shared_ptr<const DeviceRules> rules);

/// Installs the process's policy reader. Installing the same reader again is a no-op; another
/// reader is refused (Errc::invalid_input), so two formats never race for one process.
/// Thread-safe.
Expected<void> install_reader(FormatReader reader);

/// Reads `text` with the installed reader.
Expected<Policy> read(std::string_view text, std::string_view source, std::shared_ptr<const DeviceRules> rules);

/// The largest policy file read (16 MiB).
inline constexpr std::size_t kMaxFileBytes = 16u << 20;

/// Reads the policy file at `path` (at most kMaxFileBytes; a FIFO, a folder or a missing file is an
/// error naming the path) with the installed reader.
Expected<Policy> read_file(const std::string& path, std::shared_ptr<const DeviceRules> rules);

}  // namespace wheelfit::semantics
