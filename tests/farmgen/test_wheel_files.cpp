// wheelfit-farmgen --with-files: real wheels beside the pages, their true digests in the pages
// and packages.json, each a valid zip whose RECORD matches its members.
#include <catch2/catch.hpp>

#include <openssl/evp.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "support/test_support.hpp"
#include "wheel_files.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/inspect/zip.hpp"
#include "wheelfit/model/wheel.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

namespace {

// "sha256=<urlsafe base64, no padding>" of `data`, as RECORD writes it.
std::string record_hash(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  REQUIRE(EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) == 1);
  unsigned char b64[64];
  const int n = EVP_EncodeBlock(b64, md, static_cast<int>(len));
  std::string out(reinterpret_cast<const char*>(b64), static_cast<std::size_t>(n));
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!out.empty() && out.back() == '=') out.pop_back();
  return "sha256=" + out;
}

// Every member of a wheel file, by name.
std::map<std::string, std::string> members_of(const fs::path& file) {
  auto src = inspect::open_file_source(file.string());
  REQUIRE(src);
  auto dir = inspect::read_zip_directory(**src);
  REQUIRE(dir);
  std::map<std::string, std::string> out;
  for (const auto& e : dir->entries) {
    auto data = inspect::read_zip_member(**src, e);
    REQUIRE(data);
    out.emplace(e.name, std::move(*data));
  }
  return out;
}

}  // namespace

TEST_CASE("farmgen --with-files writes each real file, its true digest in the pages and packages.json",
          "[farmgen][files]") {
  test::TempDir tmp;
  farmgen::FarmOptions options;
  options.out = tmp / "farm";
  options.packages = 2;
  options.with_files = true;
  options.base_url = "http://127.0.0.1:8080/farm";
  auto stats = farmgen::generate_farm(options, test::cuda_policy());
  REQUIRE(stats);
  REQUIRE(stats->wheels > 0);

  auto pj = index::parse_packages_json(test::read_file(tmp / "farm" / "packages.json"), "packages.json");
  REQUIRE(pj);
  std::size_t files = 0;
  for (const auto& [name, entry] : pj->packages) {
    for (const auto& w : entry.wheels) {
      INFO(w.filename);
      const std::string prefix = "http://127.0.0.1:8080/farm/releases/download/";
      REQUIRE(w.url.rfind(prefix, 0) == 0);
      const fs::path file = tmp / "farm" / "releases" / "download" / index::percent_decode(w.url.substr(prefix.size()));
      REQUIRE(fs::is_regular_file(file));
      const std::string bytes = test::read_file(file);
      REQUIRE(w.sha256);
      CHECK(*w.sha256 == farmgen::sha256_hex(bytes));
      ++files;
    }
  }
  CHECK(files == stats->wheels);

  // The package page links every file with its digest as the #sha256= fragment.
  const std::string page_url = "http://127.0.0.1:8080/farm/" + pj->packages.begin()->first + "/";
  const auto page = index::parse_simple_html(test::read_file(tmp / "farm" / pj->packages.begin()->first / "index.html"), page_url);
  REQUIRE(page);
  REQUIRE_FALSE(page->links.empty());
  for (const auto& link : page->links) {
    INFO(link.url);
    REQUIRE(link.sha256);
    CHECK(pj->sha256_for(link.url, link.filename) == link.sha256);
  }
}

TEST_CASE("farmgen wheels are valid: dist-info named by the file, RECORD matching each member", "[farmgen][files]") {
  struct Row {
    farmgen::WheelSpec spec;
    std::string module;       // the native member
    std::string module_head;  // its first bytes
  };
  const std::vector<Row> rows{
      {{"flash-attn", "flash_attn", "2.8.3+cu128torch2.8", "cp312", "manylinux_2_24_x86_64.manylinux_2_28_x86_64"},
       "flash_attn/_C.cpython-312-x86_64-linux-gnu.so", "\x7f" "ELF"},
      {{"cumm", "cumm", "0.7.11+cu129torch2.10", "cp313", "manylinux_2_26_aarch64.manylinux_2_28_aarch64"},
       "cumm/_C.cpython-313-aarch64-linux-gnu.so", "\x7f" "ELF"},
      {{"sageattention", "sageattention", "2.2.0+cu128torch2.8", "cp310", "win_amd64"},
       "sageattention/_C.cp310-win_amd64.pyd", "MZ"},
  };
  for (const auto& r : rows) {
    INFO(r.spec.name << " " << r.spec.platform_tags);
    test::TempDir tmp;
    const fs::path file = tmp / "w.whl";
    test::write_file(file, farmgen::wheel_bytes(r.spec));
    CHECK(farmgen::wheel_bytes(r.spec) == test::read_file(file));  // deterministic
    const auto members = members_of(file);
    const std::string dist_info = r.spec.name + "-" + r.spec.version + ".dist-info/";
    REQUIRE(members.count(r.module));
    CHECK(members.at(r.module).rfind(r.module_head, 0) == 0);
    REQUIRE(members.count(dist_info + "METADATA"));
    CHECK(members.at(dist_info + "METADATA") == farmgen::wheel_metadata(r.spec));
    CHECK_THAT(members.at(dist_info + "METADATA"), Catch::Contains("Name: " + r.spec.project + "\n"));
    CHECK_THAT(members.at(dist_info + "METADATA"), Catch::Contains("Version: " + r.spec.version + "\n"));
    REQUIRE(members.count(dist_info + "WHEEL"));
    CHECK_THAT(members.at(dist_info + "WHEEL"), Catch::Contains("Root-Is-Purelib: false\n"));
    CHECK_THAT(members.at(dist_info + "WHEEL"),
               Catch::Contains("Tag: " + r.spec.python + "-" + r.spec.python + "-" +
                               r.spec.platform_tags.substr(0, r.spec.platform_tags.find('.')) + "\n"));
    // RECORD: one row per other member with its real hash and size, itself without.
    REQUIRE(members.count(dist_info + "RECORD"));
    std::string expected;
    for (const auto& [name, data] : members) {
      if (name == dist_info + "RECORD") continue;
      expected += name + "," + record_hash(data) + "," + std::to_string(data.size()) + "\n";
    }
    std::string record = members.at(dist_info + "RECORD");
    CHECK_THAT(record, Catch::EndsWith(dist_info + "RECORD,,\n"));
    record.resize(record.size() - (dist_info + "RECORD,,\n").size());
    // RECORD lists members in the zip's order; compare as sets of rows.
    auto rows_of = [](const std::string& text) {
      std::multiset<std::string> out;
      std::size_t start = 0;
      while (start < text.size()) {
        const auto nl = text.find('\n', start);
        out.insert(text.substr(start, nl - start));
        start = nl + 1;
      }
      return out;
    };
    CHECK(rows_of(record) == rows_of(expected));
  }
}
