#include <algorithm>
#include "cli.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <iostream>

namespace wheelfit::cli {

std::optional<std::string> Args::value(std::string_view flag) const {
  if (auto it = values.find(flag); it != values.end()) return it->second;
  return std::nullopt;
}

std::vector<std::string> Args::values_of(std::string_view flag) const {
  if (auto it = repeated.find(flag); it != repeated.end()) return it->second;
  if (auto v = value(flag)) return {*v};
  return {};
}

Args parse_args(const std::vector<std::string_view>& args, const std::set<std::string, std::less<>>& value_flags,
                const std::set<std::string, std::less<>>& switch_flags, const std::map<std::string, std::string, std::less<>>& aliases,
                const std::set<std::string, std::less<>>& repeatable) {
  Args out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "--") {
      for (++i; i < args.size(); ++i) out.positional.emplace_back(args[i]);
      break;
    }
    if (!a.starts_with("-") || a == "-") {
      out.positional.emplace_back(a);
      continue;
    }
    std::string flag(a.substr(0, a.find('=')));
    if (auto al = aliases.find(flag); al != aliases.end()) flag = al->second;
    if (switch_flags.count(flag)) {
      if (a.find('=') != std::string_view::npos) throw UsageError{flag + ": takes no value"};
      out.switches.insert(flag);
      continue;
    }
    if (!value_flags.count(flag)) throw UsageError{"unknown option " + std::string(a)};
    std::string value;
    if (auto eq = a.find('='); eq != std::string_view::npos) {
      value = std::string(a.substr(eq + 1));
    } else {
      if (i + 1 >= args.size()) throw UsageError{flag + ": missing value"};
      value = std::string(args[++i]);
    }
    if (repeatable.count(flag)) {
      out.values.emplace(flag, value);  // the first
      out.repeated[flag].push_back(std::move(value));
    } else if (!out.values.emplace(flag, std::move(value)).second) {
      throw UsageError{flag + ": given twice"};
    }
  }
  return out;
}

void show(std::ostream& os, std::string_view text) {
  // Most text holds nothing escape_controls would change (a fleet's JSON runs to gigabytes):
  // written as it is, not copied. A C1 control starts with 0xc2: any 0xc2 takes the long way.
  const bool plain = std::none_of(text.begin(), text.end(), [](char ch) {
    const auto b = static_cast<unsigned char>(ch);
    return (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f || b == 0xc2;
  });
  if (plain) os.write(text.data(), static_cast<std::streamsize>(text.size()));
  else os << util::escape_controls(text);
}

int fail(bool json, int code, const std::string& raw) {
  const std::string message = util::redact(raw);  // a mistyped flag may quote a URL with its password
  show(std::cerr, "wheelfit: " + message + "\n");
  if (json) {
    boost::json::object o{{"error", boost::json::object{{"exit_code", code}, {"message", message}}}};
    std::cout << boost::json::serialize(o) << "\n";
  }
  return code;
}

// The machines of --machine FILE (each, in order; named by the file's stem) and then of
// --machines DIR (api::load_fleet). The error names the flag and the file.
Expected<std::vector<api::FleetMachine>> fleet_of(const Args& parsed) {
  std::vector<api::FleetMachine> fleet;
  for (const auto& file : parsed.values_of("--machine")) {
    auto m = machine::load_machine_profile(file);
    if (!m) return m.error().with_context("--machine");
    fleet.push_back({util::path_from_utf8(file).stem().string(), std::move(*m)});
  }
  if (const auto dir = parsed.value("--machines")) {
    auto more = api::load_fleet(*dir);
    if (!more) return more.error();
    for (auto& m : *more) fleet.push_back(std::move(m));
  }
  // A profile of the folder that does not load is its row in a fleet; alone, it is the error.
  if (fleet.size() == 1 && fleet.front().error) return *fleet.front().error;
  return fleet;
}

Expected<std::optional<machine::Machine>> machine_profile(const Args& parsed) {
  const auto file = parsed.value("--machine");
  if (!file) return std::optional<machine::Machine>{};
  auto m = machine::load_machine_profile(*file);
  if (!m) return m.error().with_context("--machine");
  return std::optional<machine::Machine>{std::move(*m)};
}

std::optional<std::uint64_t> cache_max_size(const Args& parsed) {
  const auto value = parsed.value("--cache-max-size");
  if (!value) return std::nullopt;
  return cli_value(*api::options::find_flag("--cache-max-size"), *value, "--cache-max-size").size;
}

std::optional<std::string> env(const char* name) {
  if (const char* v = std::getenv(name)) return std::string(v);
  return std::nullopt;
}

// A whole number in [lo, hi] for `flag`, or a UsageError naming the flag and the value.
long bounded_number(std::string_view flag, const std::string& value, long lo, long hi) {
  std::size_t used = 0;
  long n = 0;
  try {
    n = std::stol(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || n < lo || n > hi) {
    throw UsageError{std::string(flag) + ": '" + value + "' is not a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi)};
  }
  return n;
}

namespace {

namespace opt = api::options;

// The transports' parsers of the values the core cannot read itself (proxy auth, host lists).
constexpr opt::Parsers kParsers{&transports::parse_proxy_auth, &transports::parse_host_list};

// The text of `row` from its flag, else from its variable when the CLI reads one (set and not
// empty); `source` becomes the flag or the variable.
std::optional<std::string> given(const Args& parsed, const opt::Option& row, std::string& source) {
  if (auto v = parsed.value(row.flag); v && !row.flag.empty()) {
    source = std::string(row.flag);
    return v;
  }
  if (!row.cli_reads_env) return std::nullopt;
  auto e = env(std::string(row.env).c_str());
  if (!e || e->empty()) return std::nullopt;
  source = std::string(row.env);
  return e;
}

// The options of the table given to a command, applied in the table's order: the network rows
// to `net`, with `request` the resolve rows too.
void apply_options(const Args& parsed, transports::HttpOptions& net, api::ResolveRequest* request) {
  for (const opt::Option& row : opt::table()) {
    if (!row.network && !(request && row.resolve)) continue;
    if (row.kind == opt::Kind::toggle) {
      opt::Value on;
      on.on = true;
      if (parsed.has(row.flag)) row.resolve(*request, on);
      continue;
    }
    std::string source;
    auto text = given(parsed, row, source);
    if (!text) continue;
    // A header's value may come from the flag or the variable: the message names both.
    const std::string named = row.kind == opt::Kind::line && !row.env.empty() ? std::string(row.flag) + " / " + std::string(row.env) : source;
    opt::Value value = cli_value(row, std::move(*text), named);
    if (row.network) row.network(net, value, source);
    else row.resolve(*request, value);
  }
}

}  // namespace

Args parse_args(const std::vector<std::string_view>& args, api::options::Command command) {
  std::set<std::string, std::less<>> values, switches, repeatable;
  std::map<std::string, std::string, std::less<>> aliases;
  for (const opt::Option& row : opt::table()) {
    if (row.flag.empty() || !(row.commands & command)) continue;
    (row.kind == opt::Kind::toggle ? switches : values).emplace(row.flag);
    if (!row.alias.empty()) aliases.emplace(row.alias, row.flag);
    if (row.repeatable & command) repeatable.emplace(row.flag);
  }
  return parse_args(args, values, switches, aliases, repeatable);
}

api::options::Value cli_value(const api::options::Option& row, std::string text, std::string_view source) {
  if (row.kind == opt::Kind::number) {
    opt::Value v;
    v.number = bounded_number(source, text, row.lo, row.hi);
    v.text = std::move(text);
    return v;
  }
  auto v = opt::parse_text(row, std::move(text), source, kParsers);
  if (!v) throw UsageError{v.error().message};
  return std::move(*v);
}

// The network knobs (README "Network"): the table's network rows, flags first, then the
// variables the CLI reads (WHEELFIT_RETRY_BACKOFF_MS, WHEELFIT_USER_AGENT, WHEELFIT_PROXY_AUTH).
transports::HttpOptions http_options(const Args& parsed) {
  transports::HttpOptions o;
  apply_options(parsed, o, nullptr);
  return o;
}

api::ResolveRequest resolve_request(const Args& parsed) {
  if (parsed.has("--offline") && parsed.has("--no-cache")) throw UsageError{"--offline reads only the cache; it does not go with --no-cache"};
  api::ResolveRequest request;
  request.configs = parsed.positional;
  apply_options(parsed, request.network, &request);
  return request;
}

}  // namespace wheelfit::cli
