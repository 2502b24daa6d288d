// `wheelfit explain`, `wheelfit doctor` and `resolve --inspect` end to end: wheels built in the
// test (crafted ELF modules with fatbinaries, zipped), machine profiles, exit codes, the JSON.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <boost/json.hpp>

#include "inspect/binary_writer.hpp"
#include "support/cli_support.hpp"
#include "support/net/test_server.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"

namespace fs = std::filesystem;
namespace json = boost::json;
namespace bin = wheelfit::test::bin;
using wheelfit::test::TempDir;
using wheelfit::test::write_file;

namespace {

using CliExplainRun = wheelfit::test::CliRun;

CliExplainRun wheelfit_run(const std::vector<std::string>& args, const std::string& env = "") {
  return wheelfit::test::run_program("env -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA "
                                     "-u CONDA_OVERRIDE_GLIBC -u WHEELFIT_PLUGIN_PATH " + env,
                                     wheelfit::test::built_wheelfit(), args);
}

std::string module(std::vector<bin::FatEntry> kernels, std::vector<std::string> glibc = {"GLIBC_2.17", "GLIBC_2.28"},
                   std::uint16_t machine = 62) {
  bin::LibrarySpec spec;
  spec.machine = machine;
  spec.needed = {"libc10.so", "libcudart.so.12"};
  spec.needs = {{"libc.so.6", std::move(glibc)}};
  spec.extra.push_back(bin::Section{".nv_fatbin", 1, bin::fatbin_container(kernels)});
  return bin::write_library(spec).bytes;
}

const std::string kModule = "pkg/_C.cpython-312-x86_64-linux-gnu.so";
const std::string kTagsCliExplain = "cp312-cp312-manylinux_2_28_x86_64.whl";

struct CliExplainWorld {
  TempDir dir;
  fs::path machine = dir / "machine.toml";
  fs::path old = dir / "old.toml";
  CliExplainWorld() {
    write_file(machine, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                        "cuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n");
    write_file(old, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.31\"\npython = \"3.12\"\ntorch = \"2.8.0+cu128\"\n"
                    "cuda_driver = \"13.0\"\ngpus = [\"9.0\"]\n");
  }
  // A wheel file in the temp dir.
  fs::path wheel(const std::string& name, const std::string& so) const {
    const fs::path p = dir / "wheels" / name;
    write_file(p, wheelfit::test::build_zip({{"pkg/__init__.py", "\n"}, {kModule, so}, {"pkg/big.bin", std::string(8192, 'z')}}));
    return p;
  }
};

json::object parse(const CliExplainRun& r) {
  INFO(r.out << r.err);
  json::value v = json::parse(r.out);
  REQUIRE(v.is_object());
  return v.as_object();
}

}  // namespace

TEST_CASE("wheelfit explain: a fitting wheel exits 0; --json has the demands and files shape", "[cli][explain]") {
  CliExplainWorld w;
  const auto whl = w.wheel("pkg-1.0+cu128torch2.8-" + kTagsCliExplain, module({{2, 80}, {2, 90}, {1, 90}}));
  auto human = wheelfit_run({"explain", whl.string(), "--machine", w.machine.string()});
  INFO(human.out << human.err);
  CHECK(human.code == 0);
  CHECK(human.out.find("gpu_arch: ok") != std::string::npos);
  CHECK(human.out.find("verdict: it runs here") != std::string::npos);

  auto r = wheelfit_run({"explain", whl.string(), "--machine", w.machine.string(), "--json"});
  REQUIRE(r.code == 0);
  auto o = parse(r);
  CHECK(o.at("fits").as_bool());
  CHECK(o.at("source").as_string() == "file");
  const auto& demands = o.at("demands").as_array();
  REQUIRE(demands.size() == 7);
  const std::vector<std::string> order{"gpu_arch", "torch", "cuda", "python", "cpu_arch", "os", "glibc"};
  for (std::size_t i = 0; i < 7; ++i) {
    const auto& d = demands[i].as_object();
    CHECK(d.size() == 5);
    CHECK(d.at("demand").as_string() == order[i]);
    for (const char* key : {"wheel", "machine", "verdict", "detail"}) CHECK(d.at(key).is_string());
    CHECK(d.at("verdict").as_string() == "ok");
  }
  const auto& files = o.at("files").as_array();
  REQUIRE(files.size() == 1);
  const auto& f = files[0].as_object();
  CHECK(f.size() == 6);
  CHECK(f.at("path").as_string() == kModule);
  CHECK(f.at("device_list").as_string() == "8.0;9.0+PTX");
  CHECK(json::serialize(f.at("sass")) == R"(["sm_80","sm_90"])");
  CHECK(json::serialize(f.at("ptx")) == R"(["compute_90"])");
  CHECK(f.at("glibc").as_string() == "2.28");
  CHECK(json::serialize(f.at("needed")) == R"(["libc10.so","libcudart.so.12"])");
  CHECK(o.at("bytes_fetched").to_number<std::uint64_t>() > 0);
  CHECK(o.at("wheel_size").to_number<std::uint64_t>() == std::filesystem::file_size(whl));
}

TEST_CASE("wheelfit explain: a failing demand exits 1 with the run-time error", "[cli][explain]") {
  CliExplainWorld w;
  SECTION("gpu_arch: sm_80 SASS only on sm_90") {
    const auto whl = w.wheel("pkg-1.0+cu128torch2.8-" + kTagsCliExplain, module({{2, 80}}));
    auto r = wheelfit_run({"explain", whl.string(), "--machine", w.machine.string()});
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(r.out.find("gpu_arch: FAILS") != std::string::npos);
    CHECK(r.out.find("no kernel image is available for execution on the device") != std::string::npos);
  }
  SECTION("glibc: GLIBC_2.34 on glibc 2.31, and the manylinux floor warning") {
    const auto whl = w.wheel("pkg-1.0+cu128torch2.8-" + kTagsCliExplain, module({{2, 90}}, {"GLIBC_2.17", "GLIBC_2.34"}));
    auto r = wheelfit_run({"explain", whl.string(), "--machine", w.old.string(), "--json"});
    CHECK(r.code == 1);
    auto o = parse(r);
    const auto& glibc = o.at("demands").as_array()[6].as_object();
    CHECK(glibc.at("verdict").as_string() == "fails");
    CHECK(std::string(glibc.at("detail").as_string()).find("version 'GLIBC_2.34' not found") != std::string::npos);
    CHECK(json::serialize(o.at("warnings")).find("the tag claims glibc 2.28") != std::string::npos);
  }
  SECTION("cpu_arch: an aarch64 wheel on x86_64") {
    const auto whl = w.wheel("pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_aarch64.whl", module({{2, 90}}, {"GLIBC_2.17"}, 183));
    auto r = wheelfit_run({"explain", whl.string(), "--machine", w.machine.string(), "--json"});
    CHECK(r.code == 1);
    auto o = parse(r);
    CHECK(o.at("demands").as_array()[4].as_object().at("verdict").as_string() == "fails");
  }
}

TEST_CASE("wheelfit explain: a bare wheel name is judged on the name alone", "[cli][explain]") {
  CliExplainWorld w;
  auto r = wheelfit_run({"explain", "pkg-1.0+cu128torch2.8-" + kTagsCliExplain, "--machine", w.machine.string(), "--json"});
  CHECK(r.code == 0);
  auto o = parse(r);
  CHECK(o.at("source").as_string() == "name");
  CHECK_FALSE(o.at("binaries_read").as_bool());
  CHECK(o.at("files").as_array().empty());

  auto other = wheelfit_run({"explain", "pkg-1.0+cu128torch2.9-" + kTagsCliExplain, "--machine", w.machine.string()});
  CHECK(other.code == 1);
  CHECK(other.out.find("torch: FAILS") != std::string::npos);
  CHECK(other.out.find("judged on the file name alone") != std::string::npos);
}

TEST_CASE("wheelfit explain: bad input exits 2 naming the file", "[cli][explain]") {
  CliExplainWorld w;
  write_file(w.dir / "junk.whl", "not a zip");
  write_file(w.dir / ("pkg-1.0-" + kTagsCliExplain), "not a zip either");
  struct Row {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string missing = (w.dir / "nope" / "pkg-1.0-py3-none-any.whl").string();
  const std::vector<Row> rows{
      {{"explain"}, "give exactly one WHEEL"},
      {{"explain", missing}, missing + ": no such file"},
      {{"explain", (w.dir / "junk.whl").string()}, "junk.whl"},
      {{"explain", (w.dir / ("pkg-1.0-" + kTagsCliExplain)).string()}, "pkg-1.0-" + kTagsCliExplain},
      {{"explain", "not-a-wheel"}, "not-a-wheel"},
      {{"explain", "pkg-1.0-py3-none-any.whl", "--machine", missing}, "--machine"},
  };
  for (const auto& row : rows) {
    auto r = wheelfit_run(row.args);
    INFO(row.args.size() << " args: " << r.out << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(row.message) != std::string::npos);
  }
}

TEST_CASE("wheelfit doctor --site: lists what will not run here", "[cli][doctor]") {
  CliExplainWorld w;
  const auto site = w.dir / "site";
  write_file(site / "pkg-1.0+cu128torch2.8.dist-info/METADATA", "Name: pkg\nVersion: 1.0+cu128torch2.8\n\n");
  write_file(site / "pkg-1.0+cu128torch2.8.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp312-cp312-manylinux_2_28_x86_64\n");
  write_file(site / "pkg-1.0+cu128torch2.8.dist-info/RECORD", kModule + ",sha256=x,1\npkg/__init__.py,,\n");
  write_file(site / kModule, module({{2, 80}}));
  auto r = wheelfit_run({"doctor", "--site", site.string(), "--machine", w.machine.string()});
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("pkg 1.0+cu128torch2.8 (1 compiled file): WILL NOT RUN (gpu_arch)") != std::string::npos);
  CHECK(r.out.find("no kernel image is available") != std::string::npos);

  auto j = wheelfit_run({"doctor", "--site", site.string(), "--machine", w.machine.string(), "--json"});
  CHECK(j.code == 1);
  auto o = parse(j);
  CHECK_FALSE(o.at("ok").as_bool());
  const auto& d = o.at("dists").as_array().at(0).as_object();
  CHECK(d.at("name").as_string() == "pkg");
  CHECK(json::serialize(d.at("failing")) == R"(["gpu_arch"])");

  auto bad = wheelfit_run({"doctor", "--site", (w.dir / "nope").string(), "--machine", w.machine.string()});
  CHECK(bad.code == 2);
}

TEST_CASE("wheelfit resolve --inspect: a wheel whose real archs miss the GPU is rejected with the evidence", "[cli][explain]") {
  CliExplainWorld w;
  // Two candidates: 2.0 carries only sm_80 (the policy says it covers sm_90), 1.0 carries sm_90.
  const std::string new_name = "pkg-2.0+cu128torch2.8-" + kTagsCliExplain, old_name = "pkg-1.0+cu128torch2.8-" + kTagsCliExplain;
  const auto new_whl = w.wheel(new_name, module({{2, 80}}));
  const auto old_whl = w.wheel(old_name, module({{2, 90}}));
  auto href = [](const fs::path& p) {
    std::string s = "file://" + p.string();
    return s.replace(s.find('+'), 1, "%2B");
  };
  write_file(w.dir / "index/pkg/index.html", "<html><body><a href=\"" + href(new_whl) + "\">" + new_name + "</a><a href=\"" +
                                                 href(old_whl) + "\">" + old_name + "</a></body></html>");
  write_file(w.dir / "proj/comfy-env.toml", "python = \"3.12\"\n[cuda]\npackages = [\"pkg\"]\n");
  const std::vector<std::string> base{"resolve", (w.dir / "proj/comfy-env.toml").string(), "--index",
                                      (w.dir / "index").string(), "--machine", w.machine.string(), "--json"};
  auto plain = wheelfit_run(base);
  REQUIRE(plain.code == 0);
  CHECK(json::serialize(parse(plain).at("packages")).find(new_name) != std::string::npos);

  auto args = base;
  args.push_back("--inspect");
  auto r = wheelfit_run(args);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto packages = json::serialize(parse(r).at("packages"));
  CHECK(packages.find(old_name) != std::string::npos);
  CHECK(packages.find(new_name) == std::string::npos);
  // A local wheel's reads count the same bytes again: no "N of M bytes read" with N > M.
  CHECK(r.err.find("--inspect: " + old_name + ": fits, a local wheel of " + std::to_string(fs::file_size(old_whl)) +
                   " bytes") != std::string::npos);
  CHECK(r.err.find("bytes read") == std::string::npos);

  // Both rejected: unresolved, and the report names gpu_arch with the evidence.
  const auto also_bad = w.wheel(old_name, module({{2, 86}}));
  auto none = wheelfit_run(args);
  CHECK(none.code == 1);
  CHECK(none.out.find("read from its binaries") != std::string::npos);
  CHECK(none.out.find("gpu_arch") != std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// A remote wheel, read with Range requests from a loopback server (only the end records, the
// directory and the module travel), and the same wheel from a server that ignores Range.

namespace {

// Answers GET with the whole body (200), or, for "Range: bytes=A-B" / "bytes=-N", the slice
// (206 + Content-Range) when `honour_range`.
wheelfit::testing::ConnScript wheel_server(std::string bytes, bool honour_range) {
  return wheelfit::testing::serve([bytes = std::move(bytes), honour_range](const wheelfit::testing::HttpRequest& r) {
    const auto range = r.header("Range");
    if (!honour_range || !range || range->rfind("bytes=", 0) != 0) {
      return wheelfit::testing::http_response(200, bytes, {{"Content-Type", "application/octet-stream"}});
    }
    const std::string spec = range->substr(6);
    const auto dash = spec.find('-');
    std::size_t first = 0, last = bytes.size() - 1;
    if (dash == 0) {
      first = bytes.size() - std::min<std::size_t>(bytes.size(), std::stoul(spec.substr(1)));
    } else {
      first = std::stoul(spec.substr(0, dash));
      if (dash + 1 < spec.size()) last = std::min<std::size_t>(last, std::stoul(spec.substr(dash + 1)));
    }
    return wheelfit::testing::http_response(
        206, bytes.substr(first, last - first + 1),
        {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(bytes.size())}});
  });
}

}  // namespace

TEST_CASE("wheelfit explain URL reads only what it needs with Range, and falls back without it", "[cli][explain][network]") {
  CliExplainWorld w;
  const std::string name = "pkg-1.0+cu128torch2.8-" + kTagsCliExplain;
  // A wheel with a big data member the explain must not fetch.
  const std::string bytes = wheelfit::test::build_zip(
      {{"pkg/__init__.py", "\n"}, {kModule, module({{2, 90}})}, {"pkg/weights.bin", std::string(4u << 20, 'w'), false}});
  for (const bool honour : {true, false}) {
    INFO((honour ? "server honours Range" : "server ignores Range"));
    wheelfit::testing::TestServer server(wheel_server(bytes, honour));
    auto r = wheelfit_run({"explain", server.url("/dl/" + name), "--machine", w.machine.string(), "--json"},
                          "-u http_proxy -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy");
    REQUIRE(r.code == 0);
    auto o = parse(r);
    CHECK(o.at("source").as_string() == "url");
    CHECK(o.at("binaries_read").as_bool());
    CHECK(o.at("wheel_size").to_number<std::uint64_t>() == bytes.size());
    CHECK(o.at("files").as_array().size() == 1);
    const auto fetched = o.at("bytes_fetched").to_number<std::uint64_t>();
    if (honour) {
      CHECK_FALSE(o.at("downloaded_whole").as_bool());
      CHECK(fetched < bytes.size() / 20);  // the 4 MiB member never travelled
    } else {
      CHECK(o.at("downloaded_whole").as_bool());
      CHECK(fetched == bytes.size());
    }
  }
}

TEST_CASE("wheelfit explain LIB: torch's library, its archs and whether they cover the GPUs", "[cli][explain][torch_lib]") {
  CliExplainWorld w;
  std::vector<bin::FatEntry> kernels;
  for (std::uint32_t arch : {50u, 60u, 70u, 75u, 80u, 86u, 90u}) kernels.push_back({2, arch, 0x11, 64, std::string(4096, 's')});
  kernels.push_back({1, 90, 0x8011, 80, std::string(4096, 'p')});
  bin::LibrarySpec spec;
  spec.extra.push_back(bin::Section{".nv_fatbin", 1, bin::fatbin_container(kernels)});
  const fs::path lib = w.dir / "torch" / "lib" / "libtorch_cuda.so";
  write_file(lib, bin::write_library(spec).bytes);
  const fs::path blackwell = w.dir / "rtx5090.toml";
  write_file(blackwell, "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"2.8.0+cu126\"\n"
                        "cuda_driver = \"13.0\"\ngpus = [\"12.0\", \"3.5\"]\n");

  auto runs = wheelfit_run({"explain", lib.string(), "--machine", w.machine.string()});
  INFO(runs.out << runs.err);
  CHECK(runs.code == 0);
  CHECK_THAT(runs.out, Catch::StartsWith("library: " + lib.string() + "\nx86_64 ELF; read "));
  CHECK_THAT(runs.out, Catch::Contains("archs: 5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX\n  sass: sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90\n"
                                       "  ptx: compute_90\n  (read from " + lib.string() + ": 7 SASS, 1 PTX entries)\nmachine: sm 9.0\n"));
  CHECK_THAT(runs.out, Catch::EndsWith("verdict: it runs here\n"));

  auto fails = wheelfit_run({"explain", lib.string(), "--machine", blackwell.string(), "--json"});
  CHECK(fails.code == 1);
  const auto o = parse(fails);
  CHECK(o.at("source").as_string() == "library");
  CHECK(o.at("library").as_string() == lib.string());
  CHECK(o.at("format").as_string() == "elf");
  CHECK(o.at("verdict").as_string() == "cannot_run");
  CHECK(o.at("uncovered").as_array() == json::array{"3.5"});  // 12.0 runs compute_90 by JIT
  CHECK(o.at("archs").as_object().at("ptx").as_array() == json::array{"compute_90"});
  CHECK(o.at("archs").as_object().at("list").as_string() == "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX");
  CHECK(o.at("bytes_read").as_int64() < 4096);  // the headers, not the 32 KiB of payloads
  CHECK_THAT(std::string(o.at("summary").as_string()), Catch::StartsWith("it will not run here: nothing in it runs on sm 3.5"));

  SECTION("a library without device code, a FIFO: exit 2 naming the file") {
    bin::LibrarySpec plain;
    const fs::path cpu = w.dir / "libtorch_cpu.so";
    write_file(cpu, bin::write_library(plain).bytes);
    auto r = wheelfit_run({"explain", cpu.string(), "--machine", w.machine.string()});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(cpu.string() + ": no device code"));
    const fs::path fifo = w.dir / "pipe.so";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    r = wheelfit_run({"explain", fifo.string(), "--machine", w.machine.string()});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(fifo.string() + ": not a file"));  // never opened
  }
}
