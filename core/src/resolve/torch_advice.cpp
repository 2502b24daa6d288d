// The torch gate in the advice and the torch that runs (torch_advice.hpp).
#include "torch_advice.hpp"

#include <algorithm>

namespace wheelfit::resolve::detail {

using model::NumericVersion;

long line_distance(const NumericVersion& a, const NumericVersion& b) {
  auto at = [](const NumericVersion& v, std::size_t i) {
    return i < v.parts().size() ? static_cast<long>(v.parts()[i]) : 0L;
  };
  const long da = at(a, 0) * 1000 + at(a, 1), db = at(b, 0) * 1000 + at(b, 1);
  return da > db ? da - db : db - da;
}

TorchJudge::TorchJudge(const Inputs& in, std::optional<Combo> own, const std::optional<std::vector<std::string>>& targets,
                       std::optional<std::string> platform)
    : in_(in), own_(std::move(own)), targets_(targets), platform_(std::move(platform)) {
  if (own_) machine_ = combo(*own_);
}

const TorchVerdict& TorchJudge::combo(const Combo& combo) {
  auto key = std::make_pair(combo.line, combo.torch.truncated(2));
  if (auto it = judged_.find(key); it != judged_.end()) return it->second;
  std::optional<TorchArchs> archs;
  if (own_ && *own_ == combo && in_.torch_archs) archs = in_.torch_archs;  // the installed torch's own bytes
  else if (platform_) archs = torch_archs_from_policy(in_.policy, combo, *platform_);
  return judged_.emplace(std::move(key), judge_torch(in_.policy, std::move(archs), targets_)).first->second;
}

std::optional<SetAside> TorchJudge::set_aside(const Combo& c) {
  const TorchVerdict& v = combo(c);
  if (!v.cannot_run()) return std::nullopt;
  return SetAside{c, cannot_run_text(v), v.uncovered};
}

std::string TorchJudge::cannot_run_text(const TorchVerdict& v) const {
  return resolve::cannot_run_text(in_.policy.device_prefix(), v);
}

namespace {

// "2.8.0+cu128": `version`'s public part with the backend's first torch label for `combo`.
std::string labelled(const semantics::Policy& policy, const model::Version& version, const Combo& combo) {
  const auto& labels = policy.torch_labels();
  const std::string shown = version.public_version().str();
  return labels.empty() ? shown : shown + "+" + labels.front().render(combo);
}

// The lines of the matrix for `minor` on `platform` other than `installed`, closest first (then
// the lower line).
std::vector<NumericVersion> other_lines(const semantics::Policy& policy, const std::string& platform, const NumericVersion& minor,
                                        const NumericVersion& installed) {
  std::vector<NumericVersion> out;
  const auto& table = policy.torch_arch_table();
  const auto plat = table.find(platform);
  if (plat == table.end()) return out;
  const auto rows = plat->second.find(minor.str());
  if (rows == plat->second.end()) return out;
  for (const auto& [key, row] : rows->second) {
    auto line = NumericVersion::parse(key);
    if (line && semantics::line_key(*line) != semantics::line_key(installed)) out.push_back(*line);
  }
  std::sort(out.begin(), out.end(), [&](const NumericVersion& a, const NumericVersion& b) {
    const long da = line_distance(a, installed), db = line_distance(b, installed);
    return da != db ? da < db : a < b;
  });
  return out;
}

// Why `combo`'s torch is not the one to install here ("" when it is).
std::string line_refused(const Inputs& in, TorchJudge& judge, const Combo& combo, const std::vector<EnvTarget>& envs,
                         const std::string& platform) {
  const TorchVerdict& v = judge.combo(combo);
  if (v.cannot_run()) return judge.cannot_run_text(v);
  if (v.status != TorchVerdict::Status::runs) return "whether its torch runs here is unknown: " + v.why_unknown;
  if (auto driver = judge_driver(combo.line, in.machine, in.policy); driver.failure) {
    return "the " + driver.failure->machine + "; it needs " + driver.failure->wheel;
  }
  for (const auto& e : envs) {
    if (!in.policy.pytorch_shipped(combo, e.python.version, platform)) {
      return "PyTorch ships no torch " + combo.torch.str() + " for it for " + e.python.tag() + " on " + platform;
    }
  }
  return "";
}

// For each GPU the newest torch minor's newest line leaves out on `platform`: the newest minor
// (and its newest line) whose build covers it.
std::vector<TorchAdvice::Last> last_builds(const Inputs& in, const std::vector<std::string>& targets, const std::string& platform) {
  std::vector<TorchAdvice::Last> out;
  const auto& table = in.policy.torch_arch_table();
  const auto plat = table.find(platform);
  if (plat == table.end() || plat->second.empty()) return out;
  std::map<NumericVersion, std::vector<NumericVersion>> rows;  // minor -> its lines, ascending
  for (const auto& [minor, lines] : plat->second) {
    auto m = NumericVersion::parse(minor);
    if (!m) continue;
    for (const auto& line : lines) {
      if (auto l = NumericVersion::parse(line.first)) rows[*m].push_back(*l);
    }
    std::sort(rows[*m].begin(), rows[*m].end());
  }
  auto covers = [&](const NumericVersion& minor, const NumericVersion& line, const std::string& target) {
    const auto v = judge_torch(in.policy, torch_archs_from_policy(in.policy, Combo{line, minor}, platform), std::vector{target});
    return v.status == TorchVerdict::Status::runs;
  };
  const auto& newest = *rows.rbegin();
  for (const auto& target : targets) {
    if (newest.second.empty() || covers(newest.first, newest.second.back(), target)) continue;
    for (auto minor = rows.rbegin(); minor != rows.rend(); ++minor) {
      const auto line = std::find_if(minor->second.rbegin(), minor->second.rend(),
                                     [&](const NumericVersion& l) { return covers(minor->first, l, target); });
      if (line == minor->second.rend()) continue;
      out.push_back({target, minor->first, *line});
      break;
    }
  }
  return out;
}

}  // namespace

TorchAdvice torch_advice(const Inputs& in, TorchJudge& judge, const std::vector<EnvTarget>& envs,
                         const std::optional<std::string>& platform, const Advice& advice) {
  TorchAdvice out;
  const auto& m = in.machine;
  const Combo& own = *judge.own();
  out.installed = m.torch ? m.torch->str() : own.torch.str();
  out.reason = judge.cannot_run_text(*judge.machine());
  if (!platform || !m.torch) return out;
  const std::string& name = in.policy.notation().name;
  for (const auto& line : other_lines(in.policy, *platform, own.torch.truncated(2), own.line)) {
    const Combo candidate{line, own.torch.truncated(2)};
    if (auto why = line_refused(in, judge, candidate, envs, *platform); !why.empty()) {
      out.lines_set_aside.push_back(name + " " + line.str() + ": " + why);
      continue;
    }
    if (out.line) continue;  // the closest line serves; the others are named with their reasons
    out.line = line;
    out.version = labelled(in.policy, *m.torch, candidate);
    out.index = in.policy.torch_index_url(line);
    for (const auto& s : advice.suggestions) {
      if (s.combo == candidate && std::find(out.combos.begin(), out.combos.end(), s.combo) == out.combos.end()) {
        out.combos.push_back(s.combo);
      }
    }
  }
  // Every GPU of the machine, not only those left out: a box may hold an older card too.
  if (judge.targets()) out.last = last_builds(in, *judge.targets(), *platform);
  return out;
}

}  // namespace wheelfit::resolve::detail
