// `wheelfit explain WHEEL`: the seven demands of one wheel (a local file, a URL read with Range
// requests, or a bare file name) against one machine. Also what explain, doctor and
// `resolve --inspect` share: the machine and policy to judge by, and the inspect hook.
#include <boost/json.hpp>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "cli.hpp"
#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/util/log.hpp"

namespace wheelfit::cli {
namespace json = boost::json;

Expected<JudgeTarget> judge_target(const Args& args, registry::Registry& reg) {
  JudgeTarget t;
  if (auto loaded = load_backends(reg); !loaded) return loaded.error();
  if (auto file = args.value("--machine")) {
    auto m = machine::load_machine_profile(*file);
    if (!m) return m.error().with_context("--machine");
    if (auto r = machine::apply_env_overrides(*m, machine::process_env()); !r) return r.error();
    t.machine = std::move(*m);
  } else {
    auto det = detect_host(reg, false, args.value("--python"), std::nullopt);
    if (!det) return det.error();
    for (const auto& note : det->notes) log::debug("detect: " + note);
    t.machine = std::move(det->machine);
    t.interpreter = std::move(det->interpreter);
  }
  // Policy: --policy / WHEELFIT_POLICY, else the judging backend's own data.
  auto backend = judging_backend(reg, std::nullopt, t.machine);
  if (!backend) return backend.error();
  auto policy = judging_policy(**backend, args.value("--policy"));
  if (!policy) return policy.error();
  if (auto targets = resolve::device_targets(t.machine, *policy); !targets) return targets.error();
  t.policy = std::move(*policy);
  return t;
}

namespace {

std::string percent_decode(std::string_view s) {
  std::string out;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The file name a URL ends in: query and fragment dropped, percent-decoded ("%2B" -> "+").
std::string url_filename(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  return percent_decode(url.substr(url.find_last_of('/') + 1));
}

bool is_remote(std::string_view s) { return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0; }

std::string size_text(std::uint64_t n) {
  char buf[64];
  if (n < 1024) return std::to_string(n) + " B";
  if (n < (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024.0);
  else if (n < (1u << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(n) / 1073741824.0);
  return buf;
}

// Opens WHEEL's bytes: a URL (Range requests), a file:// URL or a path.
Expected<std::unique_ptr<inspect::ByteSource>> open_wheel(const std::string& where, transport::Transport* remote) {
  if (is_remote(where)) return inspect::open_remote_source(*remote, where);
  auto path = transports::to_path(where);
  if (!path) return path.error();
  return inspect::open_file_source(*path);
}

}  // namespace

json::object explanation_json(const inspect::Explanation& e) {
  json::array demands;
  for (const auto& d : e.demands) {
    demands.push_back(json::object{{"demand", d.name},
                                   {"wheel", d.wheel},
                                   {"machine", d.machine},
                                   {"verdict", inspect::to_string(d.verdict)},
                                   {"detail", d.detail}});
  }
  json::array files;
  for (const auto& f : e.files) {
    if (!f.info) continue;  // unreadable: named in the warnings
    json::array needed;
    for (const auto& n : f.info->needed) needed.emplace_back(json::string(n));
    json::value glibc = nullptr;
    if (f.info->max_glibc) glibc = json::string(*f.info->max_glibc);
    json::object file{{"path", f.path}, {"device_list", f.device.list}};
    // The device code by kind, as the backend names it ("sass", "ptx" for CUDA).
    for (const auto& [kind, items] : f.device.entries) {
      json::array a;
      for (const auto& item : items) a.emplace_back(json::string(item));
      file[kind] = std::move(a);
    }
    file["glibc"] = std::move(glibc);
    file["needed"] = std::move(needed);
    files.push_back(std::move(file));
  }
  json::array warnings;
  for (const auto& w : e.warnings) warnings.emplace_back(json::string(w));
  return json::object{{"wheel", e.wheel},
                      {"fits", e.fits()},
                      {"binaries_read", e.binaries_read},
                      {"demands", demands},
                      {"files", files},
                      {"warnings", warnings},
                      {"bytes_fetched", e.bytes_fetched},
                      {"wheel_size", e.wheel_size},
                      {"downloaded_whole", e.downloaded_whole}};
}

void print_demands(std::ostream& out, const inspect::Explanation& e, const std::string& indent) {
  for (const auto& d : e.demands) {
    std::string verdict(inspect::to_string(d.verdict));
    if (d.verdict == inspect::Verdict::fails) verdict = "FAILS";
    out << indent << d.name << ": " << verdict << "\n"
        << indent << "  wheel:   " << d.wheel << "\n"
        << indent << "  machine: " << d.machine << "\n";
    if (!d.detail.empty()) out << indent << "  " << (d.verdict == inspect::Verdict::ok ? "why:     " : d.verdict == inspect::Verdict::fails ? "error:   " : "why not: ") << d.detail << "\n";
  }
}

namespace {

void print_human(const inspect::Explanation& e, std::string_view origin) {
  std::cout << "wheel: " << e.wheel << "\n";
  if (!e.binaries_read) {
    std::cout << "judged on the file name alone (binaries not read; give the file or its URL to read them)\n";
  } else {
    std::size_t read = 0;
    for (const auto& f : e.files) read += f.info ? 1 : 0;
    std::cout << "read " << read << " of " << e.files.size() << " compiled member" << (e.files.size() == 1 ? "" : "s");
    if (origin == "url") {
      std::cout << ": " << size_text(e.bytes_fetched) << " fetched of the wheel's " << size_text(e.wheel_size)
                << (e.downloaded_whole ? " (the server ignored Range requests: downloaded whole)" : " (HTTP Range requests)");
    } else {
      std::cout << " (a local wheel of " << size_text(e.wheel_size) << ")";
    }
    std::cout << "\n";
  }
  std::cout << "\n";
  print_demands(std::cout, e, "");
  if (!e.files.empty()) {
    std::cout << "\nfiles:\n";
    for (const auto& f : e.files) {
      if (!f.info) {
        std::cout << "  " << f.path << ": not read: " << f.error << "\n";
        continue;
      }
      auto joined = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
        return s.empty() ? std::string("-") : s;
      };
      std::cout << "  " << f.path << ": " << f.info->machine << " " << (f.info->format == inspect::BinaryInfo::Format::elf ? "ELF" : "PE");
      if (f.device.entries.empty()) std::cout << "; no device code";
      for (const auto& [kind, items] : f.device.entries) std::cout << "; " << kind << " " << joined(items);
      std::cout << "; glibc " << f.info->max_glibc.value_or("-") << "; needs " << joined(f.info->needed) << "\n";
    }
  }
  if (!e.warnings.empty()) {
    std::cout << "\nwarnings:\n";
    for (const auto& w : e.warnings) std::cout << "  - " << w << "\n";
  }
  std::vector<std::string> failed, unknown;
  for (const auto& d : e.demands) {
    if (d.verdict == inspect::Verdict::fails) failed.emplace_back(d.name);
    if (d.verdict == inspect::Verdict::unknown) unknown.emplace_back(d.name);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  std::cout << "\nverdict: " << (failed.empty() ? "it runs here" : "it will not run here: " + list(failed) + " fail" + (failed.size() == 1 ? "s" : ""));
  if (!unknown.empty()) std::cout << " (not checked: " << list(unknown) << ")";
  std::cout << "\n";
}

}  // namespace

int run_explain(const std::vector<std::string_view>& argv) {
  const Args args = parse_args(argv, {"--machine", "--python", "--policy", "--timeout", "--retries", "--user-agent"}, {"--json"});
  const bool as_json = args.has("--json");
  if (args.positional.size() != 1) throw UsageError{"explain: give exactly one WHEEL (a .whl file, its URL, or a wheel file name)"};
  if (args.value("--machine") && args.value("--python")) {
    throw UsageError{"--python names this machine's interpreter; it does not go with --machine"};
  }
  const std::string wheel = args.positional[0];

  // What WHEEL is: a URL, a file, or (no such file, no '/') a bare wheel file name.
  std::string origin;
  std::string filename;
  std::error_code ec;
  if (is_remote(wheel)) {
    origin = "url";
    filename = url_filename(wheel);
  } else if (wheel.rfind("file://", 0) == 0) {
    origin = "file";
    filename = url_filename(wheel);
  } else if (std::filesystem::exists(wheel, ec)) {
    if (!std::filesystem::is_regular_file(wheel, ec)) return fail(as_json, kBadInput, wheel + ": not a file");
    origin = "file";
    filename = std::filesystem::path(wheel).filename().string();
  } else if (wheel.find('/') == std::string::npos && wheel.find('\\') == std::string::npos) {
    origin = "name";
    filename = wheel;
  } else {
    return fail(as_json, kBadInput, wheel + ": no such file");
  }
  if (auto name = model::WheelName::parse(filename); !name) return fail(as_json, kBadInput, wheel + ": " + name.error().message);

  registry::Registry reg;
  auto target = judge_target(args, reg);
  if (!target) return fail(as_json, kBadInput, target.error().message);

  Expected<inspect::Explanation> explained = Error(Errc::invalid_input, "");
  if (origin == "name") {
    explained = inspect::explain_name(filename, target->machine, target->policy);
  } else {
    const transports::HttpOptions net = http_options(args);
    std::unique_ptr<transport::Transport> transport;
    if (origin == "url") {
      auto made = transports::make_transport(net);
      if (!made) return fail(as_json, kBadInput, made.error().message);
      transport = std::move(*made);
    }
    auto source = open_wheel(wheel, transport.get());
    if (!source) {
      const bool network = source.error().code.category() != core_category();
      return fail(as_json, network ? kUnreadable : kBadInput, wheel + ": " + source.error().message);
    }
    explained = inspect::explain_wheel(**source, filename, target->machine, target->policy);
    if (!explained) {
      const bool network = explained.error().code.category() != core_category();
      return fail(as_json, network ? kUnreadable : kBadInput, wheel + ": " + explained.error().message);
    }
  }
  if (!explained) return fail(as_json, kBadInput, wheel + ": " + explained.error().message);
  if (as_json) {
    json::object o = explanation_json(*explained);
    o["source"] = origin;
    std::cout << json::serialize(o) << "\n";
  } else {
    print_human(*explained, origin);
  }
  return explained->fits() ? kOk : kUnresolved;
}

}  // namespace wheelfit::cli
