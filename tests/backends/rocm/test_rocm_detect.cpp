// ROCm detection through fake sysroots: KFD topology nodes, the amdgpu version, PCI, the
// *_VISIBLE_DEVICES lists, and the detect JSON.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/test_support.hpp"
#include "wheelfit/backends/rocm_detect.hpp"

namespace rocm = wheelfit::backends::rocm;
using wheelfit::Errc;
using wheelfit::test::TempDir;
using wheelfit::test::write_file;

namespace {

// A fake sysroot; add_node writes nodes/<n>/properties (and name when given).
struct FakeRoot {
  TempDir dir;
  rocm::DetectEnv env() const {
    rocm::DetectEnv e;
    e.sysroot = dir.path();
    return e;
  }
  std::filesystem::path nodes() const { return dir / "sys/class/kfd/kfd/topology/nodes"; }
  void add_node(const std::string& n, const std::string& properties, const std::optional<std::string>& name = {}) const {
    write_file(nodes() / n / "properties", properties);
    if (name) write_file(nodes() / n / "name", *name);
  }
  void add_gpu(const std::string& n, unsigned version, const std::string& name = "") const {
    add_node(n, "cpu_cores_count 0\nsimd_count 440\ngfx_target_version " + std::to_string(version) + "\nvendor_id 4098\n",
             name.empty() ? std::nullopt : std::optional<std::string>(name + "\n"));
  }
  void add_cpu(const std::string& n) const { add_node(n, "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n", "\n"); }
  void amdgpu_version(const std::string& v) const { write_file(dir / "sys/module/amdgpu/version", v); }
};

std::vector<std::string> targets(const rocm::Detection& d) {
  std::vector<std::string> out;
  for (const auto& g : *d.devices) out.push_back(g.target);
  return out;
}

bool any_note(const rocm::Detection& d, const std::string& needle) {
  for (const auto& n : d.notes)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("gfx_target_name formats gfx%d%x%x", "[backends][rocm]") {
  struct Row {
    std::uint64_t version;
    std::string name;
  };
  auto row = GENERATE(values<Row>({
      {90010, "gfx90a"},
      {110000, "gfx1100"},
      {90402, "gfx942"},
      {90008, "gfx908"},
      {90006, "gfx906"},
      {100300, "gfx1030"},
      {110001, "gfx1101"},
      {120001, "gfx1201"},
      {90500, "gfx950"},
      {80003, "gfx803"},
      {90015, "gfx90f"},
  }));
  CAPTURE(row.version);
  auto name = rocm::gfx_target_name(row.version);
  REQUIRE(name);
  CHECK(*name == row.name);
}

TEST_CASE("gfx_target_name refuses a CPU node and digits over 15", "[backends][rocm]") {
  for (std::uint64_t v : {0ull, 91600ull, 90016ull, 99999ull}) {
    CAPTURE(v);
    auto name = rocm::gfx_target_name(v);
    REQUIRE_FALSE(name);
    CHECK(name.error().is(Errc::invalid_input));
  }
  CHECK_THAT(rocm::gfx_target_name(0).error().message, Catch::Contains("CPU node"));
}

TEST_CASE("parse_gfx_target_version reads the properties text", "[backends][rocm]") {
  struct Row {
    std::string text;
    std::optional<std::uint64_t> value;
    std::string error;
  };
  auto row = GENERATE(values<Row>({
      {"cpu_cores_count 0\ngfx_target_version 90010\nvendor_id 4098\n", 90010, ""},
      {"gfx_target_version 0\n", 0, ""},
      {"gfx_target_version\t110000", 110000, ""},
      {"  gfx_target_version   90402  \r\n", 90402, ""},
      {"gfx_target_version_extra 5\ngfx_target_version 90010\n", 90010, ""},
      {"simd_count 4\n", std::nullopt, "no gfx_target_version line"},
      {"", std::nullopt, "no gfx_target_version line"},
      {"gfx_target_version gfx90a\n", std::nullopt, "not a decimal number"},
      {"gfx_target_version -1\n", std::nullopt, "not a decimal number"},
      {"gfx_target_version 99999999999999999999999\n", std::nullopt, "not a decimal number"},
  }));
  CAPTURE(row.text);
  wheelfit::test::check_outcome(rocm::parse_gfx_target_version(row.text), row.value, row.error);
}

TEST_CASE("ROCm detect reads KFD topology nodes", "[backends][rocm]") {
  FakeRoot root;
  SECTION("a CPU node and a gfx90a GPU") {
    root.add_cpu("0");
    root.add_gpu("1", 90010, "gfx90a");
    root.amdgpu_version("6.8.5\n");
    auto d = rocm::detect(root.env());
    CHECK(d.present);
    REQUIRE(d.devices);
    REQUIRE(d.devices->size() == 1);
    CHECK((*d.devices)[0] == rocm::Device{0, "1", "gfx90a", "gfx90a"});
    CHECK(d.driver_version == "6.8.5");
    CHECK_THAT(d.provenance.at("gpus"), Catch::Contains("KFD topology"));
    CHECK_THAT(d.provenance.at("driver_version"), Catch::Contains("sys/module/amdgpu/version"));
  }
  SECTION("several GPUs in numeric node order (10 after 2)") {
    root.add_cpu("0");
    root.add_gpu("10", 90402);
    root.add_gpu("2", 110000);
    root.add_gpu("1", 90010);
    auto d = rocm::detect(root.env());
    CHECK(targets(d) == std::vector<std::string>{"gfx90a", "gfx1100", "gfx942"});
    CHECK((*d.devices)[2].index == 2);
    CHECK((*d.devices)[2].node == "10");
    CHECK((*d.devices)[2].name.empty());
  }
  SECTION("only CPU nodes: not present, an empty known list") {
    root.add_cpu("0");
    root.add_cpu("1");
    auto d = rocm::detect(root.env());
    CHECK_FALSE(d.present);
    REQUIRE(d.devices);
    CHECK(d.devices->empty());
    CHECK(any_note(d, "no GPU node"));
  }
  SECTION("a malformed node and a node without properties are skipped with notes") {
    root.add_gpu("1", 90010);
    root.add_node("2", "gfx_target_version banana\n");
    root.add_node("3", "simd_count 4\n");
    root.add_gpu("4", 91600);
    std::filesystem::create_directories(root.nodes() / "5");
    std::filesystem::create_directories(root.nodes() / "not-a-node");
    auto d = rocm::detect(root.env());
    CHECK(targets(d) == std::vector<std::string>{"gfx90a"});
    CHECK(any_note(d, "KFD node 2") );
    CHECK(any_note(d, "not a decimal number"));
    CHECK(any_note(d, "KFD node 3"));
    CHECK(any_note(d, "KFD node 4"));
    CHECK(any_note(d, "KFD node 5"));
    CHECK_FALSE(any_note(d, "not-a-node"));
  }
  SECTION("no KFD at all: not present, the GPU list unknown, the reason noted") {
    auto d = rocm::detect(root.env());
    CHECK_FALSE(d.present);
    CHECK_FALSE(d.devices);
    CHECK(any_note(d, "amdgpu kernel driver is not loaded"));
    CHECK(any_note(d, "amdgpu module is not loaded"));
    CHECK(d.provenance.empty());
  }
  SECTION("no KFD but an AMD display device on the PCI bus") {
    write_file(root.dir / "sys/bus/pci/devices/0000:03:00.0/vendor", "0x1002\n");
    write_file(root.dir / "sys/bus/pci/devices/0000:03:00.0/class", "0x030000\n");
    write_file(root.dir / "sys/bus/pci/devices/0000:00:01.0/vendor", "0x1002\n");
    write_file(root.dir / "sys/bus/pci/devices/0000:00:01.0/class", "0x060400\n");  // a bridge
    write_file(root.dir / "sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
    write_file(root.dir / "sys/bus/pci/devices/0000:01:00.0/class", "0x030200\n");
    auto d = rocm::detect(root.env());
    CHECK_FALSE(d.present);
    CHECK(any_note(d, "AMD display device is on the bus (0000:03:00.0)"));
  }
  SECTION("the amdgpu module without a version file (in-kernel driver)") {
    root.add_gpu("1", 90010);
    std::filesystem::create_directories(root.dir / "sys/module/amdgpu");
    auto d = rocm::detect(root.env());
    CHECK(d.present);
    CHECK_FALSE(d.driver_version);
    CHECK(any_note(d, "in-kernel amdgpu driver publishes no version"));
  }
}

TEST_CASE("ROCm visible-device lists", "[backends][rocm]") {
  const std::vector<rocm::Device> four = {
      {0, "1", "", "gfx90a"}, {1, "2", "", "gfx942"}, {2, "3", "", "gfx1100"}, {3, "4", "", "gfx908"}};
  struct Row {
    std::optional<std::string> value;
    std::vector<std::string> targets;
    std::string note;
  };
  auto row = GENERATE(values<Row>({
      {std::nullopt, {"gfx90a", "gfx942", "gfx1100", "gfx908"}, ""},
      {"", {}, "no GPU is visible"},
      {"2", {"gfx1100"}, "1 of 4"},
      {"3, 0", {"gfx908", "gfx90a"}, "2 of 4"},
      {"1,9,2", {"gfx942"}, "'9' is out of range"},
      {"0,0", {"gfx90a"}, "'0' is a repeat"},
      {"x,1", {}, "'x' is not an index"},
      {"GPU-4a8cb8b2e8b4dbbc", {"gfx90a", "gfx942", "gfx1100", "gfx908"}, "every GPU is counted"},
  }));
  CAPTURE(row.value);
  auto v = rocm::apply_visible_devices(four, "ROCR_VISIBLE_DEVICES", row.value);
  std::vector<std::string> got;
  for (std::size_t i = 0; i < v.devices.size(); ++i) {
    got.push_back(v.devices[i].target);
    CHECK(v.devices[i].index == static_cast<int>(i));
  }
  CHECK(got == row.targets);
  if (row.note.empty()) CHECK(v.note.empty());
  else CHECK_THAT(v.note, Catch::Contains(row.note) && Catch::Contains("ROCR_VISIBLE_DEVICES"));
}

TEST_CASE("ROCm detect applies ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES", "[backends][rocm]") {
  FakeRoot root;
  root.add_gpu("1", 90010);
  root.add_gpu("2", 90402);
  root.add_gpu("3", 110000);
  auto env = root.env();
  env.rocr_visible_devices = "2,1";     // gfx1100, gfx942
  env.hip_visible_devices = "1";        // of those: gfx942
  auto d = rocm::detect(env);
  CHECK(targets(d) == std::vector<std::string>{"gfx942"});
  CHECK((*d.devices)[0].index == 0);
  env.hip_visible_devices = "";
  d = rocm::detect(env);
  CHECK(d.present);
  CHECK(d.devices->empty());
  CHECK(any_note(d, "hidden"));
}

TEST_CASE("ROCm detect JSON follows the plugin ABI payload", "[backends][rocm]") {
  FakeRoot root;
  root.add_cpu("0");
  root.add_gpu("1", 90010, "gfx90a");
  root.add_gpu("2", 90010, "gfx90a");
  root.amdgpu_version("6.8.5");
  const auto v = boost::json::parse(rocm::to_json(rocm::detect(root.env()))).as_object();
  CHECK(v.at("present").as_bool());
  const auto& facts = v.at("facts").as_object();
  CHECK(facts.at("driver_version").as_string() == "6.8.5");
  CHECK(facts.at("gpus").as_array() == boost::json::array{"gfx90a", "gfx90a"});
  CHECK_FALSE(facts.contains("gpu_targets"));  // the neutral key only
  const auto& dev = v.at("devices").as_array().at(1).as_object();
  CHECK(dev.at("index").as_int64() == 1);
  CHECK(dev.at("target").as_string() == "gfx90a");
  CHECK(dev.at("name").as_string() == "gfx90a");
  CHECK(v.at("provenance").as_object().contains("gpus"));
  CHECK(v.at("notes").is_array());
  CHECK_FALSE(v.contains("error"));

  SECTION("no KFD: facts hold no gpus (unknown)") {
    FakeRoot empty;
    const auto e = boost::json::parse(rocm::to_json(rocm::detect(empty.env()))).as_object();
    CHECK_FALSE(e.at("present").as_bool());
    CHECK(e.at("facts").as_object().empty());
    CHECK_FALSE(e.at("notes").as_array().empty());
  }
}

TEST_CASE("ROCm detect_json reads WHEELFIT_SYSROOT and never throws", "[backends][rocm]") {
  FakeRoot root;
  root.add_gpu("1", 110000);
  wheelfit::test::ScopedEnv sysroot("WHEELFIT_SYSROOT", root.dir.path().string());
  wheelfit::test::ScopedEnv rocr("ROCR_VISIBLE_DEVICES", std::nullopt);
  wheelfit::test::ScopedEnv hip("HIP_VISIBLE_DEVICES", std::nullopt);
  const auto v = boost::json::parse(rocm::detect_json()).as_object();
  CHECK(v.at("present").as_bool());
  CHECK(v.at("facts").as_object().at("gpus").as_array() == boost::json::array{"gfx1100"});
}
