// `wheelfit explain`: the seven demands of one wheel, from its name and its binaries, against one
// machine. The engine (judge) is shared with doctor.cpp.
#include "wheelfit/inspect/explain.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "engine.hpp"
#include "wheelfit/model/platform.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::inspect {

using model::NumericVersion;
using util::join;
using resolve::Demand;

std::string_view to_string(Verdict v) noexcept {
  static constexpr std::pair<Verdict, std::string_view> kNames[] = {
      {Verdict::ok, "ok"}, {Verdict::fails, "fails"}, {Verdict::unknown, "unknown"}};
  return util::name_of(kNames, v);
}

bool Explanation::fits() const {
  return std::none_of(demands.begin(), demands.end(), [](const DemandReport& d) { return d.verdict == Verdict::fails; });
}

std::string Explanation::read_text(bool remote) const {
  const std::string size = std::to_string(wheel_size);
  if (!remote) return "a local wheel of " + size + " bytes";
  if (downloaded_whole || bytes_fetched >= wheel_size) {
    return "the whole " + size + "-byte wheel fetched" +
           (bytes_fetched > wheel_size ? " (" + std::to_string(bytes_fetched) + " bytes in all)" : std::string());
  }
  return std::to_string(bytes_fetched) + " of " + size + " bytes fetched";
}

namespace detail {

std::string basename(std::string_view path) {
  auto slash = path.find_last_of("/\\");
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "pkg/_C.cpython-312-x86_64-linux-gnu.so" -> "pkg._C" (what `import` names).
std::string module_name(std::string_view path) {
  std::string p(path);
  if (auto purelib = p.find(".data/"); purelib != std::string::npos) {  // name-1.0.data/platlib/pkg/x.so
    auto next = p.find('/', purelib + 6);
    if (next != std::string::npos) p = p.substr(next + 1);
  }
  std::string base = basename(p);
  std::string dir = p.substr(0, p.size() - base.size());
  base = base.substr(0, base.find('.'));
  std::string out = dir + base;
  std::replace(out.begin(), out.end(), '/', '.');
  std::replace(out.begin(), out.end(), '\\', '.');
  return out;
}

// "sm_80, sm_90 (sass), compute_90 (ptx)": each kind's entries, in the backend's words.
std::string entries_text(const semantics::DeviceRules::DeviceCode& code) {
  std::vector<std::string> parts;
  for (const auto& [kind, items] : code.entries) {
    if (!items.empty()) parts.push_back(join(items, ", ") + " (" + kind + ")");
  }
  return parts.empty() ? code.list : join(parts, ", ");
}

// ": <the error>" when the backend names one.
std::string error_suffix(const std::string& error) { return error.empty() ? std::string() : ": " + error; }

std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const auto semi = list.find(';');
    if (semi != 0) out.emplace_back(list.substr(0, semi));
    if (semi == std::string_view::npos) break;
    list.remove_prefix(semi + 1);
  }
  return out;
}

// One demand's checks: it fails when one check fails, else it is unknown when one check could
// not be made, else ok.
class Judgement {
 public:
  explicit Judgement(Demand d) { r_.demand = d; }
  void wheel(std::string s) {
    if (!s.empty() && std::find(wheel_.begin(), wheel_.end(), s) == wheel_.end()) wheel_.push_back(std::move(s));
  }
  void machine(std::string s) { r_.machine = std::move(s); }
  void ok(std::string s) { push(ok_, std::move(s)); }
  void fail(std::string s) { push(fail_, std::move(s)); }
  void unknown(std::string s) { push(unknown_, std::move(s)); }
  DemandReport done() {
    r_.wheel = wheel_.empty() ? "nothing" : join(wheel_, "; ");
    if (!fail_.empty()) {
      r_.verdict = Verdict::fails;
      r_.detail = join(fail_, "; ");
    } else if (!unknown_.empty()) {
      r_.verdict = Verdict::unknown;
      r_.detail = join(unknown_, "; ");
    } else {
      r_.verdict = Verdict::ok;
      r_.detail = join(ok_, "; ");
    }
    return r_;
  }

 private:
  static void push(std::vector<std::string>& v, std::string s) {
    if (!s.empty() && std::find(v.begin(), v.end(), s) == v.end()) v.push_back(std::move(s));
  }
  DemandReport r_;
  std::vector<std::string> wheel_, ok_, fail_, unknown_;
};

struct Ctx {
  const Subject& s;
  const machine::Machine& m;
  const semantics::Policy& policy;
  std::optional<std::vector<std::string>> gpus;  // the machine's targets, canonical (the backend's grammar)
  std::vector<std::string>& warnings;
  std::vector<const FileReport*> parsed;  // files whose binary parsed
  std::string pip_refuses() const {
    return "pip: ERROR: " + s.display + " is not a supported wheel on this platform.";
  }
  // The platform fit of the name's tags; nullopt without a name or when the machine's OS or CPU
  // arch is unknown.
  std::optional<model::PlatformFit> fit() const { return s.wheel ? resolve::platform_fit(*s.wheel, m) : std::nullopt; }
  // The file named in loader errors: the first parsed binary, else a placeholder.
  std::string first_module() const { return parsed.empty() ? std::string("<module>") : parsed.front()->path; }
};

// ----------------------------------------------------------------------------------------------

// gpu_arch from the binaries read: the device code of each module that carries some (`kernels`),
// against the machine's GPUs; a module narrower than the farm's `policy_list` is warned of.
void judge_gpu_binaries(Ctx& c, Judgement& j, const std::vector<const FileReport*>& kernels,
                        const std::optional<semantics::ArchSource>& policy_list) {
  const std::string& no_kernel = c.policy.errors().no_kernel;
  if (kernels.empty()) {
    j.wheel("no " + c.policy.notation().name + " device code in its binaries");
    j.ok(c.parsed.empty() ? "no compiled module was read" : "its binaries carry no GPU code: no GPU arch is demanded");
    return;
  }
  std::vector<std::string> all;
  for (const auto* f : kernels) all.push_back(entries_text(f->device));
  j.wheel(join(all, "; "));
  // Narrower than the farm's policy says: an entry of the policy list that a module lacks.
  if (policy_list) {
    for (const auto* f : kernels) {
      const auto have = split_list(f->device.list);
      std::vector<std::string> missing;
      for (const auto& t : split_list(policy_list->list))
        if (std::find(have.begin(), have.end(), t) == have.end()) missing.push_back(t);
      if (!missing.empty()) {
        c.warnings.push_back(f->path + " carries " + entries_text(f->device) + " (" + f->device.list +
                             "): narrower than the farm's arch list " + policy_list->list + " (" +
                             policy_list->provenance + "); missing " + join(missing, ", "));
      }
    }
  }
  if (!c.gpus) {
    j.unknown("the machine's GPUs are unknown (set gpus in the machine profile or WHEELFIT_OVERRIDE_GPUS)");
    return;
  }
  if (c.gpus->empty()) {
    j.fail("the machine has no GPU" + error_suffix(c.policy.errors().no_device));
    return;
  }
  for (const auto* f : kernels) {
    const auto coverage = resolve::cover(c.policy, f->device.list, *c.gpus);
    for (const auto& [g, hit] : coverage.served) j.ok(resolve::runs_text(c.policy, g, hit));
    if (!coverage.uncovered.empty()) {
      j.fail(f->path + " carries " + entries_text(f->device) + ", nothing that runs on " +
             resolve::targets_text(c.policy.device_prefix(), coverage.uncovered) + error_suffix(no_kernel));
    }
  }
}

DemandReport judge_gpu(Ctx& c) {
  Judgement j(Demand::gpu_arch);
  j.machine(resolve::gpus_text(c.policy.device_prefix(), c.gpus));
  const std::string& no_kernel = c.policy.errors().no_kernel;
  std::vector<const FileReport*> kernels;
  for (const auto* f : c.parsed)
    if (!f->device.list.empty()) kernels.push_back(f);

  // The farm's arch list for this wheel (when the name says its combo and platform).
  std::optional<semantics::ArchSource> policy_list;
  std::optional<std::string> platform;
  if (c.s.combo && c.s.wheel) {
    for (const auto& t : c.s.wheel->platforms) {
      if (!t.os) continue;
      platform = model::farm_platform(*t.os, t.cpu_arch);
      if (platform) break;
    }
    if (platform) policy_list = c.policy.arch_list(c.s.package, *c.s.combo, *platform);
  }

  if (c.s.binaries_read) {
    judge_gpu_binaries(c, j, kernels, policy_list);
    return j.done();
  }

  // The name alone: the farm's policy list for its combo, as the resolver judges it.
  if (!c.s.combo) {
    j.wheel("not stated by the name (no combo label)");
    j.unknown("the name does not say which GPU archs it carries (binaries not read: give the wheel file or URL)");
    return j.done();
  }
  if (!policy_list) {
    j.wheel("not stated (the policy has no arch list for " + c.policy.combo_str(*c.s.combo) + (platform ? " on " + *platform : "") + ")");
    j.unknown("no arch list to judge by (binaries not read)");
    return j.done();
  }
  j.wheel(policy_list->list + " (" + policy_list->provenance + "; from the policy, binaries not read)");
  if (!c.gpus) {
    j.unknown("the machine's GPUs are unknown (set gpus in the machine profile or WHEELFIT_OVERRIDE_GPUS)");
  } else if (c.gpus->empty()) {
    j.fail("the machine has no GPU" + error_suffix(c.policy.errors().no_device));
  } else {
    const auto coverage = resolve::cover(c.policy, policy_list->list, *c.gpus);
    for (const auto& [g, hit] : coverage.served) j.ok(resolve::runs_text(c.policy, g, hit) + " (per the policy)");
    if (!coverage.uncovered.empty()) {
      j.fail("the arch list covers nothing that runs on " + resolve::targets_text(c.policy.device_prefix(), coverage.uncovered) +
             error_suffix(no_kernel));
    }
  }
  return j.done();
}

// ----------------------------------------------------------------------------------------------

bool links_torch(const BinaryInfo& b) {
  return std::any_of(b.needed.begin(), b.needed.end(),
                     [](const std::string& n) { return starts_with(n, "libtorch") || starts_with(n, "libc10") || starts_with(n, "torch") || starts_with(n, "c10.dll"); });
}

DemandReport judge_torch(Ctx& c) {
  Judgement j(Demand::torch);
  j.machine(c.m.torch ? "torch " + c.m.torch->str() : "unknown (no torch known)");
  std::vector<const FileReport*> bound;
  for (const auto* f : c.parsed)
    if (links_torch(*f->info)) bound.push_back(f);
  if (c.s.combo) j.wheel("torch " + c.s.combo->torch.str() + " (label +" + c.s.wheel->version.local() + ")");
  if (!bound.empty()) {
    std::set<std::string> libs;
    for (const auto* f : bound)
      for (const auto& n : f->info->needed)
        if (starts_with(n, "libtorch") || starts_with(n, "libc10") || starts_with(n, "torch") || starts_with(n, "c10")) libs.insert(n);
    j.wheel("links " + join({libs.begin(), libs.end()}, ", "));
  }
  if (!c.s.combo) {
    if (!bound.empty()) {
      const std::string why = bound.front()->path + " links libtorch, but the name names no torch version: it loads only "
                                                    "into the torch it was built against, which the name does not say";
      c.warnings.push_back(why);
      j.unknown(why);
    } else {
      j.wheel("no torch");
      j.ok(c.s.binaries_read ? "not bound to torch (no torch in the label, no libtorch / libc10 linked)"
                             : "not bound to torch by its name (no torch in the label; binaries not read)");
    }
    return j.done();
  }
  if (!c.m.torch) {
    j.unknown("the machine's torch is unknown (not installed or not detected; set torch in the machine profile)");
    return j.done();
  }
  const auto& rel = c.m.torch->release();
  if (rel.size() < 2) {
    j.unknown("the machine's torch " + c.m.torch->str() + " has no minor version");
    return j.done();
  }
  const NumericVersion have({static_cast<std::uint32_t>(rel[0]), static_cast<std::uint32_t>(rel[1])});
  if (!(have == c.s.combo->torch)) {
    const std::string module = bound.empty() ? c.first_module() : bound.front()->path;
    j.fail("built against torch " + c.s.combo->torch.str() + ", loaded into torch " + c.m.torch->str() +
           " (no stable C++ ABI across torch releases): ImportError: " + module + ": undefined symbol: _ZN3c10...");
  } else {
    j.ok("built against torch " + c.s.combo->torch.str() + ", the machine's torch is " + c.m.torch->str());
  }
  return j.done();
}

// ----------------------------------------------------------------------------------------------

// The machine's torch must be a build of the label's line (its combo); `runtime`: the major of the
// backend runtime the binaries link (`runtime_lib`), when they link one.
void judge_torch_line(Ctx& c, Judgement& j, const std::optional<std::uint32_t>& runtime, const std::string& runtime_lib) {
  const std::string& name = c.policy.notation().name;
  if (!c.m.torch) {
    j.unknown("the machine's torch (and so its " + name + " line) is unknown");
  } else {
    auto mc = resolve::machine_combo(c.m, c.policy);
    const std::string& local = c.m.torch->local();
    const std::string built = "built for " + name + " " + c.s.combo->line.str();
    if (mc.combo) {
      const std::string theirs = ", the machine's torch is a " + name + " " + mc.combo->line.str() + " build";
      if (mc.combo->line == c.s.combo->line) {
        j.ok("the machine's torch is a " + name + " " + mc.combo->line.str() + " build");
      } else if (mc.combo->line.major() != c.s.combo->line.major() && runtime) {
        j.fail(built + theirs + ": ImportError: " + runtime_lib + ": cannot open shared object file: No such file or directory");
      } else {
        j.fail(built + theirs + ": ImportError: " + c.first_module() + ": undefined symbol (the extension links another " +
               name + " build of torch)");
      }
    } else if (!local.empty() && !c.policy.parse_torch_label(local)) {
      j.fail("the machine's torch " + c.m.torch->str() + " is a +" + local + " build, not a " + name + " build" +
             error_suffix(c.policy.errors().wrong_torch));
    } else {
      j.unknown(mc.reason);
    }
  }
}

DemandReport judge_line(Ctx& c) {
  Judgement j(Demand::line);
  const std::string& name = c.policy.notation().name;
  const auto& errors = c.policy.errors();
  {
    std::vector<std::string> mt;
    if (c.m.torch) mt.push_back("torch " + c.m.torch->str());
    if (c.m.driver_line) mt.push_back("driver supports " + name + " " + c.m.driver_line->str());
    else if (c.m.driver_version) mt.push_back("driver " + c.m.driver_version->str());
    j.machine(mt.empty() ? "unknown" : join(mt, "; "));
  }
  // The backend's runtime library the binaries link (libcudart.so.12: the CUDA 12 runtime).
  std::optional<std::uint32_t> runtime;
  const FileReport* runtime_file = nullptr;
  std::string runtime_lib;
  for (const auto* f : c.parsed) {
    for (const auto& n : f->info->needed) {
      if (auto major = c.policy.runtime_major(n); major && (!runtime || *major > *runtime)) {
        runtime = major;
        runtime_file = f;
        runtime_lib = n;
      }
    }
  }
  const std::optional<NumericVersion> label = c.s.combo ? std::optional<NumericVersion>(c.s.combo->line) : c.s.label_line;
  if (label) j.wheel(name + " " + label->str() + " (label +" + c.s.wheel->version.local() + ")");
  if (runtime) j.wheel("links " + runtime_lib + " (" + name + " " + std::to_string(*runtime) + " runtime)");
  if (label && runtime && label->major() != *runtime) {
    c.warnings.push_back("the label says " + name + " " + label->str() + " but " + runtime_file->path + " links " + runtime_lib);
  }
  const bool kernels = std::any_of(c.parsed.begin(), c.parsed.end(), [](const FileReport* f) { return !f->device.list.empty(); });
  if (!label && !runtime) {
    if (kernels) {
      j.wheel(name + " device code, no " + name + " line stated (a static runtime, no label)");
      j.unknown("the binaries carry " + name + " device code but neither the name nor the linked libraries say which " +
                name + " line");
    } else {
      j.wheel("no " + name + " line");
      j.ok(c.s.binaries_read ? "not bound to a " + name + " line"
                             : "not bound to a " + name + " line by its name (binaries not read)");
    }
    return j.done();
  }

  if (c.s.combo) judge_torch_line(c, j, runtime, runtime_lib);

  // The driver must run the runtime.
  if (c.policy.driver_rule() == semantics::DriverRule::unknown) {
    j.unknown("the driver's " + name + " support is not checked: " +
              (c.policy.driver_why().empty() ? "the backend has no driver rule" : c.policy.driver_why()));
    return j.done();
  }
  const NumericVersion line = label ? *label : NumericVersion({*runtime});
  auto drv = resolve::judge_driver(runtime && *runtime > line.major() ? NumericVersion({*runtime}) : line, c.m, c.policy);
  if (!drv.checked) {
    j.unknown("the driver's " + name + " support is unknown (set driver_line or driver_version in the machine profile)");
  } else if (drv.failure) {
    j.fail(drv.failure->wheel + ", " + drv.failure->machine + error_suffix(errors.driver_too_old));
  } else {
    j.ok(c.m.driver_line ? "the driver supports " + name + " " + c.m.driver_line->str()
                         : "driver " + c.m.driver_version->str() + " runs " + name + " " + line.str());
  }
  return j.done();
}

// ----------------------------------------------------------------------------------------------

// The CPython an extension suffix is built for: "cpython-312" -> (3.12, false), "cpython-313t",
// "cp312" (Windows); nullopt for abi3 and for anything else.
std::optional<std::pair<NumericVersion, bool>> suffix_python(std::string_view abi) {
  std::string_view digits;
  if (starts_with(abi, "cpython-")) digits = abi.substr(8);
  else if (starts_with(abi, "cp")) digits = abi.substr(2);
  else return std::nullopt;
  bool ft = false;
  if (!digits.empty() && digits.back() == 't') {
    ft = true;
    digits.remove_suffix(1);
  }
  if (digits.size() < 2 || !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return std::nullopt;
  std::uint32_t minor = 0;
  for (char ch : digits.substr(1)) minor = minor * 10 + static_cast<std::uint32_t>(ch - '0');
  return std::make_pair(NumericVersion({static_cast<std::uint32_t>(digits[0] - '0'), minor}), ft);
}

std::string python_text(const NumericVersion& v, bool ft) { return v.str() + (ft ? "t" : ""); }

DemandReport judge_python(Ctx& c) {
  Judgement j(Demand::python);
  j.machine(c.m.python ? "python " + python_text(*c.m.python, c.m.python_free_threaded) : "unknown");
  std::optional<model::PythonTarget> target;
  if (c.m.python) target = model::PythonTarget{c.m.python->truncated(2), c.m.python_free_threaded};
  const bool claims_abi3 = c.s.wheel && std::find(c.s.wheel->abi_tags.begin(), c.s.wheel->abi_tags.end(), "abi3") != c.s.wheel->abi_tags.end();
  if (c.s.wheel) {
    j.wheel(resolve::python_tags_text(*c.s.wheel) + " (tag)");
    if (!target) j.unknown("the machine's Python is unknown (set python in the machine profile)");
    else if (!model::python_rank(*c.s.wheel, *target)) j.fail("no tag for " + target->tag() + ": " + c.pip_refuses());
    else j.ok(target->tag() + " is among its tags");
  }
  for (const auto* f : c.parsed) {
    if (!f->suffix || f->suffix->abi.empty()) continue;
    const auto& abi = f->suffix->abi;
    const std::string mod = module_name(f->path);
    if (abi == "abi3") {
      j.wheel("abi3 (" + basename(f->path) + ")");
      if (!target) continue;
      if (target->free_threaded) {
        j.fail(f->path + " uses the stable ABI (abi3), which a free-threaded interpreter does not load: "
                         "ModuleNotFoundError: No module named '" + mod + "'");
      }
      continue;
    }
    auto py = suffix_python(abi);
    if (!py) continue;
    j.wheel("CPython " + python_text(py->first, py->second) + " (" + basename(f->path) + ")");
    if (claims_abi3) {
      c.warnings.push_back("the tag claims the stable ABI (abi3) but " + f->path + " is built for CPython " +
                           python_text(py->first, py->second) + " only");
    }
    if (!target) continue;
    if (!(py->first == target->version) || py->second != target->free_threaded) {
      j.fail(f->path + " is built for CPython " + python_text(py->first, py->second) + "; python " +
             python_text(target->version, target->free_threaded) + " does not load it: ModuleNotFoundError: No module named '" + mod + "'");
    } else {
      j.ok(basename(f->path) + " matches");
    }
  }
  if (!c.s.wheel && !target) j.unknown("the machine's Python is unknown");
  return j.done();
}

// ----------------------------------------------------------------------------------------------

// The loader's error for a binary of another CPU arch or word size.
std::string wrong_arch_error(const Ctx& c, const FileReport& f, bool machine64) {
  if (c.m.os && *c.m.os == model::Os::windows) {
    return "ImportError: DLL load failed while importing " + basename(module_name(f.path)) + ": %1 is not a valid Win32 application.";
  }
  if ((f.info->bits == 64) != machine64) {
    return "ImportError: " + f.path + ": wrong ELF class: ELFCLASS" + std::to_string(f.info->bits);
  }
  return "ImportError: " + f.path + ": cannot open shared object file: No such file or directory";
}

DemandReport judge_cpu(Ctx& c) {
  Judgement j(Demand::cpu_arch);
  j.machine(c.m.cpu_arch ? *c.m.cpu_arch : "unknown");
  if (c.s.wheel) {
    j.wheel(resolve::cpu_archs_text(*c.s.wheel) + " (" + resolve::platform_tags_text(*c.s.wheel) + ")");
    if (!c.m.cpu_arch) {
      j.unknown("the machine's CPU arch is unknown");
    } else if (auto fit = c.fit()) {
      if (fit->cpu_ok) j.ok("the tag is for " + *c.m.cpu_arch);
      else j.fail("no tag for " + *c.m.cpu_arch + ": " + c.pip_refuses());
    } else {
      const bool any = std::any_of(c.s.wheel->platforms.begin(), c.s.wheel->platforms.end(), [&](const model::PlatformTag& p) {
        return p.kind == model::PlatformTag::Kind::any || model::normalize_cpu_arch(p.cpu_arch) == *c.m.cpu_arch;
      });
      if (any) j.ok("the tag is for " + *c.m.cpu_arch);
      else j.fail("no tag for " + *c.m.cpu_arch + ": " + c.pip_refuses());
    }
  }
  for (const auto* f : c.parsed) {
    const std::string arch = model::normalize_cpu_arch(f->info->machine);
    j.wheel(arch + " (" + std::string(f->info->format == BinaryInfo::Format::elf ? "ELF" : "PE") + ")");
    if (!c.m.cpu_arch) continue;
    if (arch != *c.m.cpu_arch) {
      const bool machine64 = *c.m.cpu_arch == "x86_64" || *c.m.cpu_arch == "aarch64" || c.m.cpu_arch->find("64") != std::string::npos;
      j.fail(f->path + " is " + arch + " machine code, the machine is " + *c.m.cpu_arch + ": " + wrong_arch_error(c, *f, machine64));
    } else {
      j.ok(basename(f->path) + " is " + arch + " code");
    }
  }
  if (!c.s.wheel && c.parsed.empty()) j.unknown("nothing states a CPU arch");
  return j.done();
}

DemandReport judge_os(Ctx& c) {
  Judgement j(Demand::os);
  j.machine(c.m.os ? std::string(model::to_string(*c.m.os)) : "unknown");
  if (c.s.wheel) {
    j.wheel(resolve::oses_text(*c.s.wheel) + " (" + resolve::platform_tags_text(*c.s.wheel) + ")");
    if (!c.m.os) {
      j.unknown("the machine's OS is unknown");
    } else if (auto fit = c.fit()) {
      if (fit->os_ok) j.ok("the tag is for " + std::string(model::to_string(*c.m.os)));
      else j.fail("no tag for " + std::string(model::to_string(*c.m.os)) + ": " + c.pip_refuses());
    } else {
      const bool any = std::any_of(c.s.wheel->platforms.begin(), c.s.wheel->platforms.end(), [&](const model::PlatformTag& p) {
        return p.kind == model::PlatformTag::Kind::any || (p.os && *p.os == *c.m.os);
      });
      if (any) j.ok("the tag is for " + std::string(model::to_string(*c.m.os)));
      else j.fail("no tag for " + std::string(model::to_string(*c.m.os)) + ": " + c.pip_refuses());
    }
  }
  for (const auto* f : c.parsed) {
    j.wheel(f->info->os + " (" + std::string(f->info->format == BinaryInfo::Format::elf ? "ELF" : "PE") + ")");
    if (!c.m.os) continue;
    const std::string have(model::to_string(*c.m.os));
    if (f->info->os == have) {
      j.ok(basename(f->path) + " is a " + have + " binary");
    } else if (*c.m.os == model::Os::windows) {
      j.fail(f->path + " is a " + f->info->os + " binary: ImportError: DLL load failed while importing " +
             basename(module_name(f->path)) + ": %1 is not a valid Win32 application.");
    } else {
      j.fail(f->path + " is a " + f->info->os + " binary: ImportError: " + f->path + ": invalid ELF header");
    }
  }
  if (!c.s.wheel && c.parsed.empty()) j.unknown("nothing states an OS");
  return j.done();
}

DemandReport judge_glibc(Ctx& c) {
  Judgement j(Demand::glibc);
  const bool linux_machine = c.m.os && *c.m.os == model::Os::linux_;
  j.machine(c.m.glibc ? "glibc " + c.m.glibc->str() : (c.m.os && !linux_machine) ? "no glibc (not Linux)" : "unknown");
  // The floor the tags claim: the lowest manylinux floor (pip installs on any one that fits).
  std::optional<NumericVersion> claimed;
  const model::PlatformTag* claimed_tag = nullptr;
  if (c.s.wheel) {
    std::vector<std::string> floors;
    for (const auto& p : c.s.wheel->platforms) {
      if (auto floor = resolve::libc_floor_text(p)) floors.push_back(*floor + " (" + p.tag + ")");
      if (p.kind == model::PlatformTag::Kind::manylinux && p.libc && (!claimed || *p.libc < *claimed)) {
        claimed = p.libc;
        claimed_tag = &p;
      }
    }
    if (!floors.empty()) j.wheel(join(floors, ", "));
  }
  // What the binaries really require.
  std::optional<NumericVersion> need;
  const FileReport* need_file = nullptr;
  for (const auto* f : c.parsed) {
    if (!f->info->max_glibc) continue;
    auto v = NumericVersion::parse(*f->info->max_glibc);
    if (!v) continue;
    if (!need || *need < *v) {
      need = *v;
      need_file = f;
    }
  }
  if (need) j.wheel("GLIBC_" + need->str() + " (" + need_file->path + ")");
  if (claimed && need && *claimed < *need) {
    c.warnings.push_back("the tag claims glibc " + claimed->str() + " (" + claimed_tag->tag + ") but " + need_file->path +
                         " requires GLIBC_" + need->str() + ": pip installs it on glibc " + claimed->str() + " to below " +
                         need->str() + ", where it fails with version 'GLIBC_" + need->str() + "' not found");
  }
  if (c.m.os && !linux_machine) {
    j.ok("not a Linux machine: no glibc floor");
    return j.done();
  }
  if (!c.m.glibc) {
    if (claimed || need || (c.s.wheel && !c.s.wheel->platforms.empty())) j.unknown("the machine's glibc is unknown (set glibc in the machine profile)");
    else j.ok("no glibc demand");
    return j.done();
  }
  if (auto fit = c.fit(); fit && fit->tag && fit->tag->libc && fit->tag->os && *fit->tag->os == model::Os::linux_) {
    if (fit->glibc_ok) j.ok("the tag's floor " + fit->tag->libc->str() + " <= glibc " + c.m.glibc->str());
    else if (fit->tag->kind == model::PlatformTag::Kind::musllinux) j.fail("a musl build on a glibc machine: " + c.pip_refuses());
    else j.fail("the tag's floor is glibc " + fit->tag->libc->str() + ", the machine has " + c.m.glibc->str() + ": " + c.pip_refuses());
  } else if (claimed && !c.fit()) {
    if (*c.m.glibc < *claimed) j.fail("the tag's floor is glibc " + claimed->str() + ", the machine has " + c.m.glibc->str() + ": " + c.pip_refuses());
    else j.ok("the tag's floor " + claimed->str() + " <= glibc " + c.m.glibc->str());
  }
  if (need) {
    if (*c.m.glibc < *need) {
      j.fail(need_file->path + " requires GLIBC_" + need->str() + ", the machine has glibc " + c.m.glibc->str() +
             ": ImportError: libc.so.6: version 'GLIBC_" + need->str() + "' not found (required by " + need_file->path + ")");
    } else {
      j.ok("its binaries need at most GLIBC_" + need->str());
    }
  } else if (!claimed) {
    j.ok("no glibc floor stated");
  }
  return j.done();
}

DemandReport judge_variant(Ctx& c) {
  Judgement j(Demand::variant);
  const std::string& label = *c.s.wheel->variant_label;
  // The torch abi_dependency is judged against: the machine's own, as installed.
  const std::string torch = c.m.torch ? c.m.torch->public_version().str() : std::string();
  const auto support = resolve::variant_support(c.m, c.policy, c.gpus, torch);
  std::vector<std::string> supplied;
  for (const auto& [ns, features] : support.properties) supplied.push_back(ns);
  j.machine(supplied.empty() ? std::string("no variant namespace provided") : "provides " + join(supplied, ", "));
  for (const auto& note : support.notes) c.warnings.push_back(note);
  const auto v = resolve::judge_variant(label, c.s.variants.get(), c.s.variants_problem, support);
  j.wheel("variant " + label + (v.properties.empty() ? std::string() : " (" + join(v.properties, ", ") + ")"));
  if (v.compatible) j.ok(label == "null" ? "the null variant is always compatible" : "every property is supported");
  for (const auto& f : v.failures) j.fail(f.wheel + ": " + f.machine);
  return j.done();
}

}  // namespace

Explanation judge(Subject subject, const machine::Machine& machine, const semantics::Policy& policy) {
  Explanation out;
  out.wheel = subject.display;
  out.binaries_read = subject.binaries_read;
  read_device_code(subject.files, policy, out.warnings);
  Ctx c{subject, machine, policy, {}, out.warnings, {}};
  if (auto targets = resolve::device_targets(machine, policy); targets) c.gpus = std::move(*targets);
  else out.warnings.push_back(targets.error().message);
  for (const auto& f : subject.files) {
    if (f.info) c.parsed.push_back(&f);
    else out.warnings.push_back(f.path + ": not read: " + f.error);
  }
  for (Demand d : resolve::all_demands()) {
    switch (d) {
      case Demand::gpu_arch: out.demands.push_back(judge_gpu(c)); break;
      case Demand::torch: out.demands.push_back(judge_torch(c)); break;
      case Demand::line: out.demands.push_back(judge_line(c)); break;
      case Demand::python: out.demands.push_back(judge_python(c)); break;
      case Demand::cpu_arch: out.demands.push_back(judge_cpu(c)); break;
      case Demand::os: out.demands.push_back(judge_os(c)); break;
      case Demand::glibc: out.demands.push_back(judge_glibc(c)); break;
      case Demand::variant:  // only a variant wheel has this demand
        if (c.s.wheel && c.s.wheel->variant_label) out.demands.push_back(judge_variant(c));
        break;
    }
  }
  for (auto& d : out.demands) d.name = resolve::demand_name(d.demand, policy.notation());
  if (c.s.variants && c.s.wheel && c.s.wheel->variant_label) {
    const auto& listed = c.s.variants->variants;
    if (auto it = listed.find(*c.s.wheel->variant_label); it != listed.end()) out.variant_properties = model::property_strings(it->second);
  }
  out.files = std::move(subject.files);
  return out;
}

void add_device_code(semantics::DeviceRules::DeviceCode& into, semantics::DeviceRules::DeviceCode code) {
  if (!code.list.empty()) into.list += (into.list.empty() ? "" : ";") + code.list;
  for (auto& [kind, items] : code.entries) {
    auto it = std::find_if(into.entries.begin(), into.entries.end(), [&](const auto& e) { return e.first == kind; });
    if (it == into.entries.end()) it = into.entries.insert(into.entries.end(), {kind, {}});
    for (auto& item : items)
      if (std::find(it->second.begin(), it->second.end(), item) == it->second.end()) it->second.push_back(std::move(item));
  }
}

void read_device_code(std::vector<FileReport>& files, const semantics::Policy& policy, std::vector<std::string>& warnings) {
  for (auto& f : files) {
    if (!f.info || f.info->device_code.empty() || !policy.rules()) continue;
    for (const auto& section : f.info->device_code) {
      auto code = policy.rules()->read_code(section.name, section.bytes);
      if (!code) {
        warnings.push_back(f.path + ": " + section.name + ": device code not read: " + code.error().message);
        continue;
      }
      add_device_code(f.device, std::move(*code));
    }
  }
}

}  // namespace detail

}  // namespace wheelfit::inspect
