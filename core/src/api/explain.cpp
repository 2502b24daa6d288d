// wheelfit::api::explain(): one wheel judged on the seven demands, behind one call, and the
// texts `wheelfit explain` prints.
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <boost/json.hpp>

#include "wheelfit/api/results.hpp"
#include "wheelfit/session/session.hpp"
#include "wheelfit/index/file_url.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api {
namespace {

namespace json = boost::json;

// The file name a URL ends in: query and fragment dropped, percent-decoded ("%2B" -> "+").
std::string url_filename(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  return index::percent_decode(url.substr(url.find_last_of('/') + 1));
}

std::string joined(const std::vector<std::string>& v, const char* empty) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? std::string(empty) : s;
}

json::object explanation_object(const inspect::Explanation& e) {
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

json::array strings(const std::vector<std::string>& items) {
  json::array a;
  for (const auto& item : items) a.emplace_back(json::string(item));
  return a;
}

// `explain LIB --json`: the library's headers, its device code and the verdict on the GPUs.
json::object library_object(const inspect::LibraryExplanation& e) {
  const auto& lib = e.library;
  const auto& archs = *e.verdict.archs;
  json::object device{{"list", archs.list}};
  for (const auto& [kind, items] : archs.entries) device[kind] = strings(items);
  device["source"] = archs.source;
  static constexpr const char* kStatus[] = {"runs", "cannot_run", "unknown"};
  return json::object{{"library", lib.path},
                      {"format", lib.info.format == inspect::BinaryInfo::Format::elf ? "elf" : "pe"},
                      {"machine", lib.info.machine},
                      {"os", lib.info.os},
                      {"sections", strings(lib.sections)},
                      {"archs", std::move(device)},
                      {"gpus", e.machine},
                      {"verdict", kStatus[static_cast<int>(e.verdict.status)]},
                      {"served", strings(e.served)},
                      {"uncovered", strings(e.verdict.uncovered)},
                      {"why_unknown", e.verdict.why_unknown},
                      {"summary", e.summary},
                      {"warnings", strings(e.warnings)},
                      {"file_size", lib.file_size},
                      {"bytes_read", lib.bytes_read}};
}

// `explain LIB`: what was read, the archs, and whether they cover the machine's GPUs.
std::string library_report(const inspect::LibraryExplanation& e) {
  const auto& lib = e.library;
  const auto& archs = *e.verdict.archs;
  std::ostringstream out;
  out << "library: " << lib.path << "\n"
      << lib.info.machine << " " << (lib.info.format == inspect::BinaryInfo::Format::elf ? "ELF" : "PE") << "; read "
      << util::human_bytes(lib.bytes_read) << " of its " << util::human_bytes(lib.file_size) << " (headers only: "
      << joined(lib.sections, "-") << ")\n\n"
      << "archs: " << archs.list << "\n";
  for (const auto& [kind, items] : archs.entries) out << "  " << kind << ": " << joined(items, "-") << "\n";
  out << "  (" << archs.source << ")\n"
      << "machine: " << e.machine << "\n";
  for (const auto& line : e.served) out << "  " << line << "\n";
  if (!e.warnings.empty()) {
    out << "\nwarnings:\n";
    for (const auto& w : e.warnings) out << "  - " << w << "\n";
  }
  out << "\nverdict: " << e.summary << "\n";
  return out.str();
}

}  // namespace

std::string explanation_json(const inspect::Explanation& e) { return json::serialize(explanation_object(e)); }

std::string demands_text(const inspect::Explanation& e, const std::string& indent) {
  std::ostringstream out;
  for (const auto& d : e.demands) {
    std::string verdict(inspect::to_string(d.verdict));
    if (d.verdict == inspect::Verdict::fails) verdict = "FAILS";
    out << indent << d.name << ": " << verdict << "\n"
        << indent << "  wheel:   " << d.wheel << "\n"
        << indent << "  machine: " << d.machine << "\n";
    if (!d.detail.empty()) {
      out << indent << "  "
          << (d.verdict == inspect::Verdict::ok ? "why:     " : d.verdict == inspect::Verdict::fails ? "error:   " : "why not: ")
          << d.detail << "\n";
    }
  }
  return out.str();
}

std::string ExplainResult::json() const {
  if (error || (!explanation && !library)) {
    return json::serialize(json::object{{"error", json::object{{"exit_code", exit_code},
                                                               {"message", error ? error->message : "no result"}}}}) + "\n";
  }
  if (library) {
    json::object o = library_object(*library);
    o["source"] = origin;
    return json::serialize(o) + "\n";
  }
  json::object o = explanation_object(*explanation);
  o["source"] = origin;
  return json::serialize(o) + "\n";
}

std::string ExplainResult::report() const {
  if (library && !error) return library_report(*library);
  if (error || !explanation) return "wheelfit: " + (error ? error->message : std::string("no result")) + "\n";
  const inspect::Explanation& e = *explanation;
  std::ostringstream out;
  out << "wheel: " << e.wheel << "\n";
  if (!e.binaries_read) {
    out << "judged on the file name alone (binaries not read; give the file or its URL to read them)\n";
  } else {
    std::size_t read = 0;
    for (const auto& f : e.files) read += f.info ? 1 : 0;
    out << "read " << read << " of " << e.files.size() << " compiled member" << (e.files.size() == 1 ? "" : "s");
    if (origin == "url") {
      out << ": " << util::human_bytes(e.bytes_fetched) << " fetched of the wheel's " << util::human_bytes(e.wheel_size)
          << (e.downloaded_whole ? " (the server ignored Range requests: downloaded whole)" : " (HTTP Range requests)");
    } else {
      out << " (a local wheel of " << util::human_bytes(e.wheel_size) << ")";
    }
    out << "\n";
  }
  out << "\n" << demands_text(e, "");
  if (!e.files.empty()) {
    out << "\nfiles:\n";
    for (const auto& f : e.files) {
      if (!f.info) {
        out << "  " << f.path << ": not read: " << f.error << "\n";
        continue;
      }
      out << "  " << f.path << ": " << f.info->machine << " " << (f.info->format == inspect::BinaryInfo::Format::elf ? "ELF" : "PE");
      if (f.device.entries.empty()) out << "; no device code";
      for (const auto& [kind, items] : f.device.entries) out << "; " << kind << " " << joined(items, "-");
      out << "; glibc " << f.info->max_glibc.value_or("-") << "; needs " << joined(f.info->needed, "-") << "\n";
    }
  }
  if (!e.warnings.empty()) {
    out << "\nwarnings:\n";
    for (const auto& w : e.warnings) out << "  - " << w << "\n";
  }
  std::vector<std::string> failed, unknown;
  for (const auto& d : e.demands) {
    if (d.verdict == inspect::Verdict::fails) failed.emplace_back(d.name);
    if (d.verdict == inspect::Verdict::unknown) unknown.emplace_back(d.name);
  }
  out << "\nverdict: "
      << (failed.empty() ? "it runs here" : "it will not run here: " + joined(failed, "") + " fail" + (failed.size() == 1 ? "s" : ""));
  if (!unknown.empty()) out << " (not checked: " << joined(unknown, "") << ")";
  out << "\n";
  return out.str();
}

ExplainResult explain(const ExplainRequest& req) {
  const log::ScopedSink call_log(req.log_sink);
  ExplainResult r;
  // A URL's userinfo goes to the transport's credentials: no message of this call shows it.
  const auto& transports = session::transports_of(req.transports);
  net::StackOptions stack;
  std::string wheel = req.wheel;
  stack.network = req.network;
  if (transports.facts(wheel).credentials) {
    auto clean = session::take_credentials(wheel, "the wheel URL", std::nullopt, stack.network, transports);
    if (!clean) return detail::failed(std::move(r), kExitBadInput, util::redact(wheel) + ": " + clean.error().message);
    wheel = std::move(*clean);
  }
  // What the wheel is: a URL, a file, or (no such file, no '/') a bare wheel file name.
  std::string filename;
  std::error_code ec;
  if (transports.facts(wheel).remote) {  // read through its transport (Range requests)
    r.origin = "url";
    filename = url_filename(wheel);
  } else if (wheel.starts_with("file://")) {
    r.origin = "file";
    filename = url_filename(wheel);
  } else if (std::filesystem::exists(wheel, ec)) {
    if (!std::filesystem::is_regular_file(wheel, ec)) return detail::failed(std::move(r), kExitBadInput, wheel + ": not a file");
    r.origin = "file";
    filename = std::filesystem::path(wheel).filename().string();
  } else if (wheel.find('/') == std::string::npos && wheel.find('\\') == std::string::npos) {
    r.origin = "name";
    filename = wheel;
  } else {
    return detail::failed(std::move(r), kExitBadInput, wheel + ": no such file");
  }
  // A library (torch's libtorch_cuda.so): its device code, read by its headers.
  if (r.origin == "file" && inspect::is_library_name(filename)) r.origin = "library";
  if (auto name = model::WheelName::parse(filename); !name && r.origin != "library") {
    return detail::failed(std::move(r), kExitBadInput, util::redact(wheel) + ": " + name.error().message);
  }

  // The machine and the policy it is judged by: the judging backend's, unless a file is named.
  std::unique_ptr<registry::Registry> owned;
  auto reg = session::backends_of(req.backends, owned);
  if (!reg) return detail::failed(std::move(r), kExitBadInput, reg.error().message);
  auto machine = session::machine_of(**reg, req.machine, req.env_overrides, req.python, std::nullopt);
  if (!machine) return detail::failed(std::move(r), kExitBadInput, machine.error().message);
  auto policy = session::judging_policy_for(**reg, *machine, req.policy_file);
  if (!policy) return detail::failed(std::move(r), kExitBadInput, policy.error().message);

  if (r.origin == "library") {
    auto path = index::to_path(wheel);
    auto explained = path ? inspect::explain_library(*path, *machine, *policy) : Expected<inspect::LibraryExplanation>(path.error());
    if (!explained) return detail::failed(std::move(r), kExitBadInput, explained.error().message);
    r.exit_code = explained->verdict.cannot_run() ? kExitUnresolved : kExitResolved;
    r.library = std::move(*explained);
    return r;
  }
  if (r.origin == "name") {
    auto explained = inspect::explain_name(filename, *machine, *policy);
    if (!explained) return detail::failed(std::move(r), kExitBadInput, wheel + ": " + explained.error().message);
    r.explanation = std::move(*explained);
  } else {
    std::unique_ptr<net::Transport> transport;
    if (r.origin == "url") {
      auto made = transports.make(wheel, stack);
      if (!made) return detail::failed(std::move(r), kExitBadInput, made.error().message);
      transport = std::move(*made);
    }
    auto source = session::open_wheel(wheel, transport.get());
    if (!source) {
      const bool network = source.error().code.category() != core_category();
      return detail::failed(std::move(r), network ? kExitUnreadable : kExitBadInput, util::redact(wheel) + ": " + source.error().message);
    }
    auto explained = inspect::explain_wheel(**source, filename, *machine, *policy);
    if (!explained) {
      const bool network = explained.error().code.category() != core_category();
      return detail::failed(std::move(r), network ? kExitUnreadable : kExitBadInput, util::redact(wheel) + ": " + explained.error().message);
    }
    r.explanation = std::move(*explained);
  }
  r.exit_code = r.explanation->fits() ? kExitResolved : kExitUnresolved;
  return r;
}

}  // namespace wheelfit::api
