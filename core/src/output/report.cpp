#include "wheelfit/output/report.hpp"

#include "advice_text.hpp"
#include "wheelfit/output/locks.hpp"

#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

#include <boost/json.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <variant>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

namespace wheelfit::output {
namespace json = boost::json;
using resolve::PackageOutcome;
using resolve::TierOutcome;

namespace {

// Every string in `v`, redacted (util::redact) in place.
void redact_strings(json::value& v) {
  if (auto* s = v.if_string()) {
    *s = util::redact(*s);
  } else if (auto* a = v.if_array()) {
    for (auto& e : *a) redact_strings(e);
  } else if (auto* o = v.if_object()) {
    for (auto& kv : *o) redact_strings(kv.value());
  }
}

std::string machine_summary(const machine::Machine& m, const resolve::Resolution& r) {
  const std::string& line_name = r.notation.name;
  std::vector<std::string> parts;
  if (m.os) parts.push_back(std::string(model::to_string(*m.os)));
  if (m.cpu_arch) parts.push_back(*m.cpu_arch);
  parts.push_back(m.glibc ? "glibc " + m.glibc->str() : "glibc ?");
  parts.push_back(m.python ? "python " + m.python->str() + (m.python_free_threaded ? "t" : "") : "python ?");
  parts.push_back(m.torch ? "torch " + m.torch->str() : "no torch");
  if (m.driver_version || m.driver_line) {
    parts.push_back("driver " + (m.driver_version ? m.driver_version->str() : std::string("?")) +
                    (m.driver_line ? " (" + line_name + " " + m.driver_line->str() + ")" : std::string()));
  } else {
    parts.push_back("driver ?");
  }
  if (!r.targets) parts.push_back("GPUs ?");
  else if (r.targets->empty()) parts.push_back("no GPU");
  else parts.push_back("GPUs " + resolve::targets_text(r.device_prefix, *r.targets));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string combo_str(const resolve::Resolution& r, const std::optional<model::Combo>& c) {
  return c ? r.combo_str(*c) : "none";
}

std::string tier_label(const TierOutcome& t) {
  if (t.tier == "requested") return "the requested combo (--combo)";
  return fmt::format("tier {} ({})", t.tier == "bootstrap" ? 1 : 2, t.tier);
}

std::string status_line(const resolve::Resolution& r, const TierOutcome& t) {
  switch (t.status) {
    case TierOutcome::Status::resolved: return combo_str(r, t.combo) + " -- covers every package";
    case TierOutcome::Status::failed: return (t.combo ? combo_str(r, t.combo) + " -- " : std::string()) + t.reason;
    case TierOutcome::Status::skipped: return (t.combo ? combo_str(r, t.combo) + " -- " : std::string()) + "skipped: " + t.reason;
    case TierOutcome::Status::set_aside: return combo_str(r, t.combo) + " -- set aside: " + t.reason;
  }
  return "";
}

void describe_package(std::ostringstream& os, const PackageOutcome& p) {
  os << "  " << p.name << " (" << p.python << (p.env.empty() ? "" : ", env " + p.env) << "): " << p.reason;
  if (!p.candidates.empty()) os << " (" << p.candidates.size() << " candidates, closest first)";
  os << "\n";
}

// Every candidate, one line each, closest to fitting first (fewest failed demands), then in
// page order; the JSON report carries the same verdicts. Redacted.
std::string candidate_lines(const resolve::CandidateVerdicts& candidates, const semantics::LineNotation& notation) {
  std::vector<const resolve::CandidateVerdict*> order;
  for (const auto& c : candidates) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->failed.size() + !a->note.empty() < b->failed.size() + !b->note.empty();
  });
  std::ostringstream os;
  for (const auto* c : order) {
    os << "    " << c->filename << "\n";
    if (!c->note.empty()) os << "      " << c->note << "\n";
    for (const auto& f : c->failed) {
      os << "      " << resolve::demand_name(f.demand, notation) << ": wheel " << f.wheel << "; machine " << f.machine << "\n";
    }
  }
  return util::redact(os.str());
}

// A report made in pieces: what `os` holds is added to `out` (redacted: every piece ends a line,
// and no redaction spans lines) before each shared piece.
struct PieceStream {
  TextPieces out;
  std::ostringstream os;
  void flush() {
    out.add(util::redact(os.str()));
    os.str({});
  }
};

// "; trust: /ca.pem (--cert), client certificate /me.pem (SSL_CLIENT_CERT)" for the index line.
std::string tls_text(const std::optional<TlsNote>& tls) {
  if (!tls) return "";
  std::string out = "; trust: ";
  if (tls->trust.empty()) out += "the system store";
  for (std::size_t i = 0; i < tls->trust.size(); ++i) {
    out += (i ? ", " : "") + tls->trust[i].path + " (" + tls->trust[i].from + ")";
  }
  if (tls->client_cert) out += ", client certificate " + tls->client_cert->path + " (" + tls->client_cert->from + ")";
  return out;
}

json::value tls_json(const std::optional<TlsNote>& tls) {
  if (!tls) return nullptr;
  json::array trust;
  for (const auto& l : tls->trust) trust.push_back(json::object{{"path", l.path}, {"from", l.from}});
  json::value client = nullptr;
  if (tls->client_cert) client = json::object{{"path", tls->client_cert->path}, {"from", tls->client_cert->from}};
  return json::object{{"trust_from", tls->trust_from}, {"trust", std::move(trust)}, {"client_cert", std::move(client)}};
}

// The installed torch's targets by kind ({"sass": [...], "ptx": [...]} for CUDA), its list and
// where they were read; null when they are unknown or there is no torch.
json::value torch_archs_json(const resolve::Resolution& r) {
  if (!r.machine_torch || !r.machine_torch->archs) return nullptr;
  const auto& archs = *r.machine_torch->archs;
  json::object out;
  for (const auto& [kind, items] : archs.entries) {
    json::array a;
    for (const auto& item : items) a.push_back(json::string(item));
    out[kind] = std::move(a);
  }
  out["list"] = archs.list;
  out["source"] = archs.source;
  return out;
}

}  // namespace

std::string human_report(const resolve::Resolution& r, const ReportContext& ctx) {
  VerdictTexts verdicts;
  return human_report_machine(r, ctx.machine) + human_report_shared(r, ctx, verdicts).str();
}

std::string human_report_machine(const resolve::Resolution& r, const machine::Machine& m) {
  // When the installed torch cannot run on the GPUs, nothing else matters first: the root cause.
  const std::string cause = r.torch_root_cause.empty() ? std::string() : "root cause: " + r.torch_root_cause + "\n";
  return util::redact("machine: " + machine_summary(m, r) + "\n" + cause);
}

TextPieces human_report_shared(const resolve::Resolution& r, const ReportContext& ctx, VerdictTexts& verdicts) {
  PieceStream text;
  std::ostringstream& os = text.os;
  os << "index:   " << util::strip_credentials(ctx.index_url) << " (" << ctx.index_origin << tls_text(ctx.tls) << ")\n";
  if (!ctx.packages_json_note.empty()) os << "         " << ctx.packages_json_note << "\n";
  if (!ctx.failover_note.empty()) os << "         " << ctx.failover_note << "\n";
  if (!ctx.fetch_note.empty()) os << "         " << ctx.fetch_note << "\n";
  if (r.ok()) {
    const auto& tier = *r.tier;
    const auto chosen = std::find_if(r.tiers.begin(), r.tiers.end(), [&](const TierOutcome& t) { return t.tier == tier; });
    os << "resolved: " << r.combo_str(*r.combo) << " via " << tier_label(*chosen) << "\n";
    for (const auto& t : r.tiers) {
      os << "  " << tier_label(t) << ": " << status_line(r, t) << "\n";
      if (!t.chosen.empty()) os << "    chosen: " << t.chosen << "\n";
    }
    os << "packages:\n";
    for (const auto& p : r.picks) {
      os << "  " << p.name << " " << p.version << " (" << p.python << (ctx.workspace.envs.size() > 1 ? ", env " + p.env : "") << ")\n";
      os << "    " << util::strip_credentials(p.url) << "\n";
      os << "    sha256: " << (p.sha256 ? *p.sha256 + " (" + p.sha256_source + ")" : std::string("unknown (no hash on the index)")) << "\n";
      if (!p.arch_source.empty()) os << "    archs:  " << p.arch_source << "\n";
      if (p.variant_label) {
        os << "    variant: " << *p.variant_label
           << (p.variant_properties.empty() ? std::string() : " (" + util::join(p.variant_properties, ", ") + ")")
           << (p.variant_note.empty() ? std::string() : "; " + p.variant_note) << "\n";
      }
    }
    os << "pins:\n";
    for (const auto& pin : r.pins) os << "  " << pin.name << " " << pin.version << " from " << util::strip_credentials(pin.index) << "\n";
    detail::write_advice(os, r);  // the machine's own torch cannot run: the torch that does
  } else {
    os << "No " << r.notation.name << " combo covers all required packages.\n";
    std::set<std::string> names, pythons;
    for (const auto& e : ctx.workspace.envs)
      for (const auto& p : e.packages) names.insert(p.name);
    for (const auto& t : r.tiers)
      for (const auto& p : t.packages) pythons.insert(p.python);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + ("'" + n + "'");
    os << "  packages: [" << list << "]\n";
    if (!pythons.empty()) {
      std::string py;
      for (const auto& p : pythons) py += (py.empty() ? "" : ", ") + p;
      os << "  python versions: " << py << "\n";
    }
    for (const auto& t : r.tiers) os << "  " << tier_label(t) << ": " << status_line(r, t) << "\n";
    for (const auto& t : r.tiers) {
      if (t.status != TierOutcome::Status::failed) continue;
      os << "why not " << (t.combo ? combo_str(r, t.combo) + " (" + t.tier + ")" : tier_label(t)) << ":\n";
      for (const auto& p : t.packages) {
        if (p.status == PackageOutcome::Status::resolved) continue;
        describe_package(os, p);
        text.flush();
        text.out.add(verdicts.lines(p.candidates, r.notation));
      }
    }
    detail::write_advice(os, r);
  }
  for (const auto& w : r.warnings) os << "warning: " << w << "\n";
  text.flush();  // redacted: notes and warnings may quote a URL or a header
  return std::move(text.out);
}

namespace {

json::value combo_json(const resolve::Resolution& r, const std::optional<model::Combo>& c) {
  if (!c) return nullptr;
  return json::object{{r.notation.key, c->line.str()}, {"torch", c->torch.str()}};
}

// The candidates' array of an unresolved package, serialised and redacted.
std::string candidates_json(const resolve::CandidateVerdicts& candidates, const semantics::LineNotation& notation) {
  json::array cands;
  for (const auto& c : candidates) {
    json::array failed;
    for (const auto& f : c.failed) {
      failed.push_back(json::object{{"demand", std::string(resolve::demand_name(f.demand, notation))}, {"wheel", f.wheel}, {"machine", f.machine}});
    }
    json::object cand{{"filename", c.filename}, {"url", util::strip_credentials(c.url)}, {"failed", std::move(failed)}};
    if (!c.note.empty()) cand["note"] = c.note;
    cands.push_back(std::move(cand));
  }
  json::value v = std::move(cands);
  redact_strings(v);
  return json::serialize(v);
}

// `value` serialised after its key, redacted: ',"key":value' (or '{"key":value' for the first).
std::string member(char open, std::string_view key, json::value value) {
  redact_strings(value);
  std::string out(1, open);
  out.append("\"").append(key).append("\":");
  return out + json::serialize(value);
}

// An object's text with its closing brace left open for more members.
std::string open_object(json::object o) {
  json::value v = std::move(o);
  redact_strings(v);
  std::string out = json::serialize(v);
  out.pop_back();
  return out;
}

// The array of the unresolved packages of `packages`, each object's "candidates" the list's
// shared text.
void add_unresolved(TextPieces& out, const resolve::Resolution& r, const std::vector<PackageOutcome>& packages,
                    VerdictTexts& verdicts) {
  char sep = '[';
  for (const auto& p : packages) {
    if (p.status == PackageOutcome::Status::resolved) continue;
    const char* status = p.status == PackageOutcome::Status::not_published ? "not_published"
                         : p.status == PackageOutcome::Status::read_failed ? "read_failed"
                                                                            : "no_fit";
    out.add(std::string(1, sep) + open_object({{"name", p.name}, {"env", p.env}, {"python", p.python}, {"status", status},
                                               {"reason", p.reason}}) + ",\"candidates\":");
    out.add(verdicts.json(p.candidates, r.notation));
    out.add("}");
    sep = ',';
  }
  out.add(sep == '[' ? "[]" : "]");
}

// {"label": ..., "properties": [...], "note": ...} for a variant wheel, null for any other.
json::value variant_json(const resolve::Pick& p) {
  if (!p.variant_label) return nullptr;
  json::array props;
  for (const auto& s : p.variant_properties) props.push_back(json::string(s));
  return json::object{{"label", *p.variant_label}, {"properties", std::move(props)}, {"note", p.variant_note}};
}

}  // namespace

std::string json_report(const resolve::Resolution& r, const ReportContext& ctx) {
  VerdictTexts verdicts;
  const JsonReportParts parts = json_report_shared(r, ctx, verdicts);
  return parts.head.str() + json_report_machine(r, ctx.machine) + parts.tail;
}

std::string json_report_machine(const resolve::Resolution& r, const machine::Machine& m) {
  json::value v = json::parse(machine::to_json(m));
  // What the machine supports for variant wheels, as the providers computed it (the profile's
  // own variant_properties merged in).
  v.as_object()["variant_properties"] = json::parse(model::variant_properties_json(r.variants.properties));
  v.as_object()["torch_archs"] = torch_archs_json(r);
  redact_strings(v);
  return json::serialize(v);
}

namespace {

json::array picks_json(const resolve::Resolution& r) {
  json::array packages;
  for (const auto& p : r.picks) {
    json::array unchecked;
    for (auto d : p.unchecked) unchecked.push_back(json::string(resolve::demand_name(d, r.notation)));
    packages.push_back(json::object{{"name", p.name},
                                    {"env", p.env},
                                    {"python", p.python},
                                    {"filename", p.filename},
                                    {"url", util::strip_credentials(p.url)},
                                    {"version", p.version},
                                    {"sha256", p.sha256 ? json::value(*p.sha256) : json::value(nullptr)},
                                    {"archs", p.arch_source},
                                    {"unchecked", std::move(unchecked)},
                                    {"variant", variant_json(p)}});
  }
  return packages;
}

// "unresolved": the packages of the tier that decided, or, when no tier was tried, every package
// with no candidate judged; "tiers": each tier's outcome.
void add_outcomes(TextPieces& out, const resolve::Resolution& r, const ReportContext& ctx, VerdictTexts& verdicts) {
  if (const auto* unresolved = r.unresolved_tier()) {
    out.add(",\"unresolved\":");
    add_unresolved(out, r, *unresolved, verdicts);
  } else {
    json::array none;  // resolved: none; else no tier was tried: every package, no candidate judged
    for (const auto& e : r.ok() ? std::vector<config::Env>{} : ctx.workspace.envs)
      for (const auto& p : e.packages)
        none.push_back(json::object{{"name", p.name}, {"env", e.name}, {"status", "no_combo"},
                                    {"reason", "no tier could be tried"}, {"candidates", json::array{}}});
    out.add(member(',', "unresolved", std::move(none)));
  }
  char sep = '[';
  out.add(",\"tiers\":");
  for (const auto& t : r.tiers) {
    const char* st = t.status == TierOutcome::Status::resolved    ? "resolved"
                     : t.status == TierOutcome::Status::failed    ? "failed"
                     : t.status == TierOutcome::Status::set_aside ? "set_aside"
                                                                  : "skipped";
    out.add(std::string(1, sep) + open_object({{"tier", t.tier}, {"combo", combo_json(r, t.combo)}, {"status", st},
                                               {"reason", t.reason}, {"chosen", t.chosen}}) + ",\"unresolved\":");
    add_unresolved(out, r, t.packages, verdicts);
    out.add("}");
    sep = ',';
  }
  out.add(sep == '[' ? "[]" : "]");
}

}  // namespace

JsonReportParts json_report_shared(const resolve::Resolution& r, const ReportContext& ctx, VerdictTexts& verdicts) {
  // Written member by member in the one object's order (each value redacted: warnings, reasons
  // and notes may quote a URL or a header); the candidates' arrays are the verdict lists' shared texts.
  JsonReportParts parts;
  TextPieces& out = parts.head;
  out.add(member('{', "combo", combo_json(r, r.combo)));
  out.add(member(',', "tier", r.tier ? json::value(*r.tier) : json::value(nullptr)));
  out.add(member(',', "packages", picks_json(r)));
  json::array pins;
  for (const auto& pin : r.pins) {
    pins.push_back(json::object{{"name", pin.name}, {"version", pin.version}, {"index", util::strip_credentials(pin.index)}});
  }
  out.add(member(',', "pins", std::move(pins)));
  add_outcomes(out, r, ctx, verdicts);
  if (r.advice) {
    for (auto& [key, value] : detail::advice_json(r)) out.add(member(',', key, std::move(value)));
  }
  json::array warnings;
  for (const auto& w : r.warnings) warnings.push_back(json::string(w));
  out.add(member(',', "warnings", std::move(warnings)));
  out.add(member(',', "index", json::object{{"url", util::strip_credentials(ctx.index_url)}, {"origin", ctx.index_origin},
                                            {"packages_json", ctx.packages_json_note}, {"source", ctx.source},
                                            {"failover", ctx.failover_note}, {"fetch", ctx.fetch_note},
                                            {"tls", tls_json(ctx.tls)}}));
  // "machine" (each row's own profile) and "policy" follow, as the one object has them last.
  out.add(",\"machine\":");
  parts.tail = member(',', "policy", json::string(ctx.policy_source)) + "}\n";
  return parts;
}

void TextPieces::add(std::string_view own) {
  if (own.empty()) return;
  if (!pieces_.empty() && std::holds_alternative<std::string>(pieces_.back())) std::get<std::string>(pieces_.back()).append(own);
  else pieces_.emplace_back(std::string(own));
}

void TextPieces::add(std::shared_ptr<const std::string> shared) {
  if (shared && !shared->empty()) pieces_.emplace_back(std::move(shared));
}

void TextPieces::write(const TextSink& sink, std::size_t skip) const {
  for (const auto& piece : pieces_) {
    std::string_view text = std::holds_alternative<std::string>(piece) ? std::string_view(std::get<std::string>(piece))
                                                                        : std::string_view(*std::get<1>(piece));
    const std::size_t skipped = std::min(skip, text.size());
    skip -= skipped;
    if (skipped < text.size()) sink(text.substr(skipped));
  }
}

std::string TextPieces::str() const {
  std::string out;
  write([&out](std::string_view piece) { out += piece; });
  return out;
}

std::shared_ptr<const std::string> VerdictTexts::json(const resolve::CandidateVerdicts& list, const semantics::LineNotation& n) {
  return made(list, n, false, &candidates_json);
}

std::shared_ptr<const std::string> VerdictTexts::lines(const resolve::CandidateVerdicts& list, const semantics::LineNotation& n) {
  return made(list, n, true, &candidate_lines);
}

std::shared_ptr<const std::string> VerdictTexts::made(const resolve::CandidateVerdicts& list, const semantics::LineNotation& n,
                                                      bool lines, Make make) {
  auto& text = texts_[Key{&list.list(), n.key, lines}];
  if (!text) {
    text = std::make_shared<const std::string>(make(list, n));
    ++made_;
  }
  return text;
}

namespace {

std::optional<std::string> pixi_platform(const machine::Machine& m) {
  if (!m.os || !m.cpu_arch) return std::nullopt;
  const auto& a = *m.cpu_arch;
  switch (*m.os) {
    case model::Os::linux_: return a == "x86_64" ? "linux-64" : a == "aarch64" ? "linux-aarch64" : std::optional<std::string>();
    case model::Os::windows: return a == "x86_64" ? "win-64" : a == "aarch64" ? "win-arm64" : std::optional<std::string>();
    case model::Os::macos: return a == "x86_64" ? "osx-64" : a == "aarch64" ? "osx-arm64" : std::optional<std::string>();
  }
  return std::nullopt;
}

// The accelerator facts of pixi's rich platform entry, for a backend whose line pixi models as
// virtual packages: today only CUDA (`cuda = { driver = "13.0", arch = "9.0" }` -> __cuda and
// __cuda_arch). `driver` is the highest line the driver runs; `arch` the lowest compute
// capability of the GPUs (as conda and pixi define __cuda_arch for several devices). Each is
// left out when unknown; nullopt when both are, or for another backend.
std::optional<toml::table> pixi_accelerator(const resolve::Resolution& r, const machine::Machine& m) {
  static constexpr std::string_view kPixiModels[] = {"cuda"};
  if (std::find(std::begin(kPixiModels), std::end(kPixiModels), r.notation.key) == std::end(kPixiModels)) return std::nullopt;
  toml::table t;
  if (m.driver_line) t.insert("driver", m.driver_line->truncated(2).str());
  std::optional<model::NumericVersion> lowest;
  if (r.targets) {
    for (const auto& target : *r.targets) {
      auto v = model::NumericVersion::parse(target);
      if (v && (!lowest || *v < *lowest)) lowest = *v;
    }
  }
  if (lowest) t.insert("arch", lowest->str());
  if (t.empty()) return std::nullopt;
  t.is_inline(true);
  return t;
}

toml::table& subtable(toml::table& parent, std::string_view key) {
  if (auto* t = parent[key].as_table()) return *t;
  parent.insert_or_assign(key, toml::table{});
  return *parent[key].as_table();
}

std::string value_text(const toml::node& n) {
  if (auto s = n.value_exact<std::string>()) return *s;
  if (auto b = n.value_exact<bool>()) return *b ? "true" : "false";
  if (auto i = n.value_exact<std::int64_t>()) return std::to_string(*i);
  if (auto d = n.value_exact<double>()) return fmt::format("{}", *d);
  std::ostringstream os;
  if (const auto* a = n.as_array()) os << *a;
  else if (const auto* t = n.as_table()) os << *t;
  return os.str();
}

/// What pixi.toml takes from the index (the picks' URLs and versions, the pins' versions and
/// indexes): refused when it is not UTF-8 (toml++ would write such a byte as another character;
/// decision 0021).
Expected<void> check_index_values(const resolve::Resolution& r) {
  constexpr std::string_view kFile = "pixi.toml";
  for (const auto& pin : r.pins) {
    for (const auto* value : {&pin.version, &pin.index}) {
      if (auto ok = check_lock_value(kFile, "the pin of " + pin.name, *value, LockValue::toml_string); !ok) return ok;
    }
  }
  for (const auto& pick : r.picks) {
    for (const auto* value : {&pick.url, &pick.version}) {
      if (auto ok = check_lock_value(kFile, "the pick " + pick.name, *value, LockValue::toml_string); !ok) return ok;
    }
  }
  return {};
}

}  // namespace

Expected<std::string> pixi_manifest(const resolve::Resolution& r, const ReportContext& ctx, const PixiPins& pins) {
  if (!r.ok()) return unexpected(Errc::usage, "no pixi.toml for an unresolved workspace");
  if (auto ok = check_index_values(r); !ok) return ok.error();
  // [workspace]
  toml::table ws;
  ws.insert("name", ctx.workspace.envs.size() == 1 ? ctx.workspace.envs[0].name : std::string("wheelfit-workspace"));
  toml::array channels;
  std::set<std::string> seen;
  for (const auto& e : ctx.workspace.envs)
    for (const auto& c : e.channels)
      if (seen.insert(c).second) channels.push_back(c);
  if (channels.empty()) channels.push_back("conda-forge");
  ws.insert("channels", std::move(channels));
  toml::array platforms;
  if (auto p = pixi_platform(ctx.machine)) {
    toml::table entry;
    entry.insert("platform", *p);
    if (ctx.machine.glibc && *ctx.machine.os == model::Os::linux_) entry.insert("glibc", ctx.machine.glibc->truncated(2).str());
    if (auto accel = pixi_accelerator(r, ctx.machine)) entry.insert(r.notation.key, std::move(*accel));
    entry.is_inline(true);
    platforms.push_back(std::move(entry));
  }
  ws.insert("platforms", std::move(platforms));

  toml::table features, environments;
  for (const auto& env : ctx.workspace.envs) {
    toml::table feature;
    if (!env.passthrough_toml.empty()) {
      toml::table parsed;
      try {
        parsed = toml::parse(env.passthrough_toml, env.file);
      } catch (const toml::parse_error& e) {
        return unexpected(Errc::invalid_input, env.file + ": cannot re-read its pass-through sections: " +
                                                   std::string(e.description()));
      }
      for (auto&& [key, node] : parsed) {
        if (key.str() == "env_vars") {
          // comfy-env's [env_vars] become pixi's [activation.env] (pixi's values are strings).
          if (const auto* vars = node.as_table()) {
            auto& env_tbl = subtable(subtable(feature, "activation"), "env");
            for (auto&& [k, v] : *vars) env_tbl.insert_or_assign(k.str(), value_text(v));
          }
          continue;
        }
        feature.insert_or_assign(key.str(), node);
      }
    }
    auto& deps = subtable(feature, "dependencies");
    const std::string py = env.python ? env.python->truncated(2).str()
                                      : (ctx.machine.python ? ctx.machine.python->truncated(2).str() : std::string());
    if (!py.empty() && !deps.contains("python")) deps.insert("python", py + ".*");
    auto& pypi = subtable(feature, "pypi-dependencies");
    for (const auto& pin : r.pins) {
      toml::table spec;
      spec.insert("version", pin.version);
      spec.insert("index", util::strip_credentials(pins.index && pins.torch_from_index ? *pins.index : pin.index));
      spec.is_inline(true);
      if (pypi.contains(pin.name)) {
        log::warn(env.file + ": [pypi-dependencies] " + pin.name + " replaced by the torch family pin " + pin.version);
      }
      pypi.insert_or_assign(pin.name, std::move(spec));
    }
    for (const auto& pick : r.picks) {
      if (pick.env != env.name) continue;
      toml::table spec;
      if (pins.index) {
        spec.insert("version", "==" + pick.version);
        spec.insert("index", util::strip_credentials(*pins.index));
      } else {
        // Credential-free: the installer authenticates from its own store (netrc, keyring; README).
        spec.insert("url", util::strip_credentials(pick.url) + (pick.sha256 ? "#sha256=" + *pick.sha256 : std::string()));
      }
      spec.is_inline(true);
      if (pypi.contains(pick.name)) {
        log::warn(env.file + ": [pypi-dependencies] " + pick.name + " replaced by the resolved wheel " + pick.filename);
      }
      pypi.insert_or_assign(pick.name, std::move(spec));
    }
    features.insert(env.name, std::move(feature));
    toml::array members;
    members.push_back(env.name);
    environments.insert(env.name, std::move(members));
  }
  std::ostringstream os;
  os << "# Generated by wheelfit: combo " << r.combo_str(*r.combo) << " (" << *r.tier << ") for "
     << machine_summary(ctx.machine, r)
     << ".\n# Index: " << util::strip_credentials(ctx.index_url) << "\n# Regenerate rather than edit: `wheelfit resolve ... -o pixi.toml`.\n\n";
  // Three documents so the sections read in pixi's order (toml++ sorts keys within a table).
  const auto flags = toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings;
  os << toml::toml_formatter(toml::table{{"workspace", std::move(ws)}}, flags) << "\n\n";
  os << toml::toml_formatter(toml::table{{"feature", std::move(features)}}, flags) << "\n\n";
  os << toml::toml_formatter(toml::table{{"environments", std::move(environments)}}, flags) << "\n";
  return os.str();
}

Expected<void> write_file_atomically(const std::string& path, const std::string& content) {
  const util::AtomicWriteOptions options{.durable = true, .keep_mode = true, .through_symlinks = true};
  auto file = util::AtomicFile::create(util::path_from_utf8(path), options);
  if (!file) return file.error();
  // What a run killed mid-write (SIGKILL) left beside the target: its writer is gone.
  const auto& target = file->target();
  util::remove_stale_temp_files(target.has_parent_path() ? target.parent_path() : std::filesystem::path("."),
                                target.filename().string());
  if (auto w = file->write(content); !w) return w;
  return file->commit();
}

}  // namespace wheelfit::output
