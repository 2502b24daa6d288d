// The pure parts of CUDA detection: nvidia-smi CSV, /proc version text, CUDA_VISIBLE_DEVICES,
// the driver -> CUDA table.
#include <catch2/catch.hpp>

#include "support/checks.hpp"
#include "wheelfit/backends/cuda_detect.hpp"
#include "wheelfit/model/numeric_version.hpp"

namespace cuda = wheelfit::backends::cuda;
using cuda::Device;

namespace {
std::vector<std::string> ccs_cuda_parse(const std::vector<Device>& devices) {
  std::vector<std::string> out;
  for (const auto& d : devices) out.push_back(d.compute_capability.value_or("?"));
  return out;
}
std::vector<int> indices(const std::vector<Device>& devices) {
  std::vector<int> out;
  for (const auto& d : devices) out.push_back(d.index);
  return out;
}
}  // namespace

TEST_CASE("parse_nvidia_smi_csv reads the query's CSV variants", "[backends][cuda]") {
  struct Row {
    const char* what;
    const char* text;
    std::vector<int> indices;
    std::vector<std::string> ccs;  // "?" = unknown
    std::optional<std::string> driver;
    std::size_t notes;
  };
  const std::vector<Row> rows = {
      {"one GPU", "0, NVIDIA H100 80GB HBM3, GPU-11111111-2222-3333-4444-555555555555, 9.0, 580.65.06\n", {0}, {"9.0"},
       "580.65.06", 0},
      {"several GPUs",
       "0, NVIDIA H100 80GB HBM3, GPU-1111, 9.0, 580.65.06\n1, NVIDIA GeForce RTX 3090, GPU-aaaa, 8.6, 580.65.06\n",
       {0, 1}, {"9.0", "8.6"}, "580.65.06", 0},
      {"[N/A] compute capability", "0, Tesla K80, GPU-1111, [N/A], 470.256.02\n", {0}, {"?"}, "470.256.02", 1},
      {"[Not Supported] uuid and driver", "0, NVIDIA A100, [Not Supported], 8.0, [Not Supported]\n", {0}, {"8.0"},
       std::nullopt, 0},
      {"blank lines, CRLF and spaces", "\n   \r\n 0 ,  NVIDIA L4  , GPU-1 ,  8.9  ,  570.26   \r\n\n\n", {0}, {"8.9"},
       "570.26", 0},
      {"a name with commas", "0, NVIDIA RTX, Special, Edition, GPU-1, 8.9, 560.35.03\n", {0}, {"8.9"}, "560.35.03", 0},
      {"no trailing newline", "3, NVIDIA B200, GPU-3, 10.0, 580.82.07", {3}, {"10.0"}, "580.82.07", 0},
      {"empty output: no GPU", "", {}, {}, std::nullopt, 0},
      {"only blank lines", "\n\n  \n", {}, {}, std::nullopt, 0},
      {"a garbage line among GPUs", "WARNING: something\n0, NVIDIA H100, GPU-1, 9.0, 580.65.06\n", {0}, {"9.0"},
       "580.65.06", 1},
      {"different drivers per line", "0, A, GPU-1, 9.0, 580.65.06\n1, B, GPU-2, 9.0, 580.82.07\n", {0, 1},
       {"9.0", "9.0"}, "580.65.06", 1},
      {"a bad compute capability", "0, A, GPU-1, 9, 580.65.06\n", {0}, {"?"}, "580.65.06", 1},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what, row.text);
    auto r = cuda::parse_nvidia_smi_csv(row.text);
    REQUIRE(r.has_value());
    REQUIRE(r->devices.has_value());
    CHECK(indices(*r->devices) == row.indices);
    CHECK(ccs_cuda_parse(*r->devices) == row.ccs);
    CHECK(r->driver_version == row.driver);
    CHECK(r->notes.size() == row.notes);
  }

  SECTION("fields are trimmed and bracketed values are unknown") {
    auto r = cuda::parse_nvidia_smi_csv("0, NVIDIA RTX, Special, Edition , [N/A], 8.9, 560.35.03\n");
    REQUIRE(r);
    CHECK((*r->devices)[0].name == "NVIDIA RTX, Special, Edition");
    CHECK((*r->devices)[0].uuid.empty());
  }
  SECTION("without compute_cap: four columns, compute capability unknown") {
    auto r = cuda::parse_nvidia_smi_csv("0, Tesla V100, GPU-7, 470.256.02\n", false);
    REQUIRE(r);
    REQUIRE(r->devices->size() == 1);
    CHECK_FALSE((*r->devices)[0].compute_capability);
    CHECK((*r->devices)[0].uuid == "GPU-7");
    CHECK(r->driver_version == "470.256.02");
  }
  SECTION("output that is not a GPU list is an error naming it") {
    for (const char* text : {"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
                             "No devices were found\n", "x, A, GPU-1, 9.0, 580.65.06\n", "0, A, 9.0\n",
                             "+-----------------------------------------------------------------------------+\n"
                             "| NVIDIA-SMI 580.65.06    Driver Version: 580.65.06    CUDA Version: 13.0 |\n"}) {
      CAPTURE(text);
      auto r = cuda::parse_nvidia_smi_csv(text);
      REQUIRE_FALSE(r);
      CHECK(r.error().is(wheelfit::Errc::invalid_input));
      CHECK_THAT(r.error().message, Catch::Contains("nvidia-smi: no GPU in its output"));
    }
  }
}

TEST_CASE("parse_proc_driver_version reads both kernel module banners", "[backends][cuda]") {
  SECTION("the version of either banner") {
    const wheelfit::test::TextCase rows[] = {
        {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:43 UTC 2025\n"
         "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n",
         "580.65.06"},
        {"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
         "(dvs-builder@U16-I3-B03-4-3)  Thu Jul 24 00:00:00 UTC 2025\nGCC version:  gcc version 13.3.0\n",
         "580.65.06"},
        {"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.124.06  Release Build  (dvs-builder@x)  Wed "
         "Feb 26 2025\n",
         "570.124.06"},
        {"NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104.05  Sat Aug 19 01:13:15 UTC 2023\n", "535.104.05"},
        {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024\n", "470.256.02"},
        {"NVRM version: NVIDIA UNIX x86_64 Kernel Module  455.23  Fri Sep 18 19:18:23 UTC 2020", "455.23"},
    };
    wheelfit::test::check_each(rows, [](std::string_view text) {
      auto r = cuda::parse_proc_driver_version(text);
      REQUIRE(r.has_value());
      return *r;
    });
  }
  SECTION("no version: invalid_input") {
    for (const char* text : {"", "garbage\n", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  Sun Jul 27 07:09:43 UTC 2025\n",
                             "GCC version:  gcc version 12.2.0\n"}) {
      CAPTURE(text);
      auto r = cuda::parse_proc_driver_version(text);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error().is(wheelfit::Errc::invalid_input));
    }
  }
}

TEST_CASE("is_driver_version and cuda_version_text", "[backends][cuda]") {
  for (const char* good : {"580.65.06", "570.26", "455.23", "1.2.3.4"}) {
    CAPTURE(good);
    CHECK(cuda::is_driver_version(good));
  }
  for (const char* bad : {"", "580", "580.", ".65", "580..06", "580.65.06a", "x86_64", "1.2.3.4.5", " 580.65"}) {
    CAPTURE(bad);
    CHECK_FALSE(cuda::is_driver_version(bad));
  }
  CHECK(cuda::cuda_version_text(12080) == "12.8");
  CHECK(cuda::cuda_version_text(13000) == "13.0");
  CHECK(cuda::cuda_version_text(11040) == "11.4");
  CHECK(cuda::cuda_version_text(12090) == "12.9");
  CHECK(cuda::cuda_version_text(10020) == "10.2");
  CHECK_FALSE(cuda::cuda_version_text(0));
  CHECK_FALSE(cuda::cuda_version_text(-1));
}

TEST_CASE("apply_visible_devices follows CUDA_VISIBLE_DEVICES as CUDA does", "[backends][cuda]") {
  const std::vector<Device> devices = {
      {0, "NVIDIA H100", "9.0", "GPU-11111111-2222-3333-4444-555555555555",
       {"MIG-aaaa1111-2222-3333-4444-555555555555", "MIG-bbbb1111-2222-3333-4444-555555555555"}},
      {1, "NVIDIA GeForce RTX 3090", "8.6", "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", {}},
      {2, "Tesla V100", "7.0", "GPU-77777777-8888-9999-0000-123456789abc", {}},
  };
  struct Row {
    std::optional<std::string> value;
    std::vector<int> visible;
    const char* note_part;  // "" = no note
  };
  const std::vector<Row> rows = {
      {std::nullopt, {0, 1, 2}, ""},
      {"0", {0}, "visible GPU index(es) 0 of 3"},
      {"1,0", {1, 0}, "visible GPU index(es) 1, 0 of 3"},
      {"2, 0", {2, 0}, "visible GPU index(es) 2, 0"},
      {"GPU-aaaa", {1}, "visible GPU index(es) 1"},
      {"GPU-AAAAAAAA-BBBB", {1}, "visible GPU index(es) 1"},
      {"GPU-77777777-8888-9999-0000-123456789abc,GPU-1", {2, 0}, "2, 0"},
      {"GPU-", {}, "matches several GPUs"},
      {"GPU-ffff", {}, "no such GPU"},
      {"", {}, "no GPU is visible"},
      {"  ", {}, "no GPU is visible"},
      {"-1", {}, "not an index"},
      {"0,abc,1", {0}, "entry 'abc' (not an index or a GPU-/MIG- UUID) ends the list"},
      {"0,5,1", {0}, "entry '5' (out of range: 3 GPU(s)) ends the list"},
      {"0,,1", {0}, "entry '' (empty) ends the list"},
      {"0,0,1", {0}, "GPU listed twice"},
      {"1,", {1}, "ends the list"},
      {"MIG-aaaa1111", {0}, "visible GPU index(es) 0"},
      {"MIG-bbbb1111-2222-3333-4444-555555555555,MIG-aaaa1111,1", {0, 1}, "0, 1"},
      {"MIG-GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee/1/0", {1}, "visible GPU index(es) 1"},
      {"MIG-cccc", {}, "no such GPU"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.value.value_or("(unset)"));
    auto v = cuda::apply_visible_devices(devices, row.value);
    CHECK(indices(v.devices) == row.visible);
    if (std::string_view(row.note_part).empty()) {
      CHECK(v.note.empty());
    } else {
      CHECK_THAT(v.note, Catch::Contains(row.note_part) && Catch::StartsWith("CUDA_VISIBLE_DEVICES="));
    }
  }

  SECTION("a MIG entry the probe cannot match keeps every GPU, and says so") {
    std::vector<Device> plain = {devices[1], devices[2]};
    auto v = cuda::apply_visible_devices(plain, "MIG-aaaa1111");
    CHECK(indices(v.devices) == std::vector<int>{1, 2});
    CHECK_THAT(v.note, Catch::Contains("cannot be matched") && Catch::Contains("every GPU is kept"));
  }
  SECTION("indices are the probe's (NVML) indices, not positions") {
    std::vector<Device> sparse = {devices[2]};  // only index 2 listed
    CHECK(indices(cuda::apply_visible_devices(sparse, "2").devices) == std::vector<int>{2});
    CHECK(cuda::apply_visible_devices(sparse, "0").devices.empty());
  }
}

TEST_CASE("max_cuda_for_driver reads the driver table", "[backends][cuda]") {
  using cuda::DriverOs;
  struct Row {
    const char* driver;
    DriverOs os;
    std::optional<std::string> cuda;
  };
  const std::vector<Row> rows = {
      {"590.44.01", DriverOs::linux_os, "13.0"},  // newer than the table: its newest row, a lower bound
      {"580.82.07", DriverOs::linux_os, "13.0"},
      {"580.65.06", DriverOs::linux_os, "13.0"},
      {"580.65.05", DriverOs::linux_os, "12.9"},
      {"575.57.08", DriverOs::linux_os, "12.9"},
      {"575.51.03", DriverOs::linux_os, "12.9"},
      {"570.124.06", DriverOs::linux_os, "12.8"},
      {"570.86.10", DriverOs::linux_os, "12.8"},
      {"570.26", DriverOs::linux_os, "12.8"},
      {"565.57.01", DriverOs::linux_os, "12.6"},
      {"560.28.03", DriverOs::linux_os, "12.6"},
      {"555.42.02", DriverOs::linux_os, "12.5"},
      {"550.54.14", DriverOs::linux_os, "12.4"},
      {"550.54.13", DriverOs::linux_os, "12.3"},
      {"535.104.05", DriverOs::linux_os, "12.2"},
      {"525.60.13", DriverOs::linux_os, "12.0"},
      {"525.60.12", DriverOs::linux_os, "11.8"},
      {"470.256.02", DriverOs::linux_os, "11.4"},
      {"450.36.06", DriverOs::linux_os, "11.0"},
      {"410.48", DriverOs::linux_os, "10.0"},
      {"410.47", DriverOs::linux_os, std::nullopt},
      {"390.157", DriverOs::linux_os, std::nullopt},
      {"garbage", DriverOs::linux_os, std::nullopt},
      {"", DriverOs::linux_os, std::nullopt},
      {"572.61", DriverOs::windows_os, "12.8"},
      {"576.02", DriverOs::windows_os, "12.9"},
      {"528.33", DriverOs::windows_os, "12.0"},
      {"527.40", DriverOs::windows_os, "11.8"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.driver, row.os == DriverOs::windows_os);
    CHECK(cuda::max_cuda_for_driver(row.driver, row.os) == row.cuda);
  }

  SECTION("the table is well formed: newest first, every floor a driver version") {
    auto table = cuda::driver_table();
    REQUIRE(table.size() >= 10);
    CHECK(table.front().cuda == "13.0");
    for (std::size_t i = 0; i < table.size(); ++i) {
      CAPTURE(table[i].cuda);
      CHECK(cuda::is_driver_version(table[i].linux_driver));
      CHECK(cuda::is_driver_version(table[i].windows_driver));
      if (i == 0) continue;
      using wheelfit::model::NumericVersion;
      CHECK(*NumericVersion::parse(table[i - 1].cuda) > *NumericVersion::parse(table[i].cuda));
      CHECK(*NumericVersion::parse(table[i - 1].linux_driver) > *NumericVersion::parse(table[i].linux_driver));
      CHECK(*NumericVersion::parse(table[i - 1].windows_driver) > *NumericVersion::parse(table[i].windows_driver));
    }
  }
}
