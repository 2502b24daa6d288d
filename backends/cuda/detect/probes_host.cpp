// Probes 3-7: nvidia-smi, /proc and /sys driver versions, WSL's driver folder, the PCI bus.
// On Windows only nvidia-smi applies: the others read Linux files and say "not on Windows".

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "child_process.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/subprocess.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/backends/cuda_detect.hpp"

namespace wheelfit::backends::cuda {
namespace fs = std::filesystem;
namespace {

using util::trim;

std::string first_line(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    auto line = trim(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    if (!line.empty()) return std::string(line.substr(0, 200));
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return {};
}

// Small text files only (proc and sysfs files report size 0, so read to EOF). 64 KiB cap.
Expected<std::string> read_small_file(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return Error(Errc::not_found, p.string() + ": not found");
  std::ifstream in(p, std::ios::binary);
  if (!in) return Error(Errc::io_error, p.string() + ": cannot be read");
  std::string text(64 * 1024, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

ProbeResult probe_nvidia_smi(const std::string& program, std::chrono::milliseconds timeout) {
  std::error_code ec;
  if (program.empty()) return Error(Errc::not_found, "nvidia-smi: not found on PATH");
  if (!fs::is_regular_file(util::path_from_utf8(program), ec)) {
    return Error(Errc::not_found, "nvidia-smi: " + program + " not found");
  }
  auto run = [&](bool ask_cc) {
    return util::run_process({program,
                              ask_cc ? "--query-gpu=index,name,uuid,compute_cap,driver_version"
                                     : "--query-gpu=index,name,uuid,driver_version",
                              "--format=csv,noheader"},
                             timeout, 64 * 1024, util::probe_environment());
  };
  bool with_cc = true;
  auto started = run(true);
  if (!started) return Error(Errc::io_error, "nvidia-smi probe could not start: " + started.error().message);
  util::ProcessResult outcome = std::move(*started);
  if (!outcome.timed_out && !outcome.crashed() && outcome.exit_status != 0) {
    auto why = first_line(outcome.out + "\n" + outcome.err);
    if (why.find("compute_cap") != std::string::npos && why.find("not a valid field") != std::string::npos) {
      // Drivers before R510 do not know compute_cap: ask for the rest.
      with_cc = false;
      auto again = run(false);
      if (!again) return Error(Errc::io_error, "nvidia-smi probe could not start: " + again.error().message);
      outcome = std::move(*again);
    }
  }
  if (outcome.timed_out || outcome.crashed()) {
    return Error(Errc::io_error, "nvidia-smi probe " + outcome.describe(timeout));
  }
  if (outcome.exit_status != 0) {
    auto why = first_line(outcome.out + "\n" + outcome.err);
    return Error(Errc::io_error, "nvidia-smi: " + outcome.describe(timeout) + (why.empty() ? "" : ": " + why));
  }
  auto facts = parse_nvidia_smi_csv(outcome.out, with_cc);
  if (facts && !with_cc) {
    facts->notes.push_back("nvidia-smi: this driver's nvidia-smi has no compute_cap field");
  }
  return facts;
}

namespace {

#ifdef _WIN32
constexpr bool kLinuxHost = false;
#else
constexpr bool kLinuxHost = true;
#endif
/// What a Linux-only probe answers on Windows: `what` is a Linux file or folder.
Error not_on_windows(std::string_view probe, std::string_view what) {
  return Error(Errc::not_found, std::string(probe) + ": " + std::string(what) + ": not on Windows (a Linux driver file)");
}

/// The driver version in one of the NVIDIA kernel module's files (under the host root), read by
/// `parse`; an error names the file.
ProbeResult probe_module_file(const DetectEnv& env, const char* file,
                              Expected<std::string> (*parse)(std::string_view text)) {
  if (!kLinuxHost) return not_on_windows("driver version", file);
  auto path = env.host_path(file);
  auto text = read_small_file(path);
  if (!text) return Error(text.error().code, text.error().message + " (no NVIDIA kernel module loaded)");
  auto version = parse(*text);
  if (!version) return Error(version.error().code, path.string() + ": " + version.error().message);
  ProbeFacts f;
  f.driver_version = std::move(*version);
  return f;
}

Expected<std::string> parse_module_version(std::string_view text) {
  auto version = trim(text);
  if (!is_driver_version(version)) {
    return Error(Errc::invalid_input, "not a driver version: '" + std::string(version.substr(0, 80)) + "'");
  }
  return std::string(version);
}

}  // namespace

ProbeResult probe_proc_driver_version(const DetectEnv& env) {
  return probe_module_file(env, "/proc/driver/nvidia/version", &parse_proc_driver_version);
}

ProbeResult probe_sys_module_version(const DetectEnv& env) {
  return probe_module_file(env, "/sys/module/nvidia/version", &parse_module_version);
}

Expected<WslPaths> find_wsl(const DetectEnv& env) {
  if (!kLinuxHost) return not_on_windows("WSL", "/usr/lib/wsl/lib");
  auto dir = env.host_path("/usr/lib/wsl/lib");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error(Errc::not_found, "WSL: " + dir.string() + " not found");
  WslPaths p;
  auto have = [&](const char* name) {
    auto f = dir / name;
    return fs::exists(f, ec) ? f.string() : std::string();
  };
  p.nvml_library = have("libnvidia-ml.so.1");
  p.cuda_library = have("libcuda.so.1");
  p.nvidia_smi = have("nvidia-smi");
  if (p.nvml_library.empty() && p.cuda_library.empty() && p.nvidia_smi.empty()) {
    return Error(Errc::not_found, "WSL: " + dir.string() + " holds no libnvidia-ml.so.1, libcuda.so.1 or nvidia-smi");
  }
  return p;
}

Expected<std::vector<PciGpu>> probe_pci(const DetectEnv& env) {
  if (!kLinuxHost) return not_on_windows("PCI", "/sys/bus/pci/devices");
  auto dir = env.host_path("/sys/bus/pci/devices");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Error(Errc::not_found, "PCI: " + dir.string() + " not found");
  std::vector<PciGpu> gpus;
  fs::directory_iterator it(dir, ec), end;
  if (ec) return Error(Errc::io_error, "PCI: " + dir.string() + ": " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) return Error(Errc::io_error, "PCI: " + dir.string() + ": " + ec.message());
    const auto& entry = it->path();
    auto vendor = read_small_file(entry / "vendor");
    if (!vendor || trim(*vendor) != "0x10de") continue;
    auto cls = read_small_file(entry / "class");
    if (!cls || !trim(*cls).starts_with("0x03")) continue;  // 0x0300 VGA, 0x0302 3D controller
    auto device = read_small_file(entry / "device");
    gpus.push_back(PciGpu{entry.filename().string(), device ? std::string(trim(*device)) : std::string("unknown")});
  }
  std::sort(gpus.begin(), gpus.end(), [](const PciGpu& a, const PciGpu& b) { return a.address < b.address; });
  return gpus;
}

}  // namespace wheelfit::backends::cuda
