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
  auto size = util::parse_size(*value);
  if (!size) throw UsageError{"--cache-max-size: " + size.error().message};
  return *size;
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

// The network knobs (README "Network"): flags first, then WHEELFIT_PROXY_AUTH and WHEELFIT_USER_AGENT; --cert and
// --client-cert before the variables the transport reads.
transports::HttpOptions http_options(const Args& parsed) {
  transports::HttpOptions o;
  if (auto v = parsed.value("--retries")) o.retry.retries = static_cast<int>(bounded_number("--retries", *v, 0, 20));
  if (auto v = parsed.value("--timeout")) {
    const auto s = std::chrono::seconds(bounded_number("--timeout", *v, 1, 3600));
    o.connect_timeout = s;
    o.idle_timeout = s;
  }
  // The low-speed rule and the whole command's bound (README "Network"): --max-time starts now,
  // as the command does.
  if (auto v = parsed.value("--speed-limit")) o.speed_limit = static_cast<std::uint64_t>(bounded_number("--speed-limit", *v, 0, 1L << 30));
  if (auto v = parsed.value("--speed-time")) o.speed_time = std::chrono::seconds(bounded_number("--speed-time", *v, 1, 3600));
  if (auto v = parsed.value("--max-time")) {
    o.max_time = transports::MaxTime::from_now(std::chrono::seconds(bounded_number("--max-time", *v, 1, 86400)));
  }
  if (auto v = parsed.value("--jobs")) {
    o.jobs = static_cast<unsigned>(bounded_number("--jobs", *v, 1, 64));
    o.per_host = o.jobs;
  }
  if (auto e = env("WHEELFIT_RETRY_BACKOFF_MS"); e && !e->empty()) {
    o.retry.base = std::chrono::milliseconds(bounded_number("WHEELFIT_RETRY_BACKOFF_MS", *e, 1, 60000));
  }
  if (auto v = parsed.value("--allow-insecure-host")) {
    auto hosts = transports::parse_host_list(*v, "--allow-insecure-host");
    if (!hosts) throw UsageError{hosts.error().message};
    o.credentials.insecure_hosts = std::move(*hosts);
  }
  if (auto v = parsed.value("--cert")) {  // the trust store (trust_store.hpp has the order)
    if (v->empty()) throw UsageError{"--cert: give a CA bundle (PEM) or a folder of hashed certificates"};
    o.ca_file = *v;
    o.ca_source = "--cert";
  }
  if (auto v = parsed.value("--client-cert")) {
    if (v->empty()) throw UsageError{"--client-cert: give a PEM file with the certificate and its key"};
    o.client_cert = *v;
    o.client_cert_source = "--client-cert";
  }
  // How to authenticate to a proxy (README "Network"): the flag, else WHEELFIT_PROXY_AUTH.
  if (auto v = parsed.value("--proxy-auth")) {
    auto auth = transports::parse_proxy_auth(*v, "--proxy-auth");
    if (!auth) throw UsageError{auth.error().message};
    o.proxy_auth = *auth;
  } else if (auto e = env("WHEELFIT_PROXY_AUTH"); e && !e->empty()) {
    auto auth = transports::parse_proxy_auth(*e, "WHEELFIT_PROXY_AUTH");
    if (!auth) throw UsageError{auth.error().message};
    o.proxy_auth = *auth;
  }
  if (auto v = parsed.value("--user-agent")) o.user_agent = *v;
  else if (auto e = env("WHEELFIT_USER_AGENT"); e && !e->empty()) o.user_agent = *e;
  // It goes into a header line as it is: no CR/LF (a header injected), no other control byte
  // (as the C API's user_agent).
  const bool control = std::any_of(o.user_agent.begin(), o.user_agent.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (o.user_agent.empty() || control) {
    throw UsageError{"--user-agent / WHEELFIT_USER_AGENT: must be one non-empty line without control characters"};
  }
  return o;
}

}  // namespace wheelfit::cli
