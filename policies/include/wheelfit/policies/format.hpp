#pragma once
// The policy data format (format 2, policies/README.md) and its parser, built on the core's
// policy types (wheelfit/semantics/policy.hpp). Nothing in the core includes this header: the core
// reads policies through the reader register_format() installs (wheelfit/semantics/reader.hpp).

#include <memory>
#include <string>
#include <string_view>

#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::policies {

/// Installs parse_policy_json as the process's policy reader (semantics::install_reader). Call it
/// once at start-up, beside transports::register_transports; calling it again is harmless.
Expected<void> register_format();

/// Parses a policy file (format 2, policies/README.md). `rules` validates and canonicalises
/// every target list (nullptr: lists are kept as written). Errors (Errc::invalid_input) name
/// `source` and the JSON path; a format other than 2 is Errc::unsupported.
Expected<semantics::Policy> parse_policy_json(std::string_view text, std::string_view source,
                                           std::shared_ptr<const semantics::DeviceRules> rules);
/// Reads and parses a policy file (Errc::not_found / io_error / too_large name the path).
Expected<semantics::Policy> load_policy_file(const std::string& path, std::shared_ptr<const semantics::DeviceRules> rules);

}  // namespace wheelfit::policies
