// The pure parts of CUDA detection: nvidia-smi CSV, /proc version text, CUDA_VISIBLE_DEVICES,
// and the driver -> CUDA table.

#include <algorithm>
#include <array>
#include <charconv>
#include <string>

#include "wheelfit/backends/cuda_detect.hpp"
#include "wheelfit/model/numeric_version.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::backends::cuda {
namespace {

using util::trim;
using util::ascii::all_digits;

std::optional<int> to_int(std::string_view s) noexcept {
  if (!all_digits(s) || s.size() > 9) return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "9.0", "12.0", "10.3": major.minor, each 1-2 digits.
bool is_compute_capability(std::string_view s) noexcept {
  auto dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  auto major = s.substr(0, dot), minor = s.substr(dot + 1);
  return all_digits(major) && all_digits(minor) && major.size() <= 2 && minor.size() <= 2 && major != "0";
}

// nvidia-smi's way of saying "no value": [N/A], [Not Supported], [Unknown Error], N/A, "".
bool smi_unknown(std::string_view v) noexcept {
  return v.empty() || v.front() == '[' || v == "N/A" || v == "Unknown";
}

std::string shown(std::string_view s, std::size_t max = 80) {
  std::string out = "'";
  out += s.substr(0, max);
  if (s.size() > max) out += "...";
  out += "'";
  return out;
}

bool iequal_prefix(std::string_view text, std::string_view prefix) noexcept {
  if (prefix.size() > text.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(text[i]) != lower(prefix[i])) return false;
  }
  return true;
}

}  // namespace

bool is_driver_version(std::string_view text) noexcept {
  std::size_t parts = 0;
  std::size_t start = 0;
  for (;;) {
    auto dot = text.find('.', start);
    auto part = text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!all_digits(part) || part.size() > 9) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts >= 2 && parts <= 4;
}

std::optional<std::string> cuda_version_text(int version) {
  if (version <= 0) return std::nullopt;
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

ProbeResult parse_nvidia_smi_csv(std::string_view text, bool with_compute_cap) {
  // Columns: index, name, uuid, [compute_cap,] driver_version. Fixed from the right.
  const std::size_t right = with_compute_cap ? 3 : 2;
  ProbeFacts facts;
  std::vector<Device> devices;
  std::string first_bad;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    auto line = trim(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    if (line.empty()) continue;

    std::vector<std::size_t> commas;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == ',') commas.push_back(i);
    }
    if (commas.size() < right + 1) {
      if (first_bad.empty()) first_bad = std::string(line);
      facts.notes.push_back("nvidia-smi: unexpected line " + shown(line));
      continue;
    }
    // Cells: [0, c0) index; (c0, c[n-right]) name; then the fixed right-hand cells.
    auto cell = [&](std::size_t from, std::size_t to) { return trim(line.substr(from, to - from)); };
    const std::size_t n = commas.size();
    auto index_text = cell(0, commas[0]);
    auto name = cell(commas[0] + 1, commas[n - right]);
    std::vector<std::string_view> fixed;
    for (std::size_t k = n - right; k < n; ++k) {
      fixed.push_back(cell(commas[k] + 1, k + 1 < n ? commas[k + 1] : line.size()));
    }
    auto index = to_int(index_text);
    if (!index) {
      if (first_bad.empty()) first_bad = std::string(line);
      facts.notes.push_back("nvidia-smi: unexpected line " + shown(line));
      continue;
    }
    Device d;
    d.index = *index;
    d.name = smi_unknown(name) ? "" : std::string(name);
    d.uuid = smi_unknown(fixed[0]) ? "" : std::string(fixed[0]);
    if (with_compute_cap) {
      auto cc = fixed[1];
      if (is_compute_capability(cc)) {
        d.compute_capability = std::string(cc);
      } else {
        facts.notes.push_back("nvidia-smi: GPU " + std::to_string(d.index) + ": compute capability " +
                              (smi_unknown(cc) ? std::string(cc.empty() ? "empty" : cc) : shown(cc)));
      }
    }
    auto driver = fixed.back();
    if (is_driver_version(driver)) {
      if (!facts.driver_version) {
        facts.driver_version = std::string(driver);
      } else if (*facts.driver_version != driver) {
        facts.notes.push_back("nvidia-smi: GPU " + std::to_string(d.index) + " reports driver " +
                              std::string(driver) + ", GPU 0 " + *facts.driver_version);
      }
    } else if (!smi_unknown(driver)) {
      facts.notes.push_back("nvidia-smi: unexpected driver version " + shown(driver));
    }
    devices.push_back(std::move(d));
  }
  if (devices.empty() && !first_bad.empty()) {
    return Error(Errc::invalid_input, "nvidia-smi: no GPU in its output, which begins " + shown(first_bad));
  }
  facts.devices = std::move(devices);
  return facts;
}

Expected<std::string> parse_proc_driver_version(std::string_view text) {
  constexpr std::string_view key = "NVRM version:";
  auto at = text.find(key);
  if (at == std::string_view::npos) {
    return Error(Errc::invalid_input, "no 'NVRM version:' line in " + shown(trim(text)));
  }
  auto end = text.find('\n', at);
  auto line = text.substr(at + key.size(), end == std::string_view::npos ? std::string_view::npos : end - at - key.size());
  // "NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." or
  // "NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (...)  ...":
  // the first whitespace-separated token that is a dotted driver version.
  std::size_t pos = 0;
  while (pos < line.size()) {
    auto b = line.find_first_not_of(" \t\r", pos);
    if (b == std::string_view::npos) break;
    auto e = line.find_first_of(" \t\r", b);
    auto token = line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
    if (is_driver_version(token)) return std::string(token);
    pos = e == std::string_view::npos ? line.size() : e;
  }
  return Error(Errc::invalid_input, "no driver version in " + shown(trim(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at))));
}

namespace {

// Which device one CUDA_VISIBLE_DEVICES entry names: its position in the list (npos: none, with
// `why`); `mig` for a MIG instance; `unmatchable` for a MIG instance when no device lists any.
struct EntryMatch {
  std::size_t match = std::string::npos;
  std::string why;
  bool mig = false;
  bool unmatchable = false;
};

EntryMatch match_entry(const std::vector<Device>& devices, std::string_view entry, bool any_mig_info) {
  EntryMatch m;
  auto match_unique = [&](auto&& pred) {
    std::size_t found = std::string::npos, count = 0;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (pred(devices[i])) {
        found = i;
        ++count;
      }
    }
    if (count == 1) return found;
    m.why = count == 0 ? "no such GPU" : "matches several GPUs";
    return std::string::npos;
  };
  if (iequal_prefix(entry, "MIG-GPU-")) {
    // The old MIG form: MIG-GPU-<gpu uuid>/<gi>/<ci>.
    m.mig = true;
    auto gpu = entry.substr(4, entry.find('/') == std::string_view::npos ? std::string_view::npos : entry.find('/') - 4);
    m.match = match_unique([&](const Device& d) { return !d.uuid.empty() && iequal_prefix(d.uuid, gpu); });
  } else if (iequal_prefix(entry, "MIG-")) {
    m.mig = true;
    if (!any_mig_info) {
      m.unmatchable = true;
      return m;
    }
    m.match = match_unique([&](const Device& d) {
      return std::any_of(d.mig_uuids.begin(), d.mig_uuids.end(), [&](const std::string& u) { return iequal_prefix(u, entry); });
    });
  } else if (iequal_prefix(entry, "GPU-")) {
    m.match = match_unique([&](const Device& d) { return !d.uuid.empty() && iequal_prefix(d.uuid, entry); });
  } else if (auto n = to_int(entry)) {
    m.match = match_unique([&](const Device& d) { return d.index == *n; });
    if (m.match == std::string::npos) m.why = "out of range: " + std::to_string(devices.size()) + " GPU(s)";
  } else {
    m.why = entry.empty() ? "empty" : "not an index or a GPU-/MIG- UUID";
  }
  return m;
}

}  // namespace

VisibleDevices apply_visible_devices(const std::vector<Device>& devices, const std::optional<std::string>& value) {
  VisibleDevices out;
  if (!value) {
    out.devices = devices;
    return out;
  }
  const std::string head = "CUDA_VISIBLE_DEVICES=" + shown(*value, 200);
  if (trim(*value).empty()) {
    out.note = head + ": no GPU is visible";
    return out;
  }
  std::vector<bool> used(devices.size(), false);
  std::string stopped;
  bool any_mig_info = std::any_of(devices.begin(), devices.end(), [](const Device& d) { return !d.mig_uuids.empty(); });
  std::string_view rest = *value;
  for (;;) {
    auto comma = rest.find(',');
    auto entry = trim(rest.substr(0, comma));
    auto [match, why, mig, unmatchable] = match_entry(devices, entry, any_mig_info);
    if (unmatchable) {
      out.devices = devices;
      out.note = head + ": MIG instance " + shown(entry) +
                 " cannot be matched to a GPU (the answering probe lists no MIG instances); every GPU is kept";
      return out;
    }
    if (match != std::string::npos && used[match] && !mig) {
      match = std::string::npos;
      why = "GPU listed twice";
    }
    if (match == std::string::npos) {
      stopped = "entry " + shown(entry) + " (" + why + ") ends the list";
      break;
    }
    if (!used[match]) {
      used[match] = true;
      out.devices.push_back(devices[match]);
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  std::string visible;
  for (const auto& d : out.devices) {
    if (!visible.empty()) visible += ", ";
    visible += std::to_string(d.index);
  }
  out.note = head + ": " + (out.devices.empty() ? std::string("no GPU is visible") : "visible GPU index(es) " + visible) +
             " of " + std::to_string(devices.size());
  if (!stopped.empty()) out.note += "; " + stopped;
  return out;
}

// NVIDIA, CUDA Toolkit release notes, "CUDA Toolkit and Corresponding Driver Versions": the
// minimum driver of each toolkit minor's GA release (later updates of a minor raise the floor,
// but a driver meeting the GA floor already reports that minor as its CUDA version). Written
// from memory of that table; see docs/detection.md.
constexpr std::array<DriverFloor, 22> kDriverTable{{
    {"13.0", "580.65.06", "580.88"},
    {"12.9", "575.51.03", "576.02"},
    {"12.8", "570.26", "570.65"},
    {"12.6", "560.28.03", "560.76"},
    {"12.5", "555.42.02", "555.85"},
    {"12.4", "550.54.14", "551.61"},
    {"12.3", "545.23.06", "545.84"},
    {"12.2", "535.54.03", "536.25"},
    {"12.1", "530.30.02", "531.14"},
    {"12.0", "525.60.13", "527.41"},
    {"11.8", "520.61.05", "520.06"},
    {"11.7", "515.43.04", "516.01"},
    {"11.6", "510.39.01", "511.23"},
    {"11.5", "495.29.05", "496.04"},
    {"11.4", "470.42.01", "471.11"},
    {"11.3", "465.19.01", "465.89"},
    {"11.2", "460.27.03", "460.82"},
    {"11.1", "455.23", "456.38"},
    {"11.0", "450.36.06", "451.22"},
    {"10.2", "440.33", "441.22"},
    {"10.1", "418.39", "418.96"},
    {"10.0", "410.48", "411.31"},
}};

std::span<const DriverFloor> driver_table() noexcept { return kDriverTable; }

std::optional<std::string> max_cuda_for_driver(std::string_view driver, DriverOs os) {
  if (!is_driver_version(driver)) return std::nullopt;
  auto have = model::NumericVersion::parse(driver);
  if (!have) return std::nullopt;
  for (const auto& row : kDriverTable) {
    auto floor = model::NumericVersion::parse(os == DriverOs::windows_os ? row.windows_driver : row.linux_driver);
    if (floor && *have >= *floor) return std::string(row.cuda);
  }
  return std::nullopt;
}

}  // namespace wheelfit::backends::cuda
