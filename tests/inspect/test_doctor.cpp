// doctor: a fake site folder (dist-info with METADATA, WHEEL, RECORD; crafted ELF modules)
// judged by the explain engine.
#include <catch2/catch.hpp>

#include <algorithm>

#include "support/backend_support.hpp"
#include "inspect/binary_writer.hpp"
#include "support/test_support.hpp"
#include "wheelfit/inspect/doctor.hpp"

using namespace wheelfit;
using inspect::Verdict;
using resolve::Demand;
namespace bin = wheelfit::test::bin;
using test::write_file;

namespace {

machine::Machine machine_with_gpu(const std::string& gpus) {
  machine::Machine m;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.35"}, {"python", "3.12"}, {"torch", "2.8.0+cu128"},
           {"driver_line", "13.0"}, {"gpus", gpus}}) {
    REQUIRE(machine::set_fact(m, k, v, "test"));
  }
  return m;
}

std::string module(std::vector<bin::FatEntry> kernels) {
  bin::LibrarySpec spec;
  spec.needed = {"libc10.so", "libcudart.so.12"};
  spec.needs = {{"libc.so.6", {"GLIBC_2.17"}}};
  spec.extra.push_back(bin::Section{".nv_fatbin", 1, bin::fatbin_container(kernels)});
  return bin::write_library(spec).bytes;
}

// site/
//   flash_attn-2.8.3+cu128torch2.8.dist-info/{METADATA, WHEEL, RECORD}
//   flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so   (sm_80 SASS only)
//   six-1.16.0.dist-info/{METADATA, RECORD}            (pure Python)
//   six.py
void make_site(const test::TempDir& dir) {
  const auto site = dir / "site-packages";
  const std::string info = "flash_attn-2.8.3+cu128torch2.8.dist-info/";
  write_file(site / (info + "METADATA"), "Metadata-Version: 2.1\nName: flash_attn\nVersion: 2.8.3+cu128torch2.8\n\n");
  write_file(site / (info + "WHEEL"), "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n");
  write_file(site / (info + "RECORD"),
             "flash_attn/__init__.py,sha256=abc,10\n"
             "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so,sha256=def,100\n"
             "\"flash_attn/odd,name.py\",sha256=ghi,3\n" +
                 info + "RECORD,,\n");
  write_file(site / "flash_attn/__init__.py", "");
  write_file(site / "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so", module({{2, 80}}));
  write_file(site / "six-1.16.0.dist-info/METADATA", "Name: six\nVersion: 1.16.0\n\n");
  write_file(site / "six-1.16.0.dist-info/RECORD", "six.py,sha256=x,1\n");
  write_file(site / "six.py", "");
}

}  // namespace

TEST_CASE("doctor: a distribution whose kernels miss the GPU is listed with gpu_arch and why", "[inspect][doctor]") {
  test::TempDir dir;
  make_site(dir);
  auto r = inspect::doctor({(dir / "site-packages").string()}, machine_with_gpu("9.0"), test::cuda_policy());
  REQUIRE(r);
  CHECK(r->distributions == 2);
  REQUIRE(r->dists.size() == 1);  // six has nothing compiled
  const auto& d = r->dists[0];
  CHECK(d.name == "flash-attn");
  CHECK(d.version == "2.8.3+cu128torch2.8");
  CHECK(d.modules == std::vector<std::string>{"flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so"});
  CHECK_FALSE(d.fits());
  CHECK_FALSE(r->ok());
  const auto& g = d.explanation.demands[0];
  CHECK(g.demand == Demand::gpu_arch);
  CHECK(g.verdict == Verdict::fails);
  CHECK(g.detail.find("no kernel image is available for execution on the device") != std::string::npos);
  // The rest fits: the label's torch and CUDA, the WHEEL tags' Python and platform.
  for (const auto& rep : d.explanation.demands) {
    if (rep.demand == Demand::gpu_arch) continue;
    INFO(resolve::to_string(rep.demand) << ": " << rep.detail);
    CHECK(rep.verdict == Verdict::ok);
  }
}

TEST_CASE("doctor: the same site on an sm_86 machine fits", "[inspect][doctor]") {
  test::TempDir dir;
  make_site(dir);
  auto r = inspect::doctor({(dir / "site-packages").string()}, machine_with_gpu("8.6"), test::cuda_policy());
  REQUIRE(r);
  CHECK(r->ok());
}

TEST_CASE("doctor: missing folders, a missing RECORD, an earlier folder shadowing a later one", "[inspect][doctor]") {
  test::TempDir dir;
  auto none = inspect::doctor({(dir / "nope").string()}, machine_with_gpu("9.0"), test::cuda_policy());
  REQUIRE_FALSE(none);
  CHECK(none.error().is(Errc::not_found));
  CHECK(none.error().message.find("nope") != std::string::npos);

  make_site(dir);
  write_file(dir / "user/flash_attn-2.9.0.dist-info/METADATA", "Name: flash-attn\nVersion: 2.9.0\n\n");
  auto r = inspect::doctor({(dir / "user").string(), (dir / "nope").string(), (dir / "site-packages").string()},
                           machine_with_gpu("9.0"), test::cuda_policy());
  REQUIRE(r);
  CHECK(r->dists.empty());
  auto has = [&](const std::string& s) {
    return std::any_of(r->notes.begin(), r->notes.end(), [&](const std::string& n) { return n.find(s) != std::string::npos; });
  };
  CHECK(has("no RECORD"));
  CHECK(has("nope: no such folder"));
  CHECK(has("shadowed"));
}
