// detect_machine: the order per fact (overrides, host, interpreter, backend payloads), the
// backend choice, payload parsing (malformed ones included), provenance and notes.
#include <catch2/catch.hpp>

#include <map>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "fake_python.hpp"
#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/machine/detect.hpp"
#include "support/model_support.hpp"

namespace fs = std::filesystem;
namespace wm = wheelfit::machine;
using namespace wheelfit::test;
using wheelfit::Errc;

namespace {

using wheelfit::test::nv;

using Strings = std::vector<std::string>;

// What the backends' torch-label grammars say, for these tests: +cuXYZ -> cuda, +rocmX.Y -> rocm,
// +xpu -> xpu; anything else names no backend.
std::optional<std::string> test_label_backend(std::string_view label) {
  if (label.starts_with("cu")) return std::string("cuda");
  if (label.starts_with("rocm")) return std::string("rocm");
  if (label == "xpu") return std::string("xpu");
  return std::nullopt;
}

const std::string kNoCuda =
    R"({"present": false, "facts": {}, "provenance": {}, "devices": [], "notes": ["NVML: libnvidia-ml.so.1 not found"]})";
const std::string kNoRocm =
    R"({"present": false, "facts": {}, "provenance": {}, "devices": [], "notes": ["KFD: /sys/class/kfd/kfd/topology/nodes does not exist"]})";
const std::string kTwoCudaGpus =
    R"({"present": true, "facts": {"driver_version": "580.65.06", "driver_line": "13.0", "gpus": ["9.0", "8.6"]},)"
    R"( "provenance": {"driver_version": "NVML nvmlSystemGetDriverVersion", "gpus": "NVML nvmlDeviceGetCudaComputeCapability"},)"
    R"( "devices": [{"index": 0, "name": "NVIDIA H100", "target": "9.0", "uuid": "GPU-1"},)"
    R"( {"index": 1, "name": "NVIDIA RTX A6000", "target": "8.6"}], "notes": []})";
const std::string kMi210 =
    R"({"present": true, "facts": {"driver_version": "6.8.5", "gpus": ["gfx90a:xnack-"]},)"
    R"( "provenance": {"driver_version": "/sys/module/amdgpu/version", "gpus": "KFD topology"},)"
    R"( "devices": [{"index": 0, "name": "gfx90a", "target": "gfx90a", "node": "1"}], "notes": []})";

// A machine to detect: a fake interpreter with a site-packages folder, an environment, payloads.
struct DetectWorld {
  TempDir dir;
  fs::path bin = dir / "bin";
  fs::path python = bin / kPythonName;
  fs::path site = dir / "site-packages";
  std::map<std::string, std::string> env;
  wm::BackendPayloads payloads = {{"cuda", kNoCuda}, {"rocm", kNoRocm}};
  int detector_calls = 0;

  DetectWorld() {
    fs::create_directories(site);
    write_fake_python(python, wheelfit::test::python_answer(python.string(), {site.string()}));
    env["PATH"] = bin.string();
    env["XDG_CACHE_HOME"] = (dir / "cache").string();
  }
  /// A machine with torch `version` installed, whose backends' detection answers `answers`.
  DetectWorld(const std::string& version, wm::BackendPayloads answers) : DetectWorld() {
    torch(version);
    payloads = std::move(answers);
  }
  void torch(const std::string& version) {
    wheelfit::test::write_dist_info(site, "torch-" + version + ".dist-info", "torch", version);
  }
  [[nodiscard]] wm::DetectOptions options() const {
    wm::DetectOptions o;
    o.getenv = [vars = env](std::string_view name) -> std::optional<std::string> {
      auto it = vars.find(std::string(name));
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
    o.host = false;
    o.label_backend = test_label_backend;
    return o;
  }
  wheelfit::Expected<wm::Detection> detect(const wm::DetectOptions& o) {
    return wm::detect_machine(o, [this] {
      ++detector_calls;
      return payloads;
    });
  }
  wheelfit::Expected<wm::Detection> detect() { return detect(options()); }
  /// detect() as with --backend `name`.
  wheelfit::Expected<wm::Detection> detect_backend(const std::string& name) {
    auto o = options();
    o.backend = name;
    return detect(o);
  }
};

}  // namespace

TEST_CASE("parse_backend_payload reads the plugin ABI's detect JSON", "[machine][detect]") {
  SECTION("a full payload") {
    auto r = wm::parse_backend_payload("cuda", kTwoCudaGpus);
    REQUIRE(r);
    CHECK(r->backend == "cuda");
    CHECK(r->present);
    CHECK(r->facts == std::vector<std::pair<std::string, std::string>>{
                          {"driver_version", "580.65.06"}, {"driver_line", "13.0"}, {"gpus", "9.0, 8.6"}});
    CHECK(r->provenance.at("gpus") == "NVML nvmlDeviceGetCudaComputeCapability");
    REQUIRE(r->devices.size() == 2);
    CHECK(r->devices[1] == wm::DetectedDevice{1, "NVIDIA RTX A6000", "8.6"});
    CHECK_FALSE(r->error);
  }
  SECTION("empty lists are the known empty list; odd facts become notes") {
    auto r = wm::parse_backend_payload("x", R"({"present": false, "facts": {"gpus": [], "weird": 3, "mixed": ["a", 1]}})");
    REQUIRE(r);
    CHECK(r->facts == std::vector<std::pair<std::string, std::string>>{{"gpus", "none"}});
    CHECK(r->notes.size() == 2);
    CHECK(any_contains(r->notes, "fact 'weird'"));
  }
  SECTION("an error payload is a value") {
    auto r = wm::parse_backend_payload("cuda", R"({"present": false, "error": "NVML crashed"})");
    REQUIRE(r);
    CHECK(r->error == "NVML crashed");
  }
  SECTION("malformed payloads are errors naming the backend") {
    check_refusals([](const std::string& text) { return wm::parse_backend_payload("rocm", text); },
                   {"backend rocm: detection payload"},
                   {
                       {"", {"is not JSON"}},
                       {"{\"present\": true", {"is not JSON"}},
                       {"[]", {"is not a JSON object"}},
                       {"\"yes\"", {"is not a JSON object"}},
                       {R"({"present": "yes"})", {"\"present\" is not true or false"}},
                       {R"({"facts": []})", {"\"facts\" is not an object"}},
                       {R"({"devices": {}})", {"\"devices\" is not a list"}},
                       {R"({"devices": [1]})", {"\"devices\" is not a list of objects"}},
                       {R"({"notes": "x"})", {"\"notes\" is not a list"}},
                       {R"({"error": 5})", {"\"error\" is not a string"}},
                       {R"({"provenance": 1})", {"\"provenance\" is not an object"}},
                   });
  }
}

TEST_CASE("choose_backend: torch's label, else detected hardware, else cpu", "[machine][detect]") {
  auto report = [](std::string name, bool present, std::optional<std::string> error = {}) {
    wm::BackendReport r;
    r.backend = std::move(name);
    r.present = present;
    r.error = std::move(error);
    return r;
  };
  // The label functions a row may use.
  const wm::LabelBackend cu_only = [](std::string_view l) -> std::optional<std::string> {
    return l.starts_with("cu") ? std::optional<std::string>("cuda") : std::nullopt;
  };
  const wm::LabelBackend none;  // empty: reads no label
  struct Row {
    std::string torch;  // "" = no torch
    std::vector<wm::BackendReport> reports;
    std::string backend, provenance, note;
    wm::LabelBackend labels = test_label_backend;
  };
  auto row = GENERATE_COPY(values<Row>({
      {"2.8.0+cu128", {report("cuda", true)}, "cuda", "torch 2.8.0+cu128 (label +cu128)", ""},
      {"2.7.1+rocm6.3", {report("cuda", true), report("rocm", true)}, "rocm", "label +rocm6.3", ""},
      {"2.8.0+cu128", {report("cuda", false)}, "cuda", "label +cu128", "cuda detection found no hardware"},
      {"2.8.0+cu128", {}, "cuda", "label +cu128", "no cuda detection ran"},
      {"2.8.0+cpu", {report("cuda", true)}, "cpu", "label +cpu", "pass --backend cuda"},
      {"2.8.0+cpu", {report("cuda", false)}, "cpu", "label +cpu", ""},
      {"2.8.0", {report("cuda", true)}, "cuda", "cuda detection found hardware", ""},
      {"2.8.0", {report("rocm", true), report("cuda", false)}, "rocm", "rocm detection found hardware", ""},
      {"", {report("rocm", true), report("cuda", true)}, "cuda", "cuda detection found hardware", "several backends"},
      {"", {report("cuda", true, "NVML crashed")}, "cpu", "no backend found hardware (cuda)", ""},
      {"", {report("cuda", false), report("rocm", false)}, "cpu", "no backend found hardware (cuda, rocm)", ""},
      {"", {}, "cpu", "no backend detection ran", ""},
      // a backend that is neither cuda nor rocm
      {"2.8.0+xpu", {report("xpu", true), report("cuda", true)}, "xpu", "label +xpu", ""},
      {"2.8.0+xpu", {report("cuda", false)}, "xpu", "label +xpu", "no xpu detection ran"},
      {"", {report("xpu", true)}, "xpu", "xpu detection found hardware", ""},
      // a label no backend claims: the hardware decides
      {"2.8.0+git1234", {report("rocm", true)}, "rocm", "rocm detection found hardware", ""},
      {"2.8.0+git1234", {}, "cpu", "no backend detection ran", ""},
      // a given label function (cu* -> cuda only)
      {"2.8.0+cu130", {report("rocm", true)}, "cuda", "torch 2.8.0+cu130 (label +cu130)", "no cuda detection ran", cu_only},
      {"2.7.1+rocm6.3", {report("rocm", true), report("cuda", true)}, "cuda", "cuda detection found hardware",
       "several backends", cu_only},
      {"2.8.0+cpu", {report("rocm", true)}, "cpu", "label +cpu", "pass --backend rocm", cu_only},
      // an empty label function: only +cpu is read (by the core); the hardware decides the rest
      {"2.8.0+cu128", {report("cuda", true)}, "cuda", "cuda detection found hardware", "", none},
      {"2.8.0+cu128", {report("rocm", true)}, "rocm", "rocm detection found hardware", "", none},
      {"2.8.0+cu128", {report("cuda", false)}, "cpu", "no backend found hardware (cuda)", "", none},
      {"2.8.0+cpu", {report("cuda", true)}, "cpu", "torch 2.8.0+cpu (label +cpu)", "pass --backend cuda", none},
      {"2.8.0+CPU", {report("cuda", false)}, "cpu", "label +", "", none},
      {"2.8.0", {}, "cpu", "no backend detection ran", "", none},
  }));
  CAPTURE(row.torch, row.backend, static_cast<bool>(row.labels));
  std::optional<wheelfit::model::Version> torch;
  if (!row.torch.empty()) torch = wheelfit::model::Version::parse(row.torch).value();
  const auto c = wm::choose_backend(torch, row.reports, row.labels);
  CAPTURE(c.provenance);
  CHECK(c.backend == row.backend);
  CHECK(contains(c.provenance, row.provenance));
  if (row.note.empty()) CHECK(c.notes.empty());
  else CHECK(any_contains(c.notes, row.note));
}

TEST_CASE("choose_backend asks the label function only for a label that is not cpu", "[machine][detect]") {
  std::vector<std::string> asked;
  const wm::LabelBackend spy = [&](std::string_view l) -> std::optional<std::string> {
    asked.emplace_back(l);
    return std::nullopt;
  };
  for (const std::string t : {"2.8.0", "2.8.0+cpu", "2.8.0+cu128", "2.7.1+rocm6.3"}) {
    (void)wm::choose_backend(wheelfit::model::Version::parse(t).value(), {}, spy);
  }
  (void)wm::choose_backend(std::nullopt, {}, spy);
  CHECK(asked == Strings{"cu128", "rocm6.3"});
}

TEST_CASE("detect_machine: a CUDA machine with two GPUs", "[machine][detect]") {
  DetectWorld w("2.8.0+cu128", {{"cuda", kTwoCudaGpus}, {"rocm", kNoRocm}});
  auto d = w.detect();
  REQUIRE(d);
  const auto& m = d->machine;
  CHECK(m.python == nv("3.12"));
  CHECK(m.provenance.at("python") == "interpreter " + w.python.string());
  REQUIRE(m.torch);
  CHECK(m.torch->str() == "2.8.0+cu128");
  CHECK(contains(m.provenance.at("torch"), "dist-info " + (w.site / "torch-2.8.0+cu128.dist-info" / "METADATA").string()));
  CHECK(m.backend == "cuda");
  CHECK(m.provenance.at("backend") == "torch 2.8.0+cu128 (label +cu128)");
  CHECK(m.driver_version == nv("580.65.06"));
  CHECK(m.provenance.at("driver_version") == "cuda: NVML nvmlSystemGetDriverVersion");
  CHECK(m.driver_line == nv("13.0"));
  CHECK(m.provenance.at("driver_line") == "cuda: detection");
  CHECK(m.gpus == Strings{"9.0", "8.6"});  // every visible GPU
  CHECK(m.provenance.at("gpus") == "cuda: NVML nvmlDeviceGetCudaComputeCapability");
  CHECK(d->devices.size() == 2);
  CHECK(any_contains(d->notes, "rocm: KFD"));
  REQUIRE(d->interpreter);
  CHECK(w.detector_calls == 1);

  SECTION("the profile round-trips through JSON") {
    auto back = wm::parse_machine_profile(wm::to_json(m), "detect.json");
    REQUIRE(back);
    CHECK(wm::same_facts(*back, m));
  }
  SECTION("without a label function, the hardware decides") {
    auto o = w.options();
    o.label_backend = nullptr;
    auto e = w.detect(o);
    REQUIRE(e);
    CHECK(e->machine.backend == "cuda");
    CHECK(e->machine.provenance.at("backend") == "cuda detection found hardware");
    CHECK(e->machine.gpus == Strings{"9.0", "8.6"});
  }
  SECTION("the second run answers from the cache") {
    auto again = w.detect();
    REQUIRE(again);
    CHECK(again->machine.provenance.at("python") == "interpreter " + w.python.string() + " (cached)");
    CHECK(contains(again->machine.provenance.at("torch"), "(cached)"));
    CHECK(wheelfit::test::script_runs(w.python) == 1);
  }
}

TEST_CASE("detect_machine: a ROCm machine", "[machine][detect]") {
  DetectWorld w("2.7.1+rocm6.3", {{"cuda", kNoCuda}, {"rocm", kMi210}});
  auto d = w.detect();
  REQUIRE(d);
  const auto& m = d->machine;
  CHECK(m.backend == "rocm");
  CHECK(m.provenance.at("backend") == "torch 2.7.1+rocm6.3 (label +rocm6.3)");
  CHECK(m.gpus == Strings{"gfx90a:xnack-"});
  CHECK(m.provenance.at("gpus") == "rocm: KFD topology");
  CHECK(m.driver_version == nv("6.8.5"));
  CHECK_FALSE(m.driver_line);
  REQUIRE(d->devices.size() == 1);
  CHECK(d->devices[0].target == "gfx90a");
  CHECK(any_contains(d->notes, "cuda: NVML"));

  SECTION("without torch, the hardware decides") {
    fs::remove_all(w.site / "torch-2.7.1+rocm6.3.dist-info");
    auto e = w.detect();
    REQUIRE(e);
    CHECK(e->machine.backend == "rocm");
    CHECK(e->machine.provenance.at("backend") == "rocm detection found hardware");
    CHECK_FALSE(e->machine.torch);
    CHECK(any_contains(e->notes, "torch is not installed for " + w.python.string()));
  }
}

TEST_CASE("detect_machine: no GPU anywhere", "[machine][detect]") {
  DetectWorld w;
  auto d = w.detect();
  REQUIRE(d);
  CHECK(d->machine.backend == "cpu");
  CHECK(d->machine.provenance.at("backend") == "no backend found hardware (cuda, rocm)");
  REQUIRE(d->machine.gpus);
  CHECK(d->machine.gpus->empty());
  CHECK(d->machine.provenance.at("gpus") == "no backend found a GPU (cuda, rocm)");
  CHECK_FALSE(d->machine.driver_version);

  SECTION("no backend detection at all: gpus unknown") {
    w.payloads.clear();
    auto e = w.detect();
    REQUIRE(e);
    CHECK(e->machine.backend == "cpu");
    CHECK_FALSE(e->machine.gpus);
  }
  SECTION("a failed detection: gpus unknown, the error noted") {
    w.payloads = {{"cuda", R"({"present": false, "error": "NVML probe crashed with signal 11"})"}, {"rocm", kNoRocm}};
    auto e = w.detect();
    REQUIRE(e);
    CHECK(e->machine.backend == "cpu");
    CHECK_FALSE(e->machine.gpus);
    CHECK(any_contains(e->notes, "cuda: detection failed: NVML probe crashed with signal 11"));
  }
}

TEST_CASE("detect_machine: malformed payloads are notes, never failures", "[machine][detect]") {
  DetectWorld w;
  w.payloads = {{"cuda", "{garbage"}, {"rocm", kMi210}, {"xpu", "[]"}};
  auto d = w.detect();
  REQUIRE(d);
  CHECK(d->machine.backend == "rocm");
  CHECK(any_contains(d->notes, "backend cuda: detection payload is not JSON"));
  CHECK(any_contains(d->notes, "backend xpu: detection payload is not a JSON object"));

  SECTION("bad fact values from a backend are refused with a note") {
    w.payloads = {{"cuda", R"({"present": true, "facts": {"gpus": ["9 0"], "driver_version": "580.65.06", "os": "linux"}})"}};
    auto e = w.detect();
    REQUIRE(e);
    CHECK(e->machine.backend == "cuda");
    CHECK_FALSE(e->machine.gpus);
    CHECK(e->machine.driver_version == nv("580.65.06"));
    CHECK(any_contains(e->notes, "gpus = '9 0'"));
    CHECK(any_contains(e->notes, "cuda: fact 'os' ignored"));
  }
  SECTION("a target the CUDA grammar would refuse is still a fact here: the backend judges it later") {
    w.payloads = {{"cuda", R"({"present": true, "facts": {"gpus": ["9", "sm_90a"]}})"}};
    auto e = w.detect();
    REQUIRE(e);
    CHECK(e->machine.gpus == Strings{"9", "sm_90a"});
  }
  SECTION("the old fact names in a payload are ignored with a note") {
    w.payloads = {{"cuda", R"({"present": true, "facts": {"cuda_driver": "13.0", "gpu_targets": ["9.0"], "driver_line": "12.8"}})"}};
    auto e = w.detect();
    REQUIRE(e);
    CHECK(e->machine.backend == "cuda");
    CHECK(e->machine.driver_line == nv("12.8"));
    CHECK_FALSE(e->machine.gpus);
    CHECK(any_contains(e->notes, "cuda: fact 'cuda_driver' ignored"));
    CHECK(any_contains(e->notes, "cuda: fact 'gpu_targets' ignored"));
  }
  SECTION("a detector that throws is a note") {
    auto e = wm::detect_machine(w.options(), []() -> wm::BackendPayloads { throw std::runtime_error("registry broke"); });
    REQUIRE(e);
    CHECK(any_contains(e->notes, "backend detection failed: registry broke"));
    CHECK(e->machine.backend == "cpu");
  }
  SECTION("any backend name is a backend") {
    w.payloads = {{"xpu", R"({"present": true, "facts": {"driver_line": "1.3", "gpus": ["pvc"]}})"}, {"cuda", kNoCuda}};
    auto e = w.detect();
    REQUIRE(e);
    CHECK(e->machine.backend == "xpu");
    CHECK(e->machine.provenance.at("backend") == "xpu detection found hardware");
    CHECK(e->machine.driver_line == nv("1.3"));
    CHECK(e->machine.gpus == Strings{"pvc"});
    CHECK(e->machine.provenance.at("gpus") == "xpu: detection");
  }
  SECTION("a backend whose name is not a backend name") {
    w.payloads = {{"Bad Name", R"({"present": true})"}};
    auto e = w.detect();
    REQUIRE(e);
    CHECK_FALSE(e->machine.backend);
    CHECK(any_contains(e->notes, "backend = 'Bad Name'"));
  }
}

TEST_CASE("detect_machine: overrides come first", "[machine][detect]") {
  DetectWorld w("2.8.0+cu128", {{"cuda", kTwoCudaGpus}, {"rocm", kMi210}});

  SECTION("WHEELFIT_OVERRIDE_* and CONDA_OVERRIDE_CUDA win over the backend's facts") {
    w.env["WHEELFIT_OVERRIDE_GPUS"] = "8.0";
    w.env["CONDA_OVERRIDE_CUDA"] = "12.4";
    w.env["WHEELFIT_OVERRIDE_DRIVER_VERSION"] = "";  // unknown on purpose
    auto d = w.detect();
    REQUIRE(d);
    CHECK(d->machine.gpus == Strings{"8.0"});
    CHECK(d->machine.provenance.at("gpus") == "env WHEELFIT_OVERRIDE_GPUS");
    CHECK(d->machine.driver_line == nv("12.4"));
    CHECK(d->machine.provenance.at("driver_line") == "env CONDA_OVERRIDE_CUDA");
    CHECK_FALSE(d->machine.driver_version);
  }
  SECTION("the old override names win over the backend's facts too") {
    struct Row {
      std::map<std::string, std::string> vars;
      std::optional<std::string> driver_line;  // expected; nullopt = unknown
      std::optional<Strings> gpus;             // expected; nullopt = unknown
      std::string line_provenance, gpus_provenance;
    };
    const std::vector<Row> rows = {
        {{}, "13.0", Strings{"9.0", "8.6"}, "cuda: detection", "cuda: NVML nvmlDeviceGetCudaComputeCapability"},
        {{{"WHEELFIT_OVERRIDE_CUDA_DRIVER", "12.9"}, {"WHEELFIT_OVERRIDE_GPU_TARGETS", "sm_80"}}, "12.9", Strings{"sm_80"},
         "env WHEELFIT_OVERRIDE_CUDA_DRIVER", "env WHEELFIT_OVERRIDE_GPU_TARGETS"},
        {{{"WHEELFIT_OVERRIDE_DRIVER_LINE", "13.1"}, {"WHEELFIT_OVERRIDE_CUDA_DRIVER", "12.9"}}, "13.1", Strings{"9.0", "8.6"},
         "env WHEELFIT_OVERRIDE_DRIVER_LINE", "cuda: NVML nvmlDeviceGetCudaComputeCapability"},
        // set to "": unknown on purpose, the backend's answer is not taken
        {{{"WHEELFIT_OVERRIDE_CUDA_DRIVER", ""}, {"WHEELFIT_OVERRIDE_GPU_TARGETS", ""}}, std::nullopt, std::nullopt, "", ""},
        {{{"CONDA_OVERRIDE_CUDA", ""}}, std::nullopt, Strings{"9.0", "8.6"}, "", "cuda: NVML nvmlDeviceGetCudaComputeCapability"},
        {{{"WHEELFIT_OVERRIDE_GPU_TARGETS", "none"}}, "13.0", Strings{}, "cuda: detection", "env WHEELFIT_OVERRIDE_GPU_TARGETS"},
    };
    for (const auto& row : rows) {
      std::string vars;
      for (const auto& [k, v] : row.vars) vars += k + "='" + v + "' ";
      CAPTURE(vars);
      DetectWorld x;
      x.torch("2.8.0+cu128");
      x.payloads = {{"cuda", kTwoCudaGpus}};
      for (const auto& [k, v] : row.vars) x.env[k] = v;
      auto d = x.detect();
      REQUIRE(d);
      CHECK(d->machine.backend == "cuda");
      if (row.driver_line) {
        CHECK(d->machine.driver_line == nv(*row.driver_line));
        CHECK(d->machine.provenance.at("driver_line") == row.line_provenance);
      } else {
        CHECK_FALSE(d->machine.driver_line);
      }
      CHECK(d->machine.gpus == row.gpus);
      if (row.gpus) CHECK(d->machine.provenance.at("gpus") == row.gpus_provenance);
    }
  }
  SECTION("the backend: --backend, then the override, then torch's label") {
    w.env["WHEELFIT_OVERRIDE_BACKEND"] = "rocm";
    auto d = w.detect();
    REQUIRE(d);
    CHECK(d->machine.backend == "rocm");
    CHECK(d->machine.provenance.at("backend") == "env WHEELFIT_OVERRIDE_BACKEND");
    CHECK(d->machine.gpus == Strings{"gfx90a:xnack-"});
    CHECK_FALSE(d->machine.driver_line);
    auto e = w.detect_backend("cpu");
    REQUIRE(e);
    CHECK(e->machine.backend == "cpu");
    CHECK(e->machine.provenance.at("backend") == "--backend");
    CHECK_FALSE(e->machine.gpus);  // a choice, not a finding: hardware was found
  }
  SECTION("a bad override or --backend is an error naming it") {
    w.env["WHEELFIT_OVERRIDE_GLIBC"] = "two";
    auto d = w.detect();
    REQUIRE_FALSE(d);
    CHECK(contains(d.error().message, "WHEELFIT_OVERRIDE_GLIBC"));
    w.env.erase("WHEELFIT_OVERRIDE_GLIBC");
    check_error(w.detect_backend("Bad Name"), Errc::invalid_input, {"--backend", "Bad Name"});
    CHECK_FALSE(w.detect_backend(" "));
    w.env["WHEELFIT_OVERRIDE_BACKEND"] = "Bad Name";
    auto f = w.detect();
    REQUIRE_FALSE(f);
    CHECK(contains(f.error().message, "WHEELFIT_OVERRIDE_BACKEND"));
  }
  SECTION("--backend names any backend; one without detection leaves its facts unknown") {
    auto d = w.detect_backend("XPU");
    REQUIRE(d);
    CHECK(d->machine.backend == "xpu");
    CHECK(d->machine.provenance.at("backend") == "--backend");
    CHECK_FALSE(d->machine.gpus);
    CHECK_FALSE(d->machine.driver_line);
    CHECK(any_contains(d->notes, "no xpu detection ran"));
  }
  SECTION("python and torch overridden: the interpreter is not asked") {
    w.env["WHEELFIT_OVERRIDE_PYTHON"] = "3.11";
    w.env["WHEELFIT_OVERRIDE_TORCH"] = "2.7.1+rocm6.3";
    auto o = w.options();
    o.python = (w.dir / "no-such-python").string();
    auto d = w.detect(o);
    REQUIRE(d);
    CHECK(wheelfit::test::script_runs(w.python) == 0);
    CHECK(d->machine.python == nv("3.11"));
    CHECK(d->machine.backend == "rocm");
    CHECK_FALSE(d->interpreter);
    CHECK(any_contains(d->notes, "the interpreter was not asked"));
  }
  SECTION("torch overridden to unknown: the interpreter gives python only") {
    w.env["WHEELFIT_OVERRIDE_TORCH"] = "";
    auto d = w.detect();
    REQUIRE(d);
    CHECK(d->machine.python == nv("3.12"));
    CHECK_FALSE(d->machine.torch);
    CHECK(d->machine.backend == "cuda");
    CHECK(d->machine.provenance.at("backend") == "cuda detection found hardware");
  }
  SECTION("host facts: an override set to \"\" stays unknown") {
    w.env["WHEELFIT_OVERRIDE_GLIBC"] = "";
    w.env["WHEELFIT_OVERRIDE_OS"] = "linux";
    auto o = w.options();
    o.host = true;
    auto d = w.detect(o);
    REQUIRE(d);
    CHECK_FALSE(d->machine.glibc);
    CHECK(d->machine.provenance.at("os") == "env WHEELFIT_OVERRIDE_OS");
    CHECK(d->machine.cpu_arch);
  }
}

TEST_CASE("detect_machine: the interpreter's troubles", "[machine][detect][posix]") {
  DetectWorld w;
  SECTION("python3 not on PATH: a note, python and torch unknown") {
    w.env["PATH"] = (w.dir / "empty").string();
    auto d = w.detect();
    REQUIRE(d);
    CHECK_FALSE(d->machine.python);
    CHECK_FALSE(d->machine.torch);
    CHECK(any_contains(d->notes, "python3: not found on PATH"));
    CHECK(d->machine.backend == "cpu");
  }
  SECTION("--python that does not exist: an error naming it") {
    auto o = w.options();
    o.python = (w.dir / "nope" / "python").string();
    auto d = w.detect(o);
    REQUIRE_FALSE(d);
    CHECK(contains(d.error().message, "--python: " + (w.dir / "nope" / "python").string() + ": no such file"));
  }
  SECTION("--python that hangs: an error saying so") {
    wheelfit::test::write_script(w.python, "sleep 30");
    auto o = w.options();
    o.python = w.python.string();
    o.python_timeout = std::chrono::milliseconds(200);
    auto d = w.detect(o);
    REQUIRE_FALSE(d);
    CHECK(contains(d.error().message, "timed out after 200 ms"));
  }
  SECTION("--python printing garbage") {
    wheelfit::test::write_script(w.python, "echo garbage");
    auto o = w.options();
    o.python = "python3";  // found on PATH
    auto d = w.detect(o);
    REQUIRE_FALSE(d);
    CHECK(contains(d.error().message, w.python.string() + ": printed no JSON"));
  }
  SECTION("a free-threaded PyPy under emulation") {
    write_fake_python(w.python, wheelfit::test::python_answer(w.python.string(), {w.site.string()}, "3, 13, 2", true, "t",
                                                              "riscv64", "pypy"));
    auto o = w.options();
    o.host = true;
    auto d = w.detect(o);
    REQUIRE(d);
    CHECK(d->machine.python == nv("3.13"));
    CHECK(d->machine.python_free_threaded);
    CHECK(any_contains(d->notes, "is pypy, not CPython"));
    CHECK(d->machine.cpu_arch == "riscv64");
    CHECK(contains(d->machine.provenance.at("cpu_arch"), "os.uname().machine"));
  }
  SECTION("an unusable torch version is a note") {
    w.torch("not.a.version");
    auto d = w.detect();
    REQUIRE(d);
    CHECK_FALSE(d->machine.torch);
    CHECK(any_contains(d->notes, "torch = 'not.a.version'"));
  }
  SECTION("cache_dir empty: no cache") {
    auto o = w.options();
    o.cache_dir = fs::path();
    REQUIRE(w.detect(o));
    REQUIRE(w.detect(o));
    CHECK(wheelfit::test::script_runs(w.python) == 2);
    CHECK_FALSE(fs::exists(w.dir / "cache"));
  }
  SECTION("no XDG_CACHE_HOME or HOME: a note") {
    w.env.erase("XDG_CACHE_HOME");
    auto d = w.detect();
    REQUIRE(d);
    CHECK(any_contains(d->notes, "not cached"));
  }
}

TEST_CASE("detect_machine runs the backends' detection while the interpreter starts", "[machine][detect][posix]") {
  DetectWorld w;
  // The fake interpreter announces its start, then answers only once the detector has run.
  const fs::path started = w.dir / "started", go = w.dir / "go";
  wheelfit::test::write_script(w.python, "touch '" + started.string() + "'\nwhile [ ! -f '" + go.string() +
                                             "' ]; do sleep 0.01; done\ncat <<'EOF'\n" +
                                             wheelfit::test::python_answer(w.python.string(), {w.site.string()}) + "\nEOF");
  bool saw_interpreter_running = false;
  auto o = w.options();
  o.python_timeout = std::chrono::milliseconds(20000);
  auto d = wm::detect_machine(o, [&] {
    for (int i = 0; i < 1000 && !fs::exists(started); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    saw_interpreter_running = fs::exists(started);
    wheelfit::test::write_file(go, "");
    return w.payloads;
  });
  REQUIRE(d);
  CHECK(saw_interpreter_running);
  CHECK(d->machine.python == nv("3.12"));
}
