#include "advice_text.hpp"

#include <map>

#include <boost/json.hpp>

#include "wheelfit/util/text.hpp"

namespace wheelfit::output::detail {
namespace json = boost::json;
using resolve::Suggestion;

namespace {

constexpr std::size_t kShown = 3;

std::string install_text(const std::vector<resolve::Pin>& pins) {
  std::vector<std::string> parts;
  for (const auto& p : pins) parts.push_back(p.name + p.version);
  return util::join(parts, ", ") + (pins.empty() ? "" : " from " + pins.front().index);
}

json::value combo_json(const resolve::Resolution& r, const model::Combo& c) {
  return json::object{{r.notation.key, c.line.str()}, {"torch", c.torch.str()}};
}

// The torch that runs, when the machine's own cannot: the version, its line and index, its file.
void write_torch(std::ostream& os, const resolve::Resolution& r, const resolve::TorchAdvice& t) {
  const std::string& name = r.notation.name;
  os << "advice: torch " << t.installed << " cannot run on this machine: " << t.reason << "\n";
  if (t.line) {
    os << "  install torch " << t.version << " (" << name << " " << t.line->str()
       << ": its build covers every GPU and the driver runs it) from " << t.index << "\n";
    if (!t.file.empty()) {
      os << "    file:   " << t.file << "\n";
      os << "    sha256: " << t.sha256.value_or("unknown (the torch index publishes none)") << "\n";
    } else if (!t.file_note.empty()) {
      os << "    file:   not named: " << t.file_note << "\n";
    }
    std::vector<std::string> combos;
    for (const auto& c : t.combos) combos.push_back(r.combo_str(c));
    os << "    " << (combos.empty() ? "no farm combo covers every package with it" : "farm combos that cover every package with it: " + util::join(combos, ", "))
       << "\n";
  } else {
    os << "  no other " << name << " line of torch " << t.installed << " runs here\n";
  }
  for (const auto& why : t.lines_set_aside) os << "  not " << why << "\n";
  for (const auto& l : t.last) {
    os << "  " << resolve::targets_text(r.device_prefix, {l.gpu}) << ": torch " << l.torch.str() << " (" << name << " " << l.line.str()
       << ") is the last torch built for it here; newer builds leave it out\n";
  }
}

// The suggestions (best first), or the near misses.
void write_search(std::ostream& os, const resolve::Resolution& r) {
  const auto& a = *r.advice;
  if (a.suggestions.empty()) {
    os << "advice: no combo the index publishes covers every package on this machine (" << a.combos_searched
       << " searched)\n";
    for (std::size_t i = 0; i < a.near_misses.size() && i < kShown; ++i) {
      const auto& n = a.near_misses[i];
      os << "  " << r.combo_str(n.combo) << " misses " << n.missing.size() << ":\n";
      for (const auto& why : n.missing) os << "    " << why << "\n";
    }
    return;
  }
  os << "advice: " << a.suggestions.size() << " way" << (a.suggestions.size() == 1 ? "" : "s")
     << " to cover every package on this machine (" << a.combos_searched << " combos searched), best first:\n";
  for (std::size_t i = 0; i < a.suggestions.size() && i < kShown; ++i) {
    const Suggestion& s = a.suggestions[i];
    os << "  " << i + 1 << ". " << r.combo_str(s.combo);
    if (s.python) os << " with python " << s.python->str() << " (change the env's python)";
    os << ": install " << install_text(s.pins) << "\n";
    if (s.driver_upgrade) {
      os << "     the driver needs an upgrade: " << s.driver_upgrade->wheel << "; the machine's " << s.driver_upgrade->machine
         << "\n";
    }
    if (s.prereleases) os << "     " << s.prereleases << " of its picks are pre-releases\n";
  }
  if (a.suggestions.size() > kShown) os << "  (" << a.suggestions.size() - kShown << " more in --json)\n";
}

json::value torch_json(const resolve::Resolution& r, const std::optional<resolve::TorchAdvice>& advice) {
  if (!advice) return nullptr;
  const auto& t = *advice;
  const auto text_or_null = [](const std::string& s) { return s.empty() ? json::value(nullptr) : json::value(s); };
  json::array combos, lines, last;
  for (const auto& c : t.combos) combos.push_back(combo_json(r, c));
  for (const auto& l : t.lines_set_aside) lines.push_back(json::string(l));
  for (const auto& l : t.last) {
    last.push_back(json::object{{"gpu", l.gpu}, {"torch", l.torch.str()}, {r.notation.key, l.line.str()}});
  }
  return json::object{{"installed", t.installed},
                      {"reason", t.reason},
                      {"version", text_or_null(t.version)},
                      {"line", t.line ? json::value(t.line->str()) : json::value(nullptr)},
                      {"index", text_or_null(t.index)},
                      {"file", text_or_null(t.file)},
                      {"url", text_or_null(t.url)},
                      {"sha256", t.sha256 ? json::value(*t.sha256) : json::value(nullptr)},
                      {"file_note", t.file_note},
                      {"combos", std::move(combos)},
                      {"lines_set_aside", std::move(lines)},
                      {"last", std::move(last)}};
}

// The search's keys: combos_searched, suggestions (every one), near_misses.
json::object search_json(const resolve::Resolution& r) {
  json::object out;
  const auto& a = *r.advice;
  out["combos_searched"] = a.combos_searched;
  json::array suggestions;
  for (const auto& s : a.suggestions) {
    json::array covers, pins;
    for (const auto& c : s.covers) covers.push_back(json::string(c));
    for (const auto& p : s.pins) pins.push_back(json::object{{"name", p.name}, {"version", p.version}, {"index", p.index}});
    json::value driver = nullptr;
    if (s.driver_upgrade) driver = json::object{{"needs", s.driver_upgrade->wheel}, {"machine", s.driver_upgrade->machine}};
    suggestions.push_back(json::object{{"kind", s.kind == Suggestion::Kind::python ? "python" : "combo"},
                                       {"combo", combo_json(r, s.combo)},
                                       {"python", s.python ? json::value(json::string(s.python->str())) : json::value(nullptr)},
                                       {"covers", std::move(covers)},
                                       {"install", json::object{{"pins", std::move(pins)}}},
                                       {"driver_upgrade", std::move(driver)},
                                       {"prereleases", s.prereleases}});
  }
  out["suggestions"] = std::move(suggestions);
  json::array misses;
  for (const auto& n : a.near_misses) {
    json::array missing;
    for (const auto& m : n.missing) missing.push_back(json::string(m));
    misses.push_back(json::object{{"combo", combo_json(r, n.combo)}, {"missing", std::move(missing)}});
  }
  out["near_misses"] = std::move(misses);
  return out;
}

}  // namespace

void write_advice(std::ostream& os, const resolve::Resolution& r) {
  if (!r.advice) return;
  const auto& a = *r.advice;
  if (a.torch) write_torch(os, r, *a.torch);
  if (r.ok()) return;  // resolved: the torch's advice alone
  write_search(os, r);
  // The combos set aside, by the GPUs their torch leaves out (each build's list and source: --json).
  std::map<std::vector<std::string>, std::vector<std::string>> by_gpus;
  for (const auto& s : a.set_aside) by_gpus[s.uncovered].push_back(r.combo_str(s.combo));
  for (const auto& [gpus, combos] : by_gpus) {
    os << "  set aside, their torch cannot run on " << resolve::targets_text(r.device_prefix, gpus) << " (PyTorch's builds; each list in --json): "
       << util::join(combos, ", ") << "\n";
  }
}

json::object advice_json(const resolve::Resolution& r) {
  json::object out;
  if (!r.advice) return out;
  const auto& a = *r.advice;
  if (!r.ok()) out = search_json(r);  // resolved: the torch's advice alone
  json::array set_aside;
  for (const auto& s : a.set_aside) {
    json::array uncovered;
    for (const auto& g : s.uncovered) uncovered.push_back(json::string(g));
    set_aside.push_back(json::object{{"combo", combo_json(r, s.combo)}, {"reason", s.reason}, {"uncovered", std::move(uncovered)}});
  }
  out["advice"] = json::object{{"torch", torch_json(r, a.torch)}, {"set_aside", std::move(set_aside)}};
  return out;
}

}  // namespace wheelfit::output::detail
