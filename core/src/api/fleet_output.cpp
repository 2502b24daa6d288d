// What a fleet's result prints (wheelfit/api.hpp: FleetResult::write_json, write_report,
// summary): written to a sink a row at a time, never the fleet's whole text at once. Identical
// machines share one resolution (fleet.cpp); its text but for the profile is serialised once
// for all of them (output::json_report_shared, human_report_shared) and dropped after its last row.
#include <algorithm>
#include <iterator>
#include <unordered_map>

#include <boost/json.hpp>

#include "wheelfit/api.hpp"

#include "wheelfit/api/results.hpp"

namespace wheelfit::api {
namespace {

// The summary's row of one machine: its combo and tier ("-" when none) and its status.
struct SummaryRow {
  std::string machine, combo = "-", tier = "-", status;
};

std::vector<SummaryRow> summary_rows(const FleetResult& f) {
  std::vector<SummaryRow> rows;
  for (std::size_t i = 0; i < f.machines.size(); ++i) {
    const ResolveResult& r = f.machines[i];
    SummaryRow row;
    row.machine = i < f.fleet.size() ? f.fleet[i].name : std::to_string(i + 1);
    if (r.resolution && r.resolution->ok()) {
      row.combo = r.resolution->combo_str(*r.resolution->combo);
      row.tier = *r.resolution->tier;
    }
    row.status = r.status_class();
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string summary_table(const std::vector<SummaryRow>& rows) {
  std::size_t w[3] = {7, 5, 4};  // "machine", "combo", "tier"
  for (const auto& r : rows) {
    w[0] = std::max(w[0], r.machine.size());
    w[1] = std::max(w[1], r.combo.size());
    w[2] = std::max(w[2], r.tier.size());
  }
  auto line = [&w](const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
    return a + std::string(w[0] - a.size() + 2, ' ') + b + std::string(w[1] - b.size() + 2, ' ') + c +
           std::string(w[2] - c.size() + 2, ' ') + d + "\n";
  };
  std::string out = line("machine", "combo", "tier", "status");
  for (const auto& r : rows) out += line(r.machine, r.combo, r.tier, r.status);
  return out;
}

// Everything the shared texts read of a row besides its resolution (output/report.hpp), as one
// key: the twins of one fleet have the same; rows someone else made to share a resolution under
// different contexts get a text each.
std::string context_key(const output::ReportContext& c) {
  std::string key;
  auto add = [&key](std::string_view s) { key.append(std::to_string(s.size())).append(":").append(s); };
  for (const std::string* s : {&c.index_url, &c.index_origin, &c.policy_source, &c.packages_json_note, &c.source,
                               &c.fetch_note, &c.failover_note})
    add(*s);
  if (c.tls) {
    add(c.tls->trust_from);
    for (const auto& l : c.tls->trust) add(l.path + "\n" + l.from);
    if (c.tls->client_cert) add(c.tls->client_cert->path + "\n" + c.tls->client_cert->from);
  }
  key += c.tls ? "|envs" : "-|envs";
  for (const auto& e : c.workspace.envs) {
    add(e.name);
    for (const auto& p : e.packages) add(p.name);
    key += ';';
  }
  return key;
}

// A row printed from its resolution (else from its error, as ResolveResult::json() does).
bool shares_text(const ResolveResult& r) { return !r.error && r.resolution; }

// The shared texts of the rows being written: each made at its resolution's first row, kept
// while a row still needs it; the verdict lists' texts in them made once for all of them.
template <class Text>
class SharedTexts {
 public:
  using Make = Text (*)(const resolve::Resolution&, const output::ReportContext&, output::VerdictTexts&);
  SharedTexts(const FleetResult& f, Make make) : make_(make) {
    for (const auto& r : f.machines)
      if (shares_text(r)) ++rows_left_[r.resolution.get()];
  }
  // The text of `r` (a row with a resolution); valid until the next call.
  const Text& of(const ResolveResult& r, const output::ReportContext& ctx) {
    const resolve::Resolution* res = r.resolution.get();
    auto& kept = texts_[res];
    std::string key = context_key(ctx);
    auto it = std::find_if(kept.begin(), kept.end(), [&key](const auto& k) { return k.first == key; });
    if (it == kept.end()) {
      kept.emplace_back(std::move(key), make_(*res, ctx, verdicts_));
      it = std::prev(kept.end());
      ++made_;
    }
    if (--rows_left_[res] == 0) {  // its last row: handed out, then dropped at the next call
      last_ = std::move(it->second);
      texts_.erase(res);
      return last_;
    }
    return it->second;
  }
  [[nodiscard]] std::size_t made() const { return made_; }

 private:
  Make make_;
  output::VerdictTexts verdicts_;
  std::unordered_map<const resolve::Resolution*, std::size_t> rows_left_;
  std::unordered_map<const resolve::Resolution*, std::vector<std::pair<std::string, Text>>> texts_;
  Text last_{};
  std::size_t made_ = 0;
};

// A row's object, its first brace dropped, after `{"name":...`: `one` is a whole object text.
void write_after_name(std::string_view one, const TextSink& sink) {
  while (!one.empty() && one.back() == '\n') one.remove_suffix(1);
  if (one.size() <= 2) return sink("}");
  sink(",");
  sink(one.substr(1));
}

std::string error_object(int code, const std::string& message) {
  return boost::json::serialize(boost::json::object{{"error", boost::json::object{{"exit_code", code}, {"message", message}}}}) + "\n";
}

}  // namespace

std::size_t FleetResult::write_json(const TextSink& sink, bool close) const {
  const FleetResult& f = *this;
  if (f.error) {
    const std::string text = error_object(f.exit_code, f.error->message);
    sink(close ? std::string_view(text) : std::string_view(text).substr(0, text.size() - 2));
    return 0;
  }
  // Each machine's object is ResolveResult::json()'s text with "name" spliced in first ("name",
  // not "machine": the single object's "machine" is the profile).
  const auto rows = summary_rows(f);
  SharedTexts<output::JsonReportParts> texts(f, &output::json_report_shared);
  sink("{\"machines\":[");
  for (std::size_t i = 0; i < f.machines.size(); ++i) {
    const ResolveResult& r = f.machines[i];
    sink(i ? ",{\"name\":" : "{\"name\":");
    sink(boost::json::serialize(boost::json::value(rows[i].machine)));
    if (!shares_text(r)) {
      write_after_name(r.json(), sink);
      continue;
    }
    const auto ctx = r.report_context();
    const auto& parts = texts.of(r, ctx);
    sink(",");
    parts.head.write(sink, 1);  // its "{" is the row's, opened before "name"
    sink(output::json_report_machine(*r.resolution, r.machine));
    sink(std::string_view(parts.tail).substr(0, parts.tail.size() - 1));  // its newline dropped
  }
  boost::json::array summary;
  for (const auto& row : rows) {
    auto opt = [](const std::string& s) { return s == "-" ? boost::json::value(nullptr) : boost::json::value(s); };
    summary.push_back(boost::json::object{{"machine", row.machine}, {"combo", opt(row.combo)}, {"tier", opt(row.tier)},
                                          {"status", row.status}});
  }
  sink("],\"summary\":" + boost::json::serialize(summary) + (close ? "}\n" : ""));
  return texts.made();
}

std::size_t FleetResult::write_json(const TextSink& sink) const { return write_json(sink, true); }

std::size_t FleetResult::write_report(const TextSink& sink) const {
  if (error) {
    sink("wheelfit: " + error->message + "\n");
    return 0;
  }
  const auto rows = summary_rows(*this);
  SharedTexts<output::TextPieces> texts(*this, &output::human_report_shared);
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const ResolveResult& r = machines[i];
    sink("== " + rows[i].machine + " ==\n");
    if (!shares_text(r)) {
      sink(r.report());
    } else {
      const auto ctx = r.report_context();
      sink(output::human_report_machine(*r.resolution, r.machine));
      texts.of(r, ctx).write(sink);
    }
    sink("\n");
  }
  sink("summary:\n" + summary_table(rows));
  return texts.made();
}

std::string FleetResult::json() const {
  return detail::collected([this](const TextSink& sink) { write_json(sink); });
}

std::string FleetResult::report() const {
  return detail::collected([this](const TextSink& sink) { write_report(sink); });
}

std::string FleetResult::summary() const { return summary_table(summary_rows(*this)); }

}  // namespace wheelfit::api
