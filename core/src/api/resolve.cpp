// ResolveResult (wheelfit/api.hpp): a resolve's result as the CLI prints it and its outputs, each
// written through the format table (output/formats.hpp) from the answer of its one machine.
#include <algorithm>
#include <filesystem>
#include <map>

#include <boost/json.hpp>

#include "wheelfit/answer/answer.hpp"
#include "wheelfit/output/formats.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api {
namespace {

// What the reports print of a trust choice.
std::optional<output::TlsNote> tls_note(const std::optional<net::TrustChoice>& trust) {
  if (!trust) return std::nullopt;
  output::TlsNote note;
  note.trust_from = trust->source();
  for (const auto& l : trust->locations) note.trust.push_back({l.path, l.source});
  if (trust->client_cert) note.client_cert = output::TlsNote::Location{trust->client_cert->path, trust->client_cert->source};
  return note;
}

}  // namespace

output::ReportContext ResolveResult::report_context() const {
  return output::ReportContext{machine,  workspace,  index_url,     index_origin,  policy_source,
                               packages_json_note, source, fetch_note, failover_note, tls_note(trust)};
}

std::string ResolveResult::status_class() const {
  switch (exit_code) {
    case kExitResolved: return "resolved";
    case kExitUnresolved: return "unresolved";
    case kExitNoIndex: return "no index";
    case kExitUnreadable: return "unreadable index";
    case kExitBadInput: return "bad input";
    default: return "internal error";
  }
}

namespace {

// The answer of a result alone (its one machine), for its lock files.
answer::Answer answer_of(const ResolveResult& r) {
  return answer::build({{"machine", r.resolution.get(), r.index.get(), r.index_url, r.machine.python}});
}

// `format` written for the result's one machine.
Expected<std::string> write_one(const ResolveResult& r, const output::Format& format, const output::PixiPins& pins) {
  const answer::Answer a = answer_of(r);
  const output::ReportContext context = r.report_context();
  return format.write(output::Target{a, a.machines.front(), r.resolution.get(), &context, pins});
}

}  // namespace

std::string ResolveResult::json() const {
  if (error || !resolution) {
    const std::string message = error ? error->message : "no result";
    return boost::json::serialize(boost::json::object{
               {"error", boost::json::object{{"exit_code", exit_code}, {"message", message}}}}) + "\n";
  }
  // What a resolve prints reads the resolution alone: no answer is built for it.
  return output::json_report(*resolution, report_context());
}

std::string ResolveResult::report() const {
  if (error || !resolution) return "wheelfit: " + (error ? error->message : std::string("no result")) + "\n";
  return output::human_report(*resolution, report_context());
}

Expected<std::string> ResolveResult::pixi_manifest(const output::PixiPins& pins) const {
  return write_output(*output::formats().named("pixi"), pins);
}

std::vector<output::LockedWheel> ResolveResult::locked_wheels() const {
  if (!resolution) return {};
  const answer::Answer a = answer_of(*this);
  return output::locked_wheels(output::Target{a, a.machines.front()});
}

std::vector<std::string> ResolveResult::lock_comments(bool pins_locked) const {
  if (!resolution) return {};
  return answer::lock_comments(*resolution, index_url, pins_locked);
}

Expected<std::string> ResolveResult::write_output(const output::Format& format, const output::PixiPins& pins) const {
  if (!resolution || !resolution->ok()) {
    return unexpected(Errc::invalid_input, format.name == "pixi" ? "nothing resolved: no manifest to write"
                                                                 : "nothing resolved: no lock file to write");
  }
  return write_one(*this, format, pins);
}

namespace {

constexpr std::pair<LockFormat, std::string_view> kLockFormatNames[] = {
    {LockFormat::pixi, "pixi"}, {LockFormat::requirements, "requirements"}, {LockFormat::pylock, "pylock"}};

}  // namespace

Expected<std::string> ResolveResult::lock_file(LockFormat format) const {
  if (!resolution || !resolution->ok()) return unexpected(Errc::invalid_input, "nothing resolved: no lock file to write");
  for (const auto& [f, name] : kLockFormatNames) {
    if (f == format) return write_output(*output::formats().named(name));
  }
  return unexpected(Errc::invalid_input, "unknown lock format");
}

Expected<const output::Format*> output_format_for(const std::string& path, const std::optional<std::string>& format) {
  return output::formats().for_output(path, format);
}

Expected<LockFormat> lock_format_for(const std::string& path, const std::optional<std::string>& format) {
  auto row = output_format_for(path, format);
  if (!row) return row.error();
  for (const auto& [f, name] : kLockFormatNames) {
    if ((*row)->name == name) return f;
  }
  return unexpected(Errc::usage, "-o: the format '" + (*row)->name + "' is written through output_format_for, not as a LockFormat");
}

}  // namespace wheelfit::api
