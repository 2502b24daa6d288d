#pragma once
// Shared by the wheelfit subcommands: exit codes, argument parsing, error output.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace wheelfit::cli {

// Exit codes (README "Exit codes").
constexpr int kOk = 0, kUnresolved = 1, kBadInput = 2, kNoIndex = 3, kInternal = 70;

/// A usage mistake: reported with exit code 2.
struct UsageError {
  std::string message;
};

/// Parsed arguments: `--flag VALUE` / `--flag=VALUE` for value flags, bare switches, positionals.
struct Args {
  std::map<std::string, std::string, std::less<>> values;
  std::set<std::string, std::less<>> switches;
  std::vector<std::string> positional;

  [[nodiscard]] std::optional<std::string> value(std::string_view flag) const;
  [[nodiscard]] bool has(std::string_view flag) const { return switches.count(flag) > 0; }
};

/// Throws UsageError for an unknown option, a missing value, or a flag given twice.
/// `aliases` maps short forms ("-o") to long ones ("--output"); "--" ends the options.
Args parse_args(const std::vector<std::string_view>& args, const std::set<std::string, std::less<>>& value_flags,
                const std::set<std::string, std::less<>>& switch_flags,
                const std::map<std::string, std::string, std::less<>>& aliases = {});

/// Prints "wheelfit: <message>" on stderr (and, with `json`, {"error": {...}} on stdout);
/// returns `code`.
int fail(bool json, int code, const std::string& message);

/// The process environment variable, if set.
std::optional<std::string> env(const char* name);

// The subcommands.
int run_resolve(const std::vector<std::string_view>& args);

}  // namespace wheelfit::cli
