// ROCm detection: the probes (sysfs reads), the visible-device lists and the detect JSON.
#include "wheelfit/backends/rocm_detect.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <set>
#include <system_error>

#include <boost/json.hpp>

namespace wheelfit::backends::rocm {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

constexpr std::size_t kMaxSysfsFile = 64 * 1024;  // sysfs attributes are one page at most

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\r\n\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// A small file's text; not_found when it does not exist, io_error when it cannot be read.
Expected<std::string> read_small_file(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return unexpected(Errc::not_found, p.string() + ": no such file");
  std::ifstream in(p, std::ios::binary);
  if (!in) return unexpected(Errc::io_error, p.string() + ": cannot open for reading");
  std::string text;
  char buf[4096];
  while (text.size() < kMaxSysfsFile && in) {
    in.read(buf, static_cast<std::streamsize>(std::min(sizeof buf, kMaxSysfsFile - text.size())));
    text.append(buf, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return unexpected(Errc::io_error, p.string() + ": read failed");
  return text;
}

std::optional<std::string> env_value(const char* name) {
  if (const char* v = std::getenv(name)) return std::string(v);
  return std::nullopt;
}

char hex_digit(std::uint64_t d) { return "0123456789abcdef"[d & 0xf]; }

json::array string_array(const std::vector<std::string>& items) {
  json::array out;
  for (const auto& s : items) out.emplace_back(json::string(s));
  return out;
}

}  // namespace

DetectEnv DetectEnv::from_environment() {
  DetectEnv env;
  if (auto root = env_value("WHEELFIT_SYSROOT"); root && !root->empty()) env.sysroot = *root;
  env.rocr_visible_devices = env_value("ROCR_VISIBLE_DEVICES");
  env.hip_visible_devices = env_value("HIP_VISIBLE_DEVICES");
  return env;
}

fs::path DetectEnv::host_path(std::string_view absolute) const {
  if (sysroot.empty()) return fs::path(absolute);
  std::string_view rel = absolute;
  while (rel.starts_with('/')) rel.remove_prefix(1);
  return sysroot / rel;
}

// ---- pure functions ----

Expected<std::uint64_t> parse_gfx_target_version(std::string_view properties) {
  std::size_t start = 0;
  while (start <= properties.size()) {
    auto end = properties.find('\n', start);
    if (end == std::string_view::npos) end = properties.size();
    const std::string_view line = trim(properties.substr(start, end - start));
    start = end + 1;
    const auto space = line.find_first_of(" \t");
    if (space == std::string_view::npos || line.substr(0, space) != "gfx_target_version") continue;
    const std::string_view value = trim(line.substr(space));
    if (auto v = to_u64(value)) return *v;
    return unexpected(Errc::invalid_input, "gfx_target_version '" + std::string(value) + "' is not a decimal number");
  }
  return unexpected(Errc::invalid_input, "no gfx_target_version line");
}

Expected<std::string> gfx_target_name(std::uint64_t v) {
  if (v == 0) return unexpected(Errc::invalid_input, "gfx_target_version 0 is a CPU node, not a GPU");
  const std::uint64_t major = v / 10000;
  const std::uint64_t minor = (v / 100) % 100;
  const std::uint64_t step = v % 100;
  if (minor > 15 || step > 15) {
    return unexpected(Errc::invalid_input, "gfx_target_version " + std::to_string(v) + ": minor " + std::to_string(minor) +
                                               " or stepping " + std::to_string(step) + " is over 15 (one hex digit)");
  }
  std::string out = "gfx" + std::to_string(major);
  out += hex_digit(minor);
  out += hex_digit(step);
  return out;
}

VisibleDevices apply_visible_devices(const std::vector<Device>& devices, std::string_view name,
                                     const std::optional<std::string>& value) {
  if (!value) return {devices, ""};
  const std::string shown = std::string(name) + "='" + *value + "'";
  if (trim(*value).empty()) return {{}, shown + ": no GPU is visible"};
  std::vector<std::string_view> entries;
  for (std::size_t start = 0;;) {
    const auto comma = value->find(',', start);
    entries.push_back(trim(std::string_view(*value).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (auto e : entries) {
    if (e.size() > 4 && (e.substr(0, 4) == "GPU-" || e.substr(0, 4) == "gpu-")) {
      return {devices, shown + ": GPU UUIDs cannot be matched from the KFD topology; every GPU is counted"};
    }
  }
  VisibleDevices out;
  std::set<std::uint64_t> seen;
  std::string stopped;
  for (auto e : entries) {
    const auto i = to_u64(e);
    if (!i || *i >= devices.size() || !seen.insert(*i).second) {
      stopped = "'" + std::string(e) + "' is " +
                (!i ? "not an index" : *i >= devices.size() ? "out of range" : "a repeat") + " and ends the list";
      break;
    }
    out.devices.push_back(devices[static_cast<std::size_t>(*i)]);
  }
  for (std::size_t k = 0; k < out.devices.size(); ++k) out.devices[k].index = static_cast<int>(k);
  out.note = shown + ": " + std::to_string(out.devices.size()) + " of " + std::to_string(devices.size()) +
             " GPU(s) visible" + (stopped.empty() ? "" : " (" + stopped + ")");
  return out;
}

// ---- the probes ----

Expected<std::vector<KfdNode>> probe_kfd(const DetectEnv& env, std::vector<std::string>& notes) {
  const fs::path dir = env.host_path("/sys/class/kfd/kfd/topology/nodes");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return unexpected(Errc::not_found, dir.string() + " does not exist (the amdgpu kernel driver is not loaded, or "
                                                      "this machine has no AMD GPU)");
  }
  std::vector<std::pair<std::uint64_t, std::string>> folders;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (auto n = to_u64(name)) folders.emplace_back(*n, name);
  }
  if (ec) return unexpected(Errc::io_error, dir.string() + ": cannot list: " + ec.message());
  std::sort(folders.begin(), folders.end());

  std::vector<KfdNode> nodes;
  for (const auto& [number, name] : folders) {
    const fs::path props = dir / name / "properties";
    auto text = read_small_file(props);
    if (!text) {
      notes.push_back("KFD node " + name + ": " + text.error().message + "; skipped");
      continue;
    }
    auto version = parse_gfx_target_version(*text);
    if (!version) {
      notes.push_back("KFD node " + name + ": " + props.string() + ": " + version.error().message + "; skipped");
      continue;
    }
    KfdNode node{name, *version, ""};
    if (auto display = read_small_file(dir / name / "name")) node.name = std::string(trim(*display));
    nodes.push_back(std::move(node));
  }
  return nodes;
}

Expected<std::string> probe_amdgpu_version(const DetectEnv& env) {
  const fs::path module = env.host_path("/sys/module/amdgpu");
  std::error_code ec;
  if (!fs::is_directory(module, ec)) {
    return unexpected(Errc::not_found, "amdgpu driver version unknown: " + module.string() +
                                           " does not exist (the amdgpu module is not loaded)");
  }
  const fs::path file = module / "version";
  auto text = read_small_file(file);
  if (!text) {
    if (text.error().is(Errc::not_found)) {
      return unexpected(Errc::not_found, "amdgpu driver version unknown: " + file.string() +
                                             " is absent (the in-kernel amdgpu driver publishes no version; "
                                             "DKMS builds from AMD do)");
    }
    return unexpected(text.error().with_context("amdgpu driver version unknown"));
  }
  const std::string_view v = trim(*text);
  if (v.empty()) return unexpected(Errc::invalid_input, "amdgpu driver version unknown: " + file.string() + " is empty");
  return std::string(v);
}

Expected<std::vector<std::string>> probe_pci(const DetectEnv& env) {
  const fs::path dir = env.host_path("/sys/bus/pci/devices");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return unexpected(Errc::not_found, dir.string() + " does not exist");
  std::vector<std::string> found;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto vendor = read_small_file(it->path() / "vendor");
    auto cls = read_small_file(it->path() / "class");
    if (!vendor || !cls) continue;
    if (trim(*vendor) == "0x1002" && trim(*cls).starts_with("0x03")) found.push_back(it->path().filename().string());
  }
  if (ec) return unexpected(Errc::io_error, dir.string() + ": cannot list: " + ec.message());
  std::sort(found.begin(), found.end());
  return found;
}

// ---- detection ----

[[maybe_unused]] constexpr std::string_view kNotOnWindows =
    "ROCm detection is Linux-only (it reads the amdgpu driver's KFD topology in /sys): on Windows no AMD GPU "
    "is detected; give the machine's facts with WHEELFIT_OVERRIDE_* or a machine file to resolve for one";

Detection detect(const DetectEnv& env) {
  Detection d;
#ifdef _WIN32
  // KFD and amdgpu's sysfs files exist on Linux only; ROCm wheels are Linux-only too.
  (void)env;
  d.notes.push_back(std::string(kNotOnWindows));
  return d;
#endif
  auto nodes = probe_kfd(env, d.notes);
  if (!nodes) {
    d.notes.push_back("KFD: " + nodes.error().message);
    if (auto pci = probe_pci(env); pci && !pci->empty()) {
      std::string list;
      for (const auto& a : *pci) list += (list.empty() ? "" : ", ") + a;
      d.notes.push_back("PCI: an AMD display device is on the bus (" + list +
                        ") but KFD is absent: ROCm needs the amdgpu kernel driver loaded");
    }
  } else {
    std::vector<Device> gpus;
    for (const auto& node : *nodes) {
      if (node.gfx_target_version == 0) continue;  // a CPU node
      auto target = gfx_target_name(node.gfx_target_version);
      if (!target) {
        d.notes.push_back("KFD node " + node.node + ": " + target.error().message + "; skipped");
        continue;
      }
      gpus.push_back(Device{static_cast<int>(gpus.size()), node.node, node.name, *target});
    }
    d.present = !gpus.empty();
    if (gpus.empty()) d.notes.push_back("KFD: the topology lists no GPU node (only CPU nodes)");
    const std::size_t found = gpus.size();
    for (const auto& [var, value] : {std::pair{"ROCR_VISIBLE_DEVICES", env.rocr_visible_devices},
                                     std::pair{"HIP_VISIBLE_DEVICES", env.hip_visible_devices}}) {
      auto visible = apply_visible_devices(gpus, var, value);
      if (!visible.note.empty()) d.notes.push_back(visible.note);
      gpus = std::move(visible.devices);
    }
    if (found > 0 && gpus.empty()) d.notes.push_back("every AMD GPU found is hidden by the *_VISIBLE_DEVICES variables");
    d.devices = std::move(gpus);
    d.provenance["gpus"] =
        "KFD topology " + env.host_path("/sys/class/kfd/kfd/topology/nodes").string() + "/*/properties gfx_target_version";
  }
  if (auto v = probe_amdgpu_version(env)) {
    d.driver_version = *v;
    d.provenance["driver_version"] = env.host_path("/sys/module/amdgpu/version").string();
  } else {
    d.notes.push_back(v.error().message);
  }
  return d;
}

std::string to_json(const Detection& d) {
  json::object facts;
  if (d.driver_version) facts.emplace("driver_version", *d.driver_version);
  json::array devices;
  if (d.devices) {
    std::vector<std::string> targets;
    for (const auto& g : *d.devices) {
      targets.push_back(g.target);
      devices.emplace_back(json::object{{"index", g.index}, {"name", g.name}, {"target", g.target}, {"node", g.node}});
    }
    facts.emplace("gpus", string_array(targets));
  }
  json::object provenance;
  for (const auto& [k, v] : d.provenance) provenance.emplace(k, v);
  json::object out{{"present", d.present},
                   {"facts", std::move(facts)},
                   {"provenance", std::move(provenance)},
                   {"devices", std::move(devices)},
                   {"notes", string_array(d.notes)}};
  return json::serialize(out);
}

std::string detect_json() noexcept {
  try {
    return to_json(detect(DetectEnv::from_environment()));
  } catch (const std::exception& e) {
    try {
      return json::serialize(json::object{{"present", false}, {"error", std::string("ROCm detection failed: ") + e.what()}});
    } catch (...) {
    }
  } catch (...) {
  }
  return R"({"present": false, "error": "ROCm detection failed"})";
}

}  // namespace wheelfit::backends::rocm
