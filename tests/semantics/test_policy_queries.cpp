// Unit tests of the core's policy types (wheelfit::semantics): the CUDA backend's policy queries
// and label templates. The format's parser is tested in tests/policies.


#include <catch2/catch.hpp>

#include <cctype>
#include <set>

#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "support/model_support.hpp"

using wheelfit::Errc;
using wheelfit::model::Combo;
using wheelfit::model::NumericVersion;

namespace {

using wheelfit::test::nv;
Combo combo(std::string_view cuda, std::string_view torch) { return Combo{nv(cuda), nv(torch)}; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// The built-in policy

TEST_CASE("the CUDA backend's policy parses and names itself", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  CHECK(p.source() == "cuda backend (in-process) (built-in policy)");
  // Date-like: YYYY-MM-DD at the start. (No std::regex here: GCC 12 warns inside <regex> under
  // the sanitizer build.)
  const auto& v = p.version();
  REQUIRE(v.size() >= 10);
  for (std::size_t i = 0; i < 10; ++i) {
    CAPTURE(v, i);
    CHECK((i == 4 || i == 7 ? v[i] == '-' : std::isdigit(static_cast<unsigned char>(v[i])) != 0));
  }
  CHECK(p.notation().key == "cuda");
  CHECK(p.notation().prefix == "cu");
  CHECK(p.device_prefix() == "sm ");
  CHECK(p.driver_rule() == wheelfit::semantics::DriverRule::same_major);
  REQUIRE(p.rules() != nullptr);
}

TEST_CASE("Policy::arch_list: package override, then exception, then the platform row", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  struct Row {
    std::string_view package, cuda, torch, platform;
    const char* archs;       // nullptr: nullopt
    const char* provenance;  // a substring
  };
  const Row rows[] = {
      // The package's list for that CUDA line (double spaces and all), ahead of the exception.
      {"sageattention", "12.8", "2.8", "linux", "8.0;8.6;8.9;9.0;12.0+PTX", "package sageattention, cuda 12.8"},
      {"sageattention", "12.8", "2.8", "windows", "8.0;8.6;8.9;9.0;12.0+PTX", "arch_list_by_line)"},
      {"sageattention", "12.8", "2.9", "linux_aarch64", "8.0;9.0;12.0+PTX", "arch_list_by_line_aarch64"},
      // ARM never reads the x86 fields: sageattention has no aarch64 row for 13.0.
      {"sageattention", "13.0", "2.10", "linux_aarch64", "8.0;9.0+PTX;10.0;11.0;12.0+PTX", "farm policy 13.0 (linux_aarch64)"},
      // All-lines overrides, ahead of the exception too.
      {"cumm", "12.8", "2.8", "linux", "7.5;8.0;8.6;8.9;9.0+PTX", "package cumm (arch_list)"},
      {"cumm", "13.0", "2.10", "linux_aarch64", "8.0;8.7;9.0+PTX", "package cumm (arch_list_aarch64)"},
      {"cumm", "12.4", "2.5", "linux_aarch64", nullptr, nullptr},  // no 12.4 ARM row: not built there
      {"spconv", "12.6", "2.6", "linux_aarch64", "8.0;9.0+PTX", "arch_list_aarch64"},
      {"sageattn3", "12.8", "2.8", "windows", "10.0;12.0+PTX", "package sageattn3 (arch_list)"},
      // diso overrides only 12.4 and 12.6.
      {"diso", "12.4", "2.5", "linux", "6.0;7.0;7.5;8.0;8.6;9.0+PTX", "package diso, cuda 12.4"},
      {"diso", "12.8", "2.11", "linux", "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "farm policy 12.8 (linux)"},
      {"diso", "12.8", "2.8", "linux", "7.0;7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "exception 12.8/2.8"},
      {"diso", "13.0", "2.10", "windows", "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "farm policy 13.0 (windows)"},
      // Names are PEP 503 normalised before the lookup.
      {"flash-attn", "12.8", "2.8", "linux", "8.0;9.0;10.0;12.0+PTX", "package flash-attn, cuda 12.8"},
      {"flash_attn", "12.9", "2.9", "windows", "8.0;9.0;10.0;12.0+PTX", "package flash-attn"},
      {"Flash.Attn", "12.4", "2.4", "linux", "8.0;9.0+PTX", "package flash-attn"},
      {"flash-attn", "12.8", "2.8", "linux_aarch64", "8.0;9.0+PTX;10.0;12.0+PTX", "farm policy 12.8 (linux_aarch64)"},
      {"natten", "13.0", "2.10", "linux", "8.0;8.6;8.9;9.0;10.0;10.3;12.0+PTX", "package natten"},
      {"natten", "13.2", "2.12", "linux", "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "farm policy 13.2"},
      {"nunchaku", "12.8", "2.8", "linux_aarch64", "7.5;8.0;8.6;8.9;12.0", "arch_list_by_line_aarch64"},
      {"pyg-lib", "13.0", "2.9", "linux", "7.5;8.0;9.0+PTX", "package pyg-lib"},
      {"torchao", "12.8", "2.9", "linux_aarch64", "9.0;10.0;12.0+PTX", "package torchao"},
      // Exceptions: x86_64 and Windows only, never aarch64.
      {"cubvh", "12.9", "2.10", "windows", "7.0;7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "exception 12.9/2.10"},
      {"cubvh", "12.9", "2.11", "windows", "7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "farm policy 12.9 (windows)"},
      {"cubvh", "12.8", "2.8", "linux_aarch64", "8.0;9.0+PTX;10.0;12.0+PTX", "farm policy 12.8 (linux_aarch64)"},
      {"cubvh", "12.9", "2.9", "linux_aarch64", "8.0;9.0+PTX;10.0;12.0+PTX", "farm policy 12.9 (linux_aarch64)"},
      {"cubvh", "12.4", "2.4", "linux_aarch64", nullptr, nullptr},
      {"cubvh", "12.6", "2.6", "linux_aarch64", "8.0;9.0+PTX", "farm policy 12.6"},
      {"cubvh", "12.4", "2.4", "linux", "5.0;6.0;7.0;7.5;8.0;8.6;9.0+PTX", "farm policy 12.4 (linux)"},
      // A patch-level line is a line of its own (ROCm's 6.2.4); trailing zeros are not.
      {"cubvh", "12.8.1", "2.8.0", "linux", nullptr, nullptr},
      {"cubvh", "12.8.0", "2.8.0", "linux", "7.0;7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX", "exception 12.8/2.8"},
      // No row: not a CUDA line the farm builds, or not a farm platform.
      {"cubvh", "12.7", "2.8", "linux", nullptr, nullptr},
      {"cubvh", "11.8", "2.4", "linux", nullptr, nullptr},
      {"cubvh", "12.8", "2.8", "macos", nullptr, nullptr},
      {"sageattention", "12.8", "2.8", "", nullptr, nullptr},
  };
  for (const auto& r : rows) {
    CAPTURE(r.package, r.cuda, r.torch, r.platform);
    const auto got = p.arch_list(r.package, combo(r.cuda, r.torch), r.platform);
    if (!r.archs) {
      CHECK_FALSE(got.has_value());
      continue;
    }
    REQUIRE(got.has_value());
    CHECK(got->list == r.archs);
    CHECK_THAT(got->provenance, Catch::Contains(r.provenance));
  }
}

TEST_CASE("Policy::platform_arch_list ignores package overrides", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  auto x86 = p.platform_arch_list(combo("12.8", "2.8"), "linux");
  REQUIRE(x86);
  CHECK(x86->list == "7.0;7.5;8.0;8.6;9.0+PTX;10.0;12.0+PTX");
  CHECK(x86->provenance == "exception 12.8/2.8");
  auto arm = p.platform_arch_list(combo("13.0", "2.10"), "linux_aarch64");
  REQUIRE(arm);
  CHECK(arm->list == "8.0;9.0+PTX;10.0;11.0;12.0+PTX");
  CHECK(arm->provenance == "farm policy 13.0 (linux_aarch64)");
  CHECK(p.rules()->match(arm->list, "11.0")->kind == wheelfit::semantics::DeviceRules::Match::Kind::native);
  auto arm128 = p.platform_arch_list(combo("12.8", "2.9"), "linux_aarch64");
  REQUIRE(arm128);
  CHECK(arm128->list == "8.0;9.0+PTX;10.0;12.0+PTX");
  CHECK(p.rules()->match(arm128->list, "11.0")->kind == wheelfit::semantics::DeviceRules::Match::Kind::jit);  // Thor only through compute_90 JIT
  CHECK_FALSE(p.platform_arch_list(combo("12.4", "2.5"), "linux_aarch64"));
  CHECK(p.platform_arch_list(combo("13.2", "2.13"), "windows")->provenance == "farm policy 13.2 (windows)");
}

TEST_CASE("Policy::pytorch_shipped answers from the PyTorch matrix", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  struct Row {
    std::string_view cuda, torch, python, platform;
    bool shipped;
  };
  const Row rows[] = {
      {"12.8", "2.8", "3.12", "linux_aarch64", false},  // no aarch64 cu128 torch 2.8 (pytorch#157548)
      {"12.8", "2.8", "3.12", "linux", true},
      {"12.8", "2.8", "3.12", "windows", true},
      {"12.8", "2.8", "3.13", "linux", true},
      {"12.8", "2.8", "3.14", "linux", false},  // 3.14 starts at torch 2.9
      {"12.8", "2.8", "3.9", "linux", false},
      {"13.0", "2.8", "3.12", "linux", false},  // no CUDA 13 before torch 2.9, anywhere
      {"13.0", "2.8", "3.12", "windows", false},
      {"13.0", "2.8", "3.12", "linux_aarch64", false},
      {"13.0", "2.9", "3.12", "linux", true},
      {"13.0", "2.10", "3.12", "linux_aarch64", true},  // the ARM fallback cell exists
      {"13.0", "2.10", "3.14", "linux_aarch64", true},
      {"12.9", "2.10", "3.12", "windows", false},  // a phantom: the grid implies it, PyTorch never shipped
      {"12.9", "2.10", "3.12", "linux", true},
      {"12.4", "2.4", "3.12", "linux_aarch64", true},
      {"12.4", "2.4", "3.13", "linux", false},
      {"12.4", "2.6", "3.12", "linux_aarch64", false},
      {"12.6", "2.13", "3.15", "linux", true},
      {"12.6", "2.13", "3.15", "windows", false},
      {"12.8", "2.12", "3.12", "linux", false},  // cu128 stops at 2.11
      // Precision beyond major.minor is ignored.
      {"12.8.1", "2.8.0", "3.12.4", "linux", false},  // a patch line is its own line (ROCm 6.2.4)
      {"12.8.0", "2.8.0", "3.12.4", "linux", true},
      {"12.8", "2.8.1", "3.12", "linux", true},   // a minor counts if any patch shipped (2.8.0 here)
      {"12.8", "2.8", "3.12", "macos", false},
      {"12.8", "2.8", "3.12", "linux_x86_64", false},  // the scraped spelling is not a farm key
  };
  for (const auto& r : rows) {
    CAPTURE(r.cuda, r.torch, r.python, r.platform);
    CHECK(p.pytorch_shipped(combo(r.cuda, r.torch), nv(r.python), r.platform) == r.shipped);
  }

  const auto& cells = p.shipped_cells();
  CHECK(cells.size() > 300);
  CHECK(std::is_sorted(cells.begin(), cells.end(), [](const auto& a, const auto& b) {
    return std::tie(a.combo.line, a.combo.torch, a.python, a.platform) <
           std::tie(b.combo.line, b.combo.torch, b.python, b.platform);
  }));
  std::set<std::string> platforms;
  for (const auto& c : cells) platforms.insert(c.platform);
  CHECK(platforms == std::set<std::string>{"linux", "linux_aarch64", "windows"});
}

TEST_CASE("Policy::torch_family is the torch family table of policies/README.md", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  struct Row {
    std::string_view torch, vision, audio;
  };
  const Row rows[] = {
      {"2.4", "0.19", "2.4"},   {"2.5", "0.20", "2.5"},   {"2.6", "0.21", "2.6"},
      {"2.7", "0.22", "2.7"},   {"2.8", "0.23", "2.8"},   {"2.9", "0.24", "2.9"},
      {"2.10", "0.25", "2.10"}, {"2.11", "0.26", "2.11"},
      {"2.12", "0.27", "2.11"},  // torchaudio stopped at 2.11 (backends/cuda/data/SOURCES.md)
      {"2.13", "0.28", "2.11"}, {"2.14", "0.29", "2.11"},
      {"2.8.1", "0.23", "2.8"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.torch);
    auto f = p.torch_family(nv(r.torch));
    REQUIRE(f);
    CHECK(f->torchvision == nv(r.vision));
    CHECK(f->torchaudio == nv(r.audio));
    CHECK(f->torchvision.str() == r.vision);  // "0.20", not "0.2"
  }
  CHECK(p.torch_family(nv("2.5"))->torchvision.str() == "0.20");
  for (const char* unknown : {"2.3", "2.15", "2.20", "1.13", "3.0"}) {
    CAPTURE(unknown);
    CHECK_FALSE(p.torch_family(nv(unknown)));
  }
}

TEST_CASE("Policy::pypi_line holds only the known PyPI CUDA lines", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  struct Row {
    const char* torch;
    const char* platform;
    const char* cuda;  // nullptr: unknown / CPU-only
  };
  const Row rows[] = {
      {"2.0", "linux", "11.7"},  {"2.1", "linux", "12.1"},  {"2.2", "linux", "12.1"},
      {"2.3", "linux", "12.1"},  {"2.4", "linux", "12.1"},  {"2.5", "linux", "12.4"},
      {"2.6", "linux", "12.4"},  {"2.7", "linux", "12.6"},  {"2.8", "linux", "12.8"},
      {"2.9", "linux", "12.8"},  {"2.9.1", "linux", "12.8"},
      {"2.10", "linux", nullptr},  // not recorded: unknown on purpose
      {"1.13", "linux", nullptr},
      {"2.8", "windows", nullptr},        // PyPI's Windows torch is CPU-only
      {"2.8", "linux_aarch64", nullptr},  // unknown
      {"2.8", "macos", nullptr},
  };
  for (const auto& r : rows) {
    CAPTURE(r.torch, r.platform);
    auto got = p.pypi_line(nv(r.torch), r.platform);
    if (!r.cuda) {
      CHECK_FALSE(got);
    } else {
      REQUIRE(got);
      CHECK(got->str() == r.cuda);
    }
  }
}

TEST_CASE("Policy::min_driver per CUDA major", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  auto d11 = p.min_driver(11);
  REQUIRE(d11);
  CHECK(d11->linux_ == nv("450.80.02"));
  CHECK(d11->windows == nv("452.39"));
  auto d12 = p.min_driver(12);
  REQUIRE(d12);
  CHECK(d12->linux_ == nv("525.60.13"));
  CHECK(d12->windows == nv("528.33"));
  auto d13 = p.min_driver(13);
  REQUIRE(d13);
  CHECK(d13->linux_ == nv("580"));
  CHECK(d13->windows == nv("580"));
  CHECK(nv("580.65.06") >= d13->linux_);
  CHECK(nv("575.57.08") < d13->linux_);
  CHECK_FALSE(p.min_driver(10));
  CHECK_FALSE(p.min_driver(14));
  CHECK_FALSE(p.min_driver(0));
}

TEST_CASE("Policy::fallback_combo and torch_index_url", "[policy]") {
  const auto& p = wheelfit::test::cuda_policy();
  struct Row {
    const char* backend;
    const char* arch;
    const char* cuda;  // nullptr: none
    const char* torch;
  };
  const Row rows[] = {
      {"cuda", "x86_64", "12.8", "2.8"}, {"cuda", "amd64", "12.8", "2.8"}, {"cuda", "AMD64", "12.8", "2.8"},
      {"cuda", "aarch64", "13.0", "2.10"}, {"cuda", "arm64", "13.0", "2.10"},
      {"cuda", "i686", nullptr, nullptr}, {"cuda", "", nullptr, nullptr},
  };
  for (const auto& r : rows) {
    CAPTURE(r.backend, r.arch);
    auto got = p.fallback_combo(r.arch);
    if (!r.cuda) {
      CHECK_FALSE(got);
    } else {
      REQUIRE(got);
      CHECK(*got == combo(r.cuda, r.torch));
    }
  }
  // Both fallback cells are ones PyTorch shipped for cp312 on their platform.
  CHECK(p.pytorch_shipped(*p.fallback_combo("x86_64"), nv("3.12"), "linux"));
  CHECK(p.pytorch_shipped(*p.fallback_combo("x86_64"), nv("3.12"), "windows"));
  CHECK(p.pytorch_shipped(*p.fallback_combo("aarch64"), nv("3.12"), "linux_aarch64"));

  CHECK(p.torch_index_url(nv("12.8")) == "https://download.pytorch.org/whl/cu128");
  CHECK(p.torch_index_url(nv("13.0")) == "https://download.pytorch.org/whl/cu130");
  CHECK(p.torch_index_url(nv("12.8.1")) == "https://download.pytorch.org/whl/cu128");  // {line_nodot}: major.minor
  CHECK(wheelfit::test::rocm_policy().torch_index_url(nv("6.2.4")) == "https://download.pytorch.org/whl/rocm6.2.4");
  CHECK(p.torch_index_url(nv("11.8")) == "https://download.pytorch.org/whl/cu118");
  CHECK(p.torch_index_url(nv("13")) == "https://download.pytorch.org/whl/cu130");
}

// ---------------------------------------------------------------------------------------------
// Label templates

TEST_CASE("LabelTemplate matches and renders local labels", "[policy][labels]") {
  struct Row {
    const char* tmpl;
    const char* label;
    const char* line;   // nullptr: no match (or no line)
    const char* torch;  // nullptr: no torch
  };
  const Row rows[] = {
      {"rocm{line}torch{torch}", "rocm6.3torch2.7", "6.3", "2.7"},
      {"rocm{line}torch{torch}", "ROCM6.2.4TORCH2.10", "6.2.4", "2.10"},
      {"rocm{line}torch{torch}", "rocm6torch2.7", nullptr, nullptr},     // a line has a minor
      {"rocm{line}torch{torch}", "rocm6.3.torch2.7", nullptr, nullptr},  // no trailing dot
      {"rocm{line}", "rocm6.3", "6.3", nullptr},
      {"rocm{line}", "rocm6.3x", nullptr, nullptr},
      {"cu{line:nodot}*", "cu121.with.pypi.cudnn", "12.1", nullptr},
      {"xpu{torch}", "xpu2.8", nullptr, "2.8"},
      {"pt{torch}cu{line:nodot}", "pt210cu130", "13.0", "2.10"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.tmpl, r.label);
    auto t = wheelfit::semantics::LabelTemplate::parse(r.tmpl);
    REQUIRE(t);
    auto parts = t->match(r.label);
    if (!r.line && !r.torch) {
      CHECK_FALSE(parts);
      continue;
    }
    REQUIRE(parts);
    CHECK(parts->line.has_value() == (r.line != nullptr));
    if (r.line) CHECK(parts->line->str() == r.line);
    CHECK(parts->torch.has_value() == (r.torch != nullptr));
    if (r.torch) CHECK(parts->torch->str() == r.torch);
  }
  CHECK(wheelfit::semantics::LabelTemplate::parse("rocm{line}torch{torch}")->render(combo("6.2.4", "2.7")) == "rocm6.2.4torch2.7");
  CHECK(wheelfit::semantics::LabelTemplate::parse("cu{line:nodot}torch{torch}")->render(combo("12.8", "2.10")) == "cu128torch2.10");
  for (const char* bad : {"", "cu", "{cuda}", "cu{line", "cu}line", "{line}{torch}", "*{line}", "cu{line:dot}"}) {
    CAPTURE(bad);
    CHECK_FALSE(wheelfit::semantics::LabelTemplate::parse(bad));
  }
}
