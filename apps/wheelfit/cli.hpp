#pragma once
// Shared by the wheelfit subcommands: argument parsing (from the option table,
// wheelfit/api/options.hpp), error output. The exit codes are the library's (api::ExitCode).

#include <cstdint>
#include <iosfwd>
#include <map>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "wheelfit/api/options.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/transports/http_transport.hpp"
#include "wheelfit/util/expected.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::cli {

/// A usage mistake: reported with exit code 2.
struct UsageError {
  std::string message;
};

/// Parsed arguments: `--flag VALUE` / `--flag=VALUE` for value flags, bare switches, positionals.
/// A repeatable flag keeps every value, in order (`repeated`); `values` holds its first.
struct Args {
  std::map<std::string, std::string, std::less<>> values;
  std::map<std::string, std::vector<std::string>, std::less<>> repeated;
  std::set<std::string, std::less<>> switches;
  std::vector<std::string> positional;

  [[nodiscard]] std::optional<std::string> value(std::string_view flag) const;
  /// Every value of `flag` in the order given (empty when not given; one for a flag that does
  /// not repeat).
  [[nodiscard]] std::vector<std::string> values_of(std::string_view flag) const;
  [[nodiscard]] bool has(std::string_view flag) const { return switches.count(flag) > 0; }
};

/// Throws UsageError for an unknown option, a missing value, or a flag given twice that is not
/// in `repeatable` (value flags that may be given several times: `--machine A --machine B`).
/// `aliases` maps short forms ("-o") to long ones ("--output"); "--" ends the options.
Args parse_args(const std::vector<std::string_view>& args, const std::set<std::string, std::less<>>& value_flags,
                const std::set<std::string, std::less<>>& switch_flags,
                const std::map<std::string, std::string, std::less<>>& aliases = {},
                const std::set<std::string, std::less<>>& repeatable = {});

/// parse_args with the flags `command` takes in the option table (api::options::table()): its
/// value options, switches, short forms and repeatable options.
Args parse_args(const std::vector<std::string_view>& args, api::options::Command command);

/// `text` read as the value of `row` (a number in the row's range, or api::options::parse_text);
/// a UsageError naming `source` (the flag or the variable) otherwise.
api::options::Value cli_value(const api::options::Option& row, std::string text, std::string_view source);

/// Writes `text` to `os` as wheelfit prints everything on stdout and stderr: control characters
/// escaped (util::escape_controls, newlines and tabs kept), so that a name or message from the
/// network cannot drive the terminal. JSON passes unchanged (its serializer escapes them itself).
void show(std::ostream& os, std::string_view text);

/// A fleet's, a download's or a mirror's JSON or report, shown on stdout piece by piece as the
/// result writes it (write_json / write_report), never held whole.
template <class Result>
void write_out(const Result& result, bool json) {
  const auto to_stdout = [](std::string_view piece) { show(std::cout, piece); };
  if (json) result.write_json(to_stdout);
  else result.write_report(to_stdout);
}

/// Prints "wheelfit: <message>" on stderr (and, with `json`, {"error": {...}} on stdout);
/// returns `code`.
int fail(bool json, int code, const std::string& message);

/// A whole number in [lo, hi] for `flag`, or a UsageError naming the flag and the value.
long bounded_number(std::string_view flag, const std::string& value, long lo, long hi);

/// The network knobs of a command (README "Network"): the option table's network rows given on
/// the command line (--jobs, --retries, --timeout, ... when the command takes them), else their
/// variables the CLI reads (WHEELFIT_RETRY_BACKOFF_MS, WHEELFIT_USER_AGENT, WHEELFIT_PROXY_AUTH).
/// Throws UsageError for a bad value.
transports::HttpOptions http_options(const Args& parsed);

/// --cache-max-size SIZE (util::parse_size: 500M, 1GiB), or nullopt when not given; a UsageError
/// naming the flag for a bad size.
std::optional<std::uint64_t> cache_max_size(const Args& parsed);
/// The ResolveRequest of the options resolve, download and mirror share (configs, index, policy,
/// backend, network, cache, combo, fallback); a command adds its own (resolve: --inspect).
api::ResolveRequest resolve_request(const Args& parsed);

/// --machine FILE loaded as a machine profile (nullopt without --machine); the error names
/// --machine and the file.
Expected<std::optional<machine::Machine>> machine_profile(const Args& parsed);

/// The machines of --machine FILE (each, in order; named by the file's stem) and then of
/// --machines DIR (api::load_fleet: a profile there that does not load is its machine's row,
/// unless it is the only machine). The error names the flag and the file.
Expected<std::vector<api::FleetMachine>> fleet_of(const Args& parsed);

/// The process environment variable, if set.
std::optional<std::string> env(const char* name);

/// Loads the backend plugins from registry::plugin_dirs() (WHEELFIT_PLUGIN_PATH's folders, then
/// the built-in one) into `registry` (once per command, at its start). Skipped files and folders
/// not used are logged (warnings; debug for files not named *.so and for a missing built-in
/// folder). An Error (exit 2) when no folder at all could be used; its message names each folder
/// and WHEELFIT_PLUGIN_PATH. Defined in cmd_plugins.cpp.
Expected<registry::PluginLoadReport> load_backends(registry::Registry& registry);

/// What resolve, explain and doctor do first: the plugins loaded into `registry` (once per
/// command; load_backends) and --machine FILE, when given, loaded as the request's machine (else
/// the façade detects this one). The error (exit 2) names the input.
template <class Request>
Expected<void> prepare_request(const Args& parsed, registry::Registry& registry, Request& request) {
  if (auto loaded = load_backends(registry); !loaded) return loaded.error();
  request.backends = &registry;
  auto profile = machine_profile(parsed);
  if (!profile) return profile.error();
  request.machine = std::move(*profile);
  return {};
}

/// explain and doctor: the request prepared (prepare_request), the façade's `call` made, and its
/// report (or JSON) printed; the exit code is the result's.
template <class Request, class Call>
int run_and_print(const Args& parsed, Request& request, bool as_json, Call call) {
  registry::Registry registry;
  if (auto ready = prepare_request(parsed, registry, request); !ready) return fail(as_json, api::kExitBadInput, ready.error().message);
  const auto result = call(request);
  if (result.error) return fail(as_json, result.exit_code, result.error->message);
  show(std::cout, as_json ? result.json() : result.report());
  return result.exit_code;
}

using wheelfit::api::ResolveRequest;
using wheelfit::api::ResolveResult;

// The subcommands.
int run_resolve(const std::vector<std::string_view>& args);
int run_plugins(const std::vector<std::string_view>& args);
int run_detect(const std::vector<std::string_view>& args);
int run_explain(const std::vector<std::string_view>& args);
int run_doctor(const std::vector<std::string_view>& args);
int run_cache(const std::vector<std::string_view>& args);
/// The backends loaded into `reg` and named in `request`, and the machines of --machine /
/// --machines: one is `request.machine`, several go to `fleet`, none leaves this machine to be
/// detected. The message of what failed, or nullopt.
std::optional<std::string> take_machines(const Args& parsed, registry::Registry& reg, api::ResolveRequest& request,
                                         std::vector<api::FleetMachine>& fleet);

int run_download(const std::vector<std::string_view>& args);
int run_mirror(const std::vector<std::string_view>& args);
int run_check(const std::vector<std::string_view>& args);

}  // namespace wheelfit::cli
