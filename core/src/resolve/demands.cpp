#include "wheelfit/resolve/demands.hpp"

#include <set>

#include "wheelfit/util/text.hpp"

namespace wheelfit::resolve {

using model::NumericVersion;
using util::join;

std::string_view to_string(Demand d) noexcept {
  switch (d) {
    case Demand::gpu_arch: return "gpu_arch";
    case Demand::torch: return "torch";
    case Demand::line: return "line";
    case Demand::python: return "python";
    case Demand::cpu_arch: return "cpu_arch";
    case Demand::os: return "os";
    case Demand::glibc: return "glibc";
    case Demand::variant: return "variant";
  }
  return "unknown";
}

const std::vector<Demand>& all_demands() {
  static const std::vector<Demand> all{Demand::gpu_arch, Demand::torch,    Demand::line, Demand::python,
                                       Demand::cpu_arch, Demand::os, Demand::glibc, Demand::variant};
  return all;
}

std::string demand_name(Demand d, const semantics::LineNotation& notation) {
  if (d == Demand::line && !notation.key.empty()) return notation.key;
  return std::string(to_string(d));
}

// ---- the wheel's tags

std::string python_tags_text(const model::WheelName& w) {
  std::vector<std::string> out;
  for (const auto& py : w.python_tags)
    for (const auto& abi : w.abi_tags) out.push_back(py + "-" + abi);
  return join(out, ", ");
}

std::string platform_tags_text(const model::WheelName& w) {
  std::vector<std::string> out;
  for (const auto& p : w.platforms) out.push_back(p.tag);
  return join(out, ".");
}

std::string cpu_archs_text(const model::WheelName& w) {
  std::set<std::string> archs;
  for (const auto& p : w.platforms) archs.insert(p.cpu_arch.empty() ? "any" : p.cpu_arch);
  return join({archs.begin(), archs.end()}, ", ");
}

std::string oses_text(const model::WheelName& w) {
  std::set<std::string> oses;
  for (const auto& p : w.platforms) {
    oses.insert(p.os ? std::string(model::to_string(*p.os)) : p.kind == model::PlatformTag::Kind::any ? "any" : p.tag);
  }
  return join({oses.begin(), oses.end()}, ", ");
}

std::optional<std::string> libc_floor_text(const model::PlatformTag& t) {
  if (!t.libc) return std::nullopt;
  return (t.kind == model::PlatformTag::Kind::musllinux ? "musl " : "glibc >= ") + t.libc->str();
}

std::optional<model::PlatformFit> platform_fit(const model::WheelName& w, const machine::Machine& m) {
  if (!m.os || !m.cpu_arch) return std::nullopt;
  return model::best_platform_fit(w, model::PlatformTarget{*m.os, *m.cpu_arch, m.glibc});
}

// ---- device targets

Expected<std::optional<std::vector<std::string>>> device_targets(const machine::Machine& m, const semantics::Policy& policy) {
  if (!m.gpus || !policy.rules()) return std::optional<std::vector<std::string>>{};
  std::vector<std::string> out;
  for (const auto& g : *m.gpus) {
    auto t = policy.rules()->parse_target(g);
    if (!t) {
      const auto from = m.provenance.find("gpus");
      return unexpected(Errc::invalid_input, (from != m.provenance.end() ? from->second + ": " : std::string()) + "gpus: '" +
                                                 g + "' " + t.error().message);
    }
    out.push_back(std::move(*t));
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

std::string targets_text(std::string_view device_prefix, const std::vector<std::string>& targets) {
  return std::string(device_prefix) + join(targets, ", ");
}

std::string gpus_text(std::string_view device_prefix, const std::optional<std::vector<std::string>>& gpus) {
  if (!gpus) return "unknown";
  if (gpus->empty()) return "no GPU";
  return targets_text(device_prefix, *gpus);
}

Coverage cover(const semantics::Policy& policy, const std::string& list, const std::vector<std::string>& targets) {
  Coverage out;
  for (const auto& t : targets) {
    auto m = list.empty() || !policy.rules() ? Expected<semantics::DeviceRules::Match>(semantics::DeviceRules::Match{})
                                             : policy.rules()->match(list, t);
    if (m && m->covers()) out.served.emplace_back(t, std::move(*m));
    else out.uncovered.push_back(t);
  }
  return out;
}

std::string runs_text(const semantics::Policy& policy, const std::string& target, const semantics::DeviceRules::Match& m) {
  return policy.device_prefix() + target + " runs " + m.via +
         (m.kind == semantics::DeviceRules::Match::Kind::jit ? ", JIT-compiled by the driver (slow first launch)" : "");
}

// ---- the driver

DriverVerdict judge_driver(const NumericVersion& line, const machine::Machine& m, const semantics::Policy& policy) {
  DriverVerdict out;
  const std::string& name = policy.notation().name;
  if (policy.driver_rule() == semantics::DriverRule::unknown) return out;
  if (m.driver_line) {
    out.checked = true;
    const bool runs = policy.driver_rule() == semantics::DriverRule::same_major ? m.driver_line->major() >= line.major()
                                                                             : *m.driver_line >= line;
    if (!runs) {
      out.failure = Failure{Demand::line, name + " " + line.str() + " runtime", "driver supports " + name + " " + m.driver_line->str()};
    }
  } else if (m.driver_version && m.os) {
    if (auto min = policy.min_driver(line.major())) {
      out.checked = true;
      const auto& need = *m.os == model::Os::windows ? min->windows : min->linux_;
      if (*m.driver_version < need) {
        out.failure = Failure{Demand::line, name + " " + line.str() + " needs driver >= " + need.str(), "driver " + m.driver_version->str()};
      }
    }
  }
  return out;
}

}  // namespace wheelfit::resolve
