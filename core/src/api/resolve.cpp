// wheelfit::resolve(): everything a resolve decides, behind one call (wheelfit/api.hpp).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <boost/json.hpp>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/inspect/explain.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/answer/answer.hpp"
#include "wheelfit/output/formats.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/api.hpp"

#include "common.hpp"

namespace wheelfit::api {
namespace {

using detail::env;
using detail::is_remote;
using detail::open_wheel;

}  // namespace

std::optional<std::string> backend_of_torch_label(const registry::Registry& registry, std::string_view local_label) {
  for (const auto* b : registry.backends()) {
    auto policy = registry.builtin_policy(b->name);  // read once per backend, not per machine
    if (policy && (*policy)->parse_torch_label(local_label)) return b->name;
  }
  return std::nullopt;
}

Expected<const registry::BackendInfo*> judging_backend(const registry::Registry& registry,
                                                       const std::optional<std::string>& name, const machine::Machine& m) {
  std::string backend = name.value_or("");
  if (backend.empty() && m.torch && !m.torch->local().empty()) {
    backend = backend_of_torch_label(registry, m.torch->local()).value_or("");
  }
  if (backend.empty() && m.backend) backend = *m.backend;
  if (backend.empty() || backend == "cpu") {
    if (backend == "cpu") {
      log::warn("the machine's backend is cpu: resolving against the " + std::string(kDefaultBackend) +
                " index; GPU demands will tell what fails");
    }
    backend = kDefaultBackend;
  }
  if (const auto* info = registry.find(backend)) return info;
  std::string known;
  for (const auto& n : registry.names()) known += (known.empty() ? "" : ", ") + n;
  return unexpected(Errc::invalid_input, "--backend: unknown backend '" + backend + "' (known: " +
                                             (known.empty() ? "none: no plugin was loaded" : known) + ")");
}

Expected<semantics::Policy> judging_policy(const registry::BackendInfo& backend, const std::optional<std::string>& file_arg) {
  std::optional<std::string> file = file_arg;
  const bool from_flag = file.has_value();
  if (!file) file = env("WHEELFIT_POLICY");
  if (file && file->empty()) file.reset();
  auto p = registry::make_policy(backend, file);
  if (!p) {
    return p.error().with_context(file ? (from_flag ? "--policy" : "WHEELFIT_POLICY")
                                       : "the " + backend.name + " backend's policy data");
  }
  return p;
}

machine::BackendPayloads detect_backends(const registry::Registry& reg) {
  machine::BackendPayloads out;
  for (const auto* b : reg.backends()) {
    if (!b->has_detection) continue;
    auto payload = reg.detect(b->name);
    if (payload) {
      out.emplace_back(b->name, std::move(*payload));
    } else if (!payload.error().is(Errc::unsupported)) {
      out.emplace_back(b->name, boost::json::serialize(boost::json::object{{"present", false}, {"error", payload.error().message}}));
    }
  }
  return out;
}

namespace {

// What an explanation of a would-be pick rejects it for: the first failing demand of the
// binaries' (torch left to the combo), then the variant (PEP 825) judged by the wheel's own
// *.dist-info/variant.json, as `explain` judges it.
std::optional<resolve::Failure> inspect_reject(const inspect::Explanation& e) {
  for (resolve::Demand d : {resolve::Demand::gpu_arch, resolve::Demand::glibc, resolve::Demand::cpu_arch, resolve::Demand::os,
                            resolve::Demand::line, resolve::Demand::python, resolve::Demand::variant}) {
    for (const auto& r : e.demands) {
      if (r.demand != d || r.verdict != inspect::Verdict::fails) continue;
      const char* from = d == resolve::Demand::variant ? " (read from its *.dist-info/variant.json: " : " (read from its binaries: ";
      return resolve::Failure{d, r.wheel + from + r.detail + ")", r.machine};
    }
  }
  return std::nullopt;
}

// A variant wheel whose own variant.json gives its label other properties than the index's
// variants file did: said, since the pick was chosen (and ordered) by the index's.
void warn_variant_differs(const resolve::Pick& pick, const inspect::Explanation& e) {
  if (!pick.variant_label || !e.variant_properties) return;
  auto own = *e.variant_properties, index = pick.variant_properties;
  std::sort(own.begin(), own.end());
  std::sort(index.begin(), index.end());
  if (own == index) return;
  const auto listed = [](const std::vector<std::string>& p) { return p.empty() ? std::string("none") : util::join(p, ", "); };
  log::warn("--inspect: " + pick.filename + ": its *.dist-info/variant.json gives variant " + *pick.variant_label +
            " the properties " + listed(*e.variant_properties) + ", the index's variants file " + listed(pick.variant_properties) +
            " (" + pick.variants_url + "); judged by the wheel's own");
}

// The machine an inspection judges on: the env's Python; torch the combo's (pinned with the
// pick), not the machine's, except a variant wheel's `abi_dependency :: torch`, judged against
// the torch the resolver judged it against.
machine::Machine inspect_target(const machine::Machine& m, const resolve::Pick& pick) {
  machine::Machine target = m;
  target.torch.reset();
  if (pick.variant_label && !pick.variant_torch.empty()) {
    if (auto torch = model::Version::parse(pick.variant_torch)) target.torch = std::move(*torch);
  }
  if (pick.python.size() > 3) {
    std::string v = pick.python.substr(2);
    const bool ft = v.back() == 't';
    if (ft) v.pop_back();
    if (auto py = model::NumericVersion::parse(v.substr(0, 1) + "." + v.substr(1))) {
      target.python = *py;
      target.python_free_threaded = ft;
    }
  }
  return target;
}

}  // namespace

resolve::InspectHook make_inspect_hook(const machine::Machine& m, const semantics::Policy& policy,
                                       const net::HttpOptions& net, const net::Registry& transports) {
  struct State {
    std::unique_ptr<net::Transport> transport;
    std::map<std::string, resolve::Inspection> seen;  // by URL, Python and the variant's torch
  };
  auto state = std::make_shared<State>();
  return [state, m, &policy, net, &transports](const resolve::Pick& pick) -> resolve::Inspection {
    const std::string key = pick.url + "|" + pick.python + "|" + pick.variant_torch;
    if (auto it = state->seen.find(key); it != state->seen.end()) return it->second;
    resolve::Inspection out;
    if (!state->transport && is_remote(pick.url)) {
      auto made = transports.make(net::StackOptions{net, std::nullopt});
      if (!made) {
        log::warn("--inspect: " + made.error().message + "; " + pick.filename + " not inspected");
        return out;
      }
      state->transport = std::move(*made);
    }
    auto source = open_wheel(pick.url, state->transport.get());
    auto explained = source ? inspect::explain_wheel(**source, pick.filename, inspect_target(m, pick), policy)
                            : Expected<inspect::Explanation>(source.error());
    if (!explained) {
      log::warn("--inspect: " + pick.filename + " could not be read (" + explained.error().message +
                "); judged on its name and the policy only");
      state->seen.emplace(key, out);
      return out;
    }
    out.reject = inspect_reject(*explained);
    warn_variant_differs(pick, *explained);
    if (!out.reject) {
      for (const auto& r : explained->demands)
        if (r.demand == resolve::Demand::gpu_arch) out.arch_source = r.wheel + " (read from the wheel's binaries)";
    }
    log::info("--inspect: " + pick.filename + ": " +
              (out.reject ? "rejected (" + resolve::demand_name(out.reject->demand, policy.notation()) + ")" : "fits") + ", " +
              explained->read_text(is_remote(pick.url)));
    state->seen.emplace(key, out);
    return out;
  };
}

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

output::ReportContext detail::report_context(const ResolveResult& r) {
  return output::ReportContext{r.machine,  r.workspace,  r.index_url,     r.index_origin,  r.policy_source,
                               r.packages_json_note, r.source, r.fetch_note, r.failover_note, tls_note(r.trust)};
}

namespace {

// The answer of a result alone (its one machine), for its lock files.
answer::Answer answer_of(const ResolveResult& r) {
  return answer::build({{"machine", r.resolution.get(), r.index.get(), r.index_url, r.machine.python}});
}

// `format` written for the result's one machine.
Expected<std::string> write_one(const ResolveResult& r, const output::Format& format, const output::PixiPins& pins) {
  const answer::Answer a = answer_of(r);
  const output::ReportContext context = detail::report_context(r);
  return format.write(output::Target{a, a.machines.front(), r.resolution.get(), &context, pins});
}

}  // namespace

std::string ResolveResult::json() const {
  if (error || !resolution) {
    const std::string message = error ? error->message : "no result";
    return boost::json::serialize(boost::json::object{
               {"error", boost::json::object{{"exit_code", exit_code}, {"message", message}}}}) + "\n";
  }
  return write_one(*this, *output::formats().named("json"), {}).value();
}

std::string ResolveResult::report() const {
  if (error || !resolution) return "wheelfit: " + (error ? error->message : std::string("no result")) + "\n";
  return write_one(*this, *output::formats().named("report"), {}).value();
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

ResolveResult resolve(const ResolveRequest& req) {
  // The fleet of one (fleet.cpp): request.machine as given, or this machine detected.
  return detail::resolve_one(req);
}

}  // namespace wheelfit::api
