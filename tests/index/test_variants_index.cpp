// Variant indexes (PEP 825) read and resolved: WheelNext's test variant index page for torch and
// its torch-2.9.0-variants.json (tests/data/variants, sources named in its README): the file
// read once with the page and checked against the page's digest, a tampered or unknown-format
// file, and torch resolved from the page (issue 22, item 5).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <regex>

#include "support/backend_support.hpp"
#include "support/memory_transport.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/net/transport.hpp"

using namespace wheelfit;

namespace {

const std::string vx_base = "https://variants.test/v0.0.3/";

using VxTransport = test::MemoryTransport;  // answers from a table by URL, counts every request

std::string vx_data(const std::string& file) { return test::read_file(test::source_dir() / "tests/data/variants" / file); }

// The fixture page, less the <li> entries whose text matches `drop`.
std::string vx_page(const std::string& drop = "") {
  std::string page = vx_data("torch-page.html");
  if (drop.empty()) return page;
  return std::regex_replace(page, std::regex("<li>[^<]*<a [^>]*>[^<]*" + drop + "[^<]*</a>[\\s\\S]*?</li>"), "");
}

void vx_index(VxTransport& t, const std::string& page, const std::string& variants = vx_data("torch-2.9.0-variants.json")) {
  t.origin().serve(vx_base + "torch/", page, "text/html");  // the page is text/html, the rest JSON
  t.origin().serve(vx_base + "torch/torch-2.9.0-variants.json", variants, "application/json");
}

resolve::Resolution vx_resolve(const index::IndexSnapshot& snap, const machine::Machine& m) {
  auto ws = test::workspace({"torch"});
  auto r = resolve::resolve({ws, m, test::cuda_policy(), snap, "cuda"});
  INFO((r ? "" : r.error().message));
  REQUIRE(r.has_value());
  return std::move(*r);
}

}  // namespace

TEST_CASE("read_index reads a version's variants file once, with the page, and checks its digest", "[index][variants]") {
  VxTransport t;
    vx_index(t, vx_page());
  const auto snap = index::read_index(t, vx_base, {"torch"});
  const auto& page = snap.projects.at("torch");
  REQUIRE(page.status == index::ProjectPage::Status::ok);
  // 2.8.0's file is linked, but the page lists no 2.8.0 variant wheel: it is not read.
  REQUIRE(page.variants.size() == 1);
  const auto& doc = page.variants.front();
  CHECK(doc.filename == "torch-2.9.0-variants.json");
  CHECK(doc.sha256 == "54f0d0be70c4b686652352f9e51561af91f393f30d519c55a8fdf5dbfa075442");
  REQUIRE(doc.file != nullptr);
  CHECK(doc.problem.empty());
  CHECK(doc.file->schema.str() == "0.0.3");
  CHECK(doc.file->variants.size() == 7);
  CHECK(t.origin().count(vx_base + "torch/torch-2.9.0-variants.json") == 1);
  CHECK(t.origin().count(vx_base + "torch/torch-2.8.0-variants.json") == 0);
  CHECK(snap.warnings.empty());
}

TEST_CASE("a variants file that fails its digest or is of an unknown format is not used", "[index][variants]") {
  struct Row {
    const char* what;
    std::string body;
    std::string problem;
  };
  std::string unknown = vx_data("torch-2.9.0-variants.json");
  unknown.replace(unknown.find("v0.0.3.json"), 11, "v9.0.0.json");
  const Row rows[] = {
      {"tampered", vx_data("torch-2.9.0-variants.json") + " ", "does not match its page's sha256 54f0d0be"},
      {"unknown format (the digest is not checked first here: the page's is the original's)", unknown,
       "does not match its page's sha256"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    VxTransport t;
    vx_index(t, vx_page(), row.body);
    const auto snap = index::read_index(t, vx_base, {"torch"});
    const auto& doc = snap.projects.at("torch").variants.at(0);
    CHECK(doc.file == nullptr);
    CHECK(doc.problem.find(row.problem) != std::string::npos);
    REQUIRE(snap.warnings.size() == 1);
    CHECK(snap.warnings[0].find("the variant wheels of torch-2.9.0 are not compatible (its null and non-variant wheels still are)") !=
          std::string::npos);
  }
  // A page that gives no digest: the unknown format is what is said.
  std::string page = vx_page();
  page = std::regex_replace(page, std::regex("torch-2\\.9\\.0-variants\\.json#sha256=[0-9a-f]+"), "torch-2.9.0-variants.json");
  VxTransport t;
    vx_index(t, page, unknown);
  const auto snap = index::read_index(t, vx_base, {"torch"});
  CHECK(snap.projects.at("torch").variants.at(0).problem.find("format version 9.0.0 is not one this wheelfit reads") !=
        std::string::npos);
}

TEST_CASE("torch resolved from a variant index: its variant, its version fixing the combo", "[index][variants][resolve]") {
  // An H100 with a CUDA 13.0 driver (the reference machine), no torch installed.
  auto h100 = test::h100_with({{"torch", ""}});

  SECTION("the page as published: 2.9.1 (PyPI, no variant) is the highest version with a compatible wheel") {
    VxTransport t;
    vx_index(t, vx_page());
    const auto r = vx_resolve(index::read_index(t, vx_base, {"torch"}), h100);
    REQUIRE(r.ok());
    REQUIRE(r.picks.size() == 1);
    CHECK(r.picks[0].filename == "torch-2.9.1-cp312-cp312-manylinux_2_28_x86_64.whl");
    CHECK_FALSE(r.picks[0].variant_label.has_value());
  }

  SECTION("2.9.0's variants: cuda13.0 on a 13.0 driver, cuda12.8 on a 12.8 one (priority breaks the tie with 12.6)") {
    const std::string page = vx_page("torch-2\\.9\\.1-");
    for (const auto& [driver, label, line] : {std::tuple{"13.0", "cuda13.0", "13.0"}, std::tuple{"12.8", "cuda12.8", "12.8"}}) {
      CAPTURE(driver);
      VxTransport t;
    vx_index(t, page);
      auto m = test::h100_with({{"torch", ""}, {"driver_line", driver}});
      const auto r = vx_resolve(index::read_index(t, vx_base, {"torch"}), m);
      REQUIRE(r.ok());
      REQUIRE(r.picks.size() == 1);
      const auto& p = r.picks[0];
      CHECK(p.filename == "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-" + std::string(label) + ".whl");
      CHECK(p.variant_label == label);
      CHECK(std::find(p.variant_properties.begin(), p.variant_properties.end(), "nvidia :: sm_arch :: 90_real") !=
            p.variant_properties.end());
      // The exact wheel, not a range: no torch pin; its version and variant fix the combo.
      CHECK(r.combo->line.str() == line);
      CHECK(r.combo->torch.str() == "2.9");
      CHECK(std::none_of(r.pins.begin(), r.pins.end(), [](const resolve::Pin& pin) { return pin.name == "torch"; }));
      CHECK(std::any_of(r.pins.begin(), r.pins.end(), [](const resolve::Pin& pin) { return pin.name == "torchvision"; }));
    }
  }

  SECTION("a GPU no CUDA variant serves (sm 3.5, below what NVIDIA's provider knows): the null variant") {
    VxTransport t;
    vx_index(t, vx_page("torch-2\\.9\\.1-"));
    auto m = test::h100_with({{"torch", ""}, {"gpus", "3.5"}});
    const auto r = vx_resolve(index::read_index(t, vx_base, {"torch"}), m);
    REQUIRE(r.ok());
    CHECK(r.picks[0].filename == "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-null.whl");
  }
}

TEST_CASE("torch listed against a label-based index stays an error", "[index][variants][resolve]") {
  auto snap = test::snapshot({{"torch", {{"torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"}}}});
  auto ws = test::workspace({"torch"});
  auto r = resolve::resolve({ws, test::h100(), test::cuda_policy(), snap, "cuda"});
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().is(Errc::usage));
  CHECK(r.error().message.find("serves no variant wheels of torch (PEP 825)") != std::string::npos);
  CHECK(r.error().message.find("remove 'torch' from the packages") != std::string::npos);
}
