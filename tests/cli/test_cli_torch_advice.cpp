// `wheelfit resolve` names the torch that runs when the installed one cannot (issue 32, item 6;
// decision 0030): the real binary on a generated farm and a generated torch index on disk; the
// exact file and sha256 in the report and the JSON's advice object; an unreachable torch index
// said, the version and line still named.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/deliver_farm.hpp"
#include "support/cli_support.hpp"
#include "support/test_support.hpp"
#include "support/torch_index.hpp"

namespace fs = std::filesystem;
using namespace wheelfit::test;
using namespace wheelfit::test::cli_deliver;

namespace {

const std::string kTaCliTorch = "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl";

// The farm's profile with these GPUs and torch (Python 3.12, driver for CUDA 13.0).
std::string tacli_profile(const std::string& gpus, const std::string& torch) {
  return "os = \"linux\"\ncpu_arch = \"x86_64\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"" + torch +
         "\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [" + gpus + "]\n";
}

}  // namespace

TEST_CASE("wheelfit resolve: an RTX 5090 on torch 2.8.0+cu126 is told 2.8.0+cu128, its exact file and sha256",
          "[cli][advice][torch_gate]") {
  const Farm f;
  const TempDir t;
  write_torch_index(t / "torch");
  const std::string sha = sha256_of(t / "torch" / "files" / kTaCliTorch);
  write_file(f.machines / "rtx5090.toml", tacli_profile("\"12.0\"", "2.8.0+cu126"));
  const auto resolve = [&](std::vector<std::string> more) {
    std::vector<std::string> args{"resolve", f.config.string(), "--index", f.index.string(), "--machine", f.machine("rtx5090")};
    args.insert(args.end(), more.begin(), more.end());
    return run_wheelfit_cli_deliver(args);
  };
  const std::string pattern = (t / "torch").string() + "/cu{line_nodot}";
  SECTION("the report: the installed torch's reason, the one to install, its file and sha256, the farm's combos") {
    const auto r = resolve({"--torch-index", pattern});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("advice: torch 2.8.0+cu126 cannot run on this machine: torch cannot run on sm 12.0"));
    CHECK_THAT(r.out, Catch::Contains("install torch 2.8.0+cu128 (CUDA 12.8: its build covers every GPU and the driver runs it)"));
    CHECK_THAT(r.out, Catch::Contains("    file:   " + kTaCliTorch + "\n    sha256: " + sha + "\n"));
    CHECK_THAT(r.out, Catch::Contains("farm combos that cover every package with it: cu12.8/torch2.8"));
  }
  SECTION("--json: advice.torch with version, line, index, file, sha256, reason") {
    const auto r = resolve({"--torch-index", pattern, "--json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto o = parse_object_cli_deliver(r.out);
    const auto& torch = o.at("advice").at("torch").as_object();
    CHECK(torch.at("installed").as_string() == "2.8.0+cu126");
    CHECK(torch.at("version").as_string() == "2.8.0+cu128");
    CHECK(torch.at("line").as_string() == "12.8");
    CHECK_THAT(std::string(torch.at("index").as_string()), Catch::EndsWith("/torch/cu128/"));
    CHECK(torch.at("file").as_string() == kTaCliTorch);
    CHECK(torch.at("sha256").as_string() == sha);
    CHECK_THAT(std::string(torch.at("reason").as_string()), Catch::Contains("torch") && Catch::Contains("12.0"));
  }
  SECTION("an unreachable torch index: said; version and line still named; the exit code as without it") {
    const auto r = resolve({"--torch-index", "http://127.0.0.1:1/whl/cu{line_nodot}", "--retries", "0", "--json"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto o = parse_object_cli_deliver(r.out);
    const auto& torch = o.at("advice").at("torch").as_object();
    CHECK(torch.at("version").as_string() == "2.8.0+cu128");
    CHECK(torch.at("file").is_null());
    CHECK(torch.at("sha256").is_null());
    CHECK_THAT(std::string(torch.at("file_note").as_string()), Catch::Contains("the torch index http://127.0.0.1:1/whl/cu128/"));
  }
  SECTION("a local farm and no --torch-index: the file is not looked up, and the report says how to name it") {
    const auto r = resolve({});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("install torch 2.8.0+cu128") && Catch::Contains("from https://download.pytorch.org/whl/cu128"));
    CHECK_THAT(r.out, Catch::Contains("file:   not named: not looked up") && Catch::Contains("--torch-index URL"));
  }
}

TEST_CASE("wheelfit resolve: a Pascal card on torch 2.11.0+cu128 is told 2.11.0+cu126 and the last torch built for it",
          "[cli][advice][torch_gate]") {
  const Farm f;
  write_file(f.machines / "gtx1080.toml", tacli_profile("\"6.1\"", "2.11.0+cu128"));
  const auto r = run_wheelfit_cli_deliver({"resolve", f.config.string(), "--index", f.index.string(), "--machine",
                                           f.machine("gtx1080"), "--json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 1);  // no tier covers sm 6.1 with these packages
  const auto o = parse_object_cli_deliver(r.out);
  const auto& torch = o.at("advice").at("torch").as_object();
  CHECK(torch.at("version").as_string() == "2.11.0+cu126");
  const auto& last = torch.at("last").as_array();
  REQUIRE(last.size() == 1);
  CHECK(last[0].at("gpu").as_string() == "6.1");
  CHECK(last[0].at("torch").as_string() == "2.14");  // PyTorch 2.15 drops CUDA 12.6
  CHECK(last[0].at("cuda").as_string() == "12.6");
}
