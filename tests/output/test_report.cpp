#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <filesystem>
#include <toml++/toml.h>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/output/report.hpp"
#include "wheelfit/semantics/policy.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

namespace {
const std::string x86 = "cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";

config::Workspace demo_workspace() {
  auto env = config::parse_env_config(R"(python = "3.12"
[workspace]
channels = ["conda-forge", "extra"]
[dependencies]
numpy = ">=1.26"
[cuda]
packages = ["Flash_Attn"]
[pypi-dependencies]
trimesh = "*"
[env_vars]
OMP_NUM_THREADS = 1
KMP = "TRUE"
)",
                                      "demo/comfy-env.toml");
  REQUIRE(env);
  config::Workspace ws;
  ws.envs.push_back(std::move(*env));
  return ws;
}

struct ReportFixture {
  config::Workspace ws = demo_workspace();
  machine::Machine m = test::h100();
  index::IndexSnapshot snap =
      test::snapshot({{"flash-attn", {{"flash_attn-2.8.3+cu128torch2.8-" + x86, "", std::string(64, 'e')}}}});
  resolve::Resolution r = resolve_now();
  resolve::Resolution resolve_now() {
    auto res = resolve::resolve({ws, m, test::cuda_policy(), snap, "cuda"});
    if (!res) throw std::runtime_error(res.error().message);
    return std::move(*res);
  }
  /// The machine on sm 6.1, its torch built for it: the wheel fails on gpu_arch.
  resolve::Resolution unresolved_on_sm61() {
    m.gpus = std::vector<std::string>{"6.1"};
    resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
    in.torch_archs = test::torch_built_for("6.1");  // the machine's torch runs there: the wheel fails
    auto res = resolve::resolve(in);
    REQUIRE(res);
    return std::move(*res);
  }
  output::ReportContext ctx{.machine = m, .workspace = ws, .index_url = snap.base_url, .index_origin = "--index",
                            .policy_source = "built-in"};
};
}  // namespace

TEST_CASE("pixi_manifest writes the workspace, the pins and one hash-pinned url per wheel", "[output][pixi]") {
  ReportFixture f;
  REQUIRE(f.r.ok());
  auto text = output::pixi_manifest(f.r, f.ctx);
  REQUIRE(text);
  toml::table doc = toml::parse(*text);
  CHECK(*doc["workspace"]["channels"][0].value<std::string>() == "conda-forge");
  CHECK(*doc["workspace"]["channels"][1].value<std::string>() == "extra");
  CHECK(*doc["workspace"]["platforms"][0]["platform"].value<std::string>() == "linux-64");
  CHECK(*doc["workspace"]["platforms"][0]["glibc"].value<std::string>() == "2.35");
  REQUIRE(f.ws.envs[0].name == "demo");  // demo/comfy-env.toml: the folder names the feature
  auto feature = doc["feature"]["demo"];
  REQUIRE(feature);
  CHECK(*feature["dependencies"]["numpy"].value<std::string>() == ">=1.26");
  CHECK(*feature["dependencies"]["python"].value<std::string>() == "3.12.*");
  CHECK(*feature["pypi-dependencies"]["trimesh"].value<std::string>() == "*");
  CHECK(*feature["pypi-dependencies"]["torch"]["version"].value<std::string>() == "==2.8.*");
  CHECK(*feature["pypi-dependencies"]["torch"]["index"].value<std::string>() == "https://download.pytorch.org/whl/cu128");
  CHECK(*feature["pypi-dependencies"]["torchvision"]["version"].value<std::string>() == "==0.23.*");
  CHECK(*feature["pypi-dependencies"]["torchaudio"]["version"].value<std::string>() == "==2.8.*");
  const auto url = *feature["pypi-dependencies"]["flash-attn"]["url"].value<std::string>();
  CHECK(url == f.snap.projects.at("flash-attn").page.links[0].url + "#sha256=" + std::string(64, 'e'));
  CHECK(*feature["activation"]["env"]["OMP_NUM_THREADS"].value<std::string>() == "1");
  CHECK(*feature["activation"]["env"]["KMP"].value<std::string>() == "TRUE");
  CHECK_FALSE(feature["cuda"]);
  CHECK_FALSE(feature["env_vars"]);
  CHECK(doc["environments"][f.ws.envs[0].name][0].value<std::string>() == f.ws.envs[0].name);
}

TEST_CASE("pixi_manifest refuses an unresolved workspace", "[output][pixi]") {
  ReportFixture f;
  f.m.gpus = std::vector<std::string>{"6.1"};
  auto res = resolve::resolve({f.ws, f.m, test::cuda_policy(), f.snap, "cuda"});
  REQUIRE(res);
  REQUIRE_FALSE(res->ok());
  CHECK_FALSE(output::pixi_manifest(*res, f.ctx));
}

TEST_CASE("json_report prints the contract's keys", "[output][json]") {
  ReportFixture f;
  auto v = boost::json::parse(output::json_report(f.r, f.ctx)).as_object();
  CHECK(v.at("combo").at("cuda").as_string() == "12.8");
  CHECK(v.at("combo").at("torch").as_string() == "2.8");
  CHECK(v.at("tier").as_string() == "bootstrap");
  const auto& pkg = v.at("packages").as_array().at(0).as_object();
  CHECK(pkg.at("name").as_string() == "flash-attn");
  CHECK(pkg.at("filename").as_string() == "flash_attn-2.8.3+cu128torch2.8-" + x86);
  CHECK(pkg.at("version").as_string() == "2.8.3+cu128torch2.8");
  CHECK(pkg.at("sha256").as_string() == std::string(64, 'e'));
  CHECK(v.at("pins").as_array().size() == 3);
  CHECK(v.at("unresolved").as_array().empty());
}

TEST_CASE("json_report lists every failed demand of every candidate", "[output][json]") {
  ReportFixture f;
  const auto res = f.unresolved_on_sm61();
  auto v = boost::json::parse(output::json_report(res, f.ctx)).as_object();
  CHECK(v.at("combo").is_null());
  CHECK(v.at("tier").is_null());
  const auto& u = v.at("unresolved").as_array();
  REQUIRE(u.size() == 1);
  const auto& failed = u[0].at("candidates").as_array().at(0).at("failed").as_array();
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].at("demand").as_string() == "gpu_arch");
  CHECK(failed[0].at("machine").as_string() == "sm 6.1");
}

TEST_CASE("human_report opens a failure with the predecessor's summary", "[output][report]") {
  ReportFixture f;
  const auto res = f.unresolved_on_sm61();
  auto text = output::human_report(res, f.ctx);
  CHECK_THAT(text, Catch::Contains("No CUDA combo covers all required packages."));
  CHECK_THAT(text, Catch::Contains("packages: ['flash-attn']"));
  CHECK_THAT(text, Catch::Contains("python versions: cp312"));
  CHECK_THAT(text, Catch::Contains("gpu_arch: wheel"));
  CHECK_THAT(text, Catch::Contains("machine sm 6.1"));
  // The machine line writes the GPUs as the verdicts do: canonical, with the backend's prefix.
  CHECK_THAT(text, Catch::Contains("GPUs sm 6.1\n"));
}

TEST_CASE("write_file_atomically replaces the file whole or not at all", "[output][atomic]") {
  test::TempDir dir;
  const auto target = dir / "pixi.toml";
  test::write_file(target, "old");
  SECTION("success replaces the content and leaves no temp file") {
    REQUIRE(output::write_file_atomically(target.string(), "new"));
    CHECK(test::read_file(target) == "new");
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++files;
    CHECK(files == 1);
  }
  SECTION("a missing folder fails and names the path") {
    auto r = output::write_file_atomically((dir / "nope" / "pixi.toml").string(), "new");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("nope"));
    CHECK(test::read_file(target) == "old");
  }
}

TEST_CASE("the index line and index.tls name the trust store and the client certificate", "[output][json][report]") {
  namespace json = boost::json;
  using Loc = output::TlsNote::Location;
  struct Row {
    const char* what;
    std::optional<output::TlsNote> tls;
    std::string line;  // in the human report's index line ("" when none)
  };
  const std::vector<Row> rows{
      {"a local index: no TLS", std::nullopt, ""},
      {"the system store", output::TlsNote{}, "(--index; trust: the system store)"},
      {"a bundle and a client certificate",
       output::TlsNote{"REQUESTS_CA_BUNDLE", {Loc{"/corp/ca.pem", "REQUESTS_CA_BUNDLE"}}, Loc{"/me.pem", "--client-cert"}},
       "(--index; trust: /corp/ca.pem (REQUESTS_CA_BUNDLE), client certificate /me.pem (--client-cert))"},
      {"SSL_CERT_FILE and SSL_CERT_DIR",
       output::TlsNote{"SSL_CERT_FILE + SSL_CERT_DIR", {Loc{"/a.pem", "SSL_CERT_FILE"}, Loc{"/certs", "SSL_CERT_DIR"}}, {}},
       "(--index; trust: /a.pem (SSL_CERT_FILE), /certs (SSL_CERT_DIR))"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    ReportFixture f;
    f.ctx.tls = row.tls;
    const auto human = output::human_report(f.r, f.ctx);
    if (row.line.empty()) {
      CHECK_THAT(human, !Catch::Contains("trust:"));
    } else {
      CHECK_THAT(human, Catch::Contains(row.line));
    }
    const auto index = json::parse(output::json_report(f.r, f.ctx)).at("index").as_object();
    if (!row.tls) {
      CHECK(index.at("tls").is_null());
      continue;
    }
    const auto& tls = index.at("tls").as_object();
    CHECK(std::string(tls.at("trust_from").as_string()) == row.tls->trust_from);
    REQUIRE(tls.at("trust").as_array().size() == row.tls->trust.size());
    for (std::size_t i = 0; i < row.tls->trust.size(); ++i) {
      CHECK(std::string(tls.at("trust").at(i).at("path").as_string()) == row.tls->trust[i].path);
      CHECK(std::string(tls.at("trust").at(i).at("from").as_string()) == row.tls->trust[i].from);
    }
    CHECK(tls.at("client_cert").is_null() == !row.tls->client_cert);
  }
}

TEST_CASE("pixi_manifest declares the driver's CUDA and the GPUs' lowest compute capability, leaving out the unknown",
          "[output][pixi]") {
  struct Row {
    std::string name;
    std::vector<std::pair<std::string, std::string>> facts;
    std::optional<std::string> driver, arch;  // nullopt: absent
  };
  const std::vector<Row> rows{
      {"an H100 with a CUDA 13.0 driver", {}, "13.0", "9.0"},
      {"several GPUs: the lowest capability", {{"gpus", "9.0,sm_86,12.0"}}, "13.0", "8.6"},
      {"the driver's line unknown", {{"driver_line", ""}}, std::nullopt, "9.0"},
      {"the GPUs unknown", {{"gpus", ""}}, "13.0", std::nullopt},
      {"neither", {{"gpus", ""}, {"driver_line", ""}}, std::nullopt, std::nullopt},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    ReportFixture f;
    for (const auto& [k, v] : row.facts) REQUIRE(machine::set_fact(f.m, k, v, "test"));
    f.r = f.resolve_now();
    REQUIRE(f.r.ok());
    auto text = output::pixi_manifest(f.r, f.ctx);
    REQUIRE(text);
    toml::table doc = toml::parse(*text);
    auto platform = doc["workspace"]["platforms"][0];
    CHECK(*platform["platform"].value<std::string>() == "linux-64");
    auto cuda = platform["cuda"];
    CHECK(cuda["driver"].value<std::string>() == row.driver);
    CHECK(cuda["arch"].value<std::string>() == row.arch);
    if (!row.driver && !row.arch) CHECK_FALSE(cuda);
  }
}

TEST_CASE("pixi_manifest refuses a pick whose URL or version is not UTF-8 (issue 31)", "[output][pixi][hostile]") {
  for (const bool in_url : {true, false}) {
    CAPTURE(in_url);
    ReportFixture f;
    REQUIRE(f.r.ok());
    REQUIRE_FALSE(f.r.picks.empty());
    (in_url ? f.r.picks[0].url : f.r.picks[0].version) += "\xff";
    const auto text = output::pixi_manifest(f.r, f.ctx);
    REQUIRE_FALSE(text);
    CHECK(text.error().is(Errc::invalid_input));
    CHECK_THAT(text.error().message, Catch::StartsWith("pixi.toml: the pick flash-attn '") && Catch::Contains("is not UTF-8"));
  }
}
