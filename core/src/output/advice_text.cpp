#include "advice_text.hpp"

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

}  // namespace

void write_advice(std::ostream& os, const resolve::Resolution& r) {
  if (!r.advice) return;
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

json::object advice_json(const resolve::Resolution& r) {
  json::object out;
  if (!r.advice) return out;
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

}  // namespace wheelfit::output::detail
