#pragma once
// A PEP 503 torch index on disk for the `mirror --with-torch` tests (tests/cli/test_cli_locks.cpp,
// tests/api/test_mirror_torch.cpp): small real wheels of torch, torchvision and torchaudio
// with #sha256=, and decoys a machine must not get.
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"
#include "wheelfit/deliver/download.hpp"

namespace wheelfit::test {

/// The torch file an x86_64 Python 3.12 machine on cu12.8 / torch 2.8 gets from write_torch_index.
inline const std::string kTorchPick = "torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl";

/// A torch index per line under `root` (cu128/<project>/index.html, the files in files/): the
/// newest fitting torch (kTorchPick), its decoys (another Python, another CPU, a version outside
/// the pin, an older patch release), torchvision and torchaudio; each href with its #sha256=.
inline void write_torch_index(const std::filesystem::path& root) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> lines = {
      {"cu128", {"torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl", kTorchPick,
                 "torch-2.8.1+cu128-cp311-cp311-manylinux_2_28_x86_64.whl", "torch-2.8.1+cu128-cp312-cp312-manylinux_2_28_aarch64.whl",
                 "torch-2.9.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "torchvision-0.23.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                 "torchaudio-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"}}};
  for (const auto& [line, files] : lines) {
    std::map<std::string, std::string> pages;
    for (const auto& name : files) {
      const std::string dist = name.substr(0, name.find('-'));
      const std::string version = name.substr(dist.size() + 1, name.find('-', dist.size() + 1) - dist.size() - 1);
      const auto file = root / "files" / name;
      write_file(file, build_zip({{dist + "-" + version + ".dist-info/METADATA",
                                   "Metadata-Version: 2.1\nName: " + dist + "\nVersion: " + version + "\n"}}));
      pages[dist] += "<a href=\"../../files/" + name + "#sha256=" + deliver::sha256_file(file).value() + "\">" + name + "</a><br>\n";
    }
    for (const auto& [dist, anchors] : pages) write_file(root / line / dist / "index.html", "<html><body>\n" + anchors + "</body></html>\n");
  }
}

/// The farm the torch tests resolve against: two packages with real files at `out` (file:// URLs),
/// every combo of the CUDA policy. False when it could not be written.
inline bool write_torch_test_farm(const std::filesystem::path& out) {
  farmgen::FarmOptions farm;
  farm.out = out;
  farm.packages = 2;
  farm.with_files = true;
  farm.base_url = "file://" + out.string();
  return farmgen::generate_farm(farm, cuda_policy()).has_value();
}

}  // namespace wheelfit::test
