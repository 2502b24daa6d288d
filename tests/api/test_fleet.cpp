// The fleet (wheelfit/api.hpp: resolve_fleet, load_fleet, FleetResult) against the generated
// 44-package farm through a counting file transport: one index read for every machine, the same
// picks as one resolve per machine, machine-level failures kept to their machine, the JSON
// shape and the summary table.
#include <catch2/catch.hpp>

#include <boost/json.hpp>
#include <cstdio>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "support/memory_transport.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/api.hpp"

using namespace wheelfit;

namespace {

// The file transport, counting the requests it is asked.
std::shared_ptr<test::MemoryTransport> counting_files() {
  auto t = std::make_shared<test::MemoryTransport>();
  t->origin().forward_to(transports::make_file_transport());
  return t;
}

// The 44-package farm, generated once for the file.
const std::filesystem::path& farm() {
  static const test::TempDir tmp;
  static const std::filesystem::path dir = [] {
    farmgen::FarmOptions o;
    o.out = tmp / "farm";
    REQUIRE(farmgen::generate_farm(o, test::cuda_policy()));
    return tmp / "farm";
  }();
  return dir;
}

api::ResolveRequest request_for_fleet(std::shared_ptr<net::Transport> transport) {
  api::ResolveRequest r;
  r.envs = {{"demo", std::nullopt, {"flash-attn", "nvdiffrast", "cumesh", "sageattention"}}};
  r.env_overrides = false;
  r.index = farm().string();
  r.transport = std::move(transport);
  r.backends = &test::shipped_backends();
  return r;
}

// An H100, a GH200 (aarch64, no torch) and a GTX 1080 on Python 3.11.
std::vector<api::FleetMachine> three() {
  return {{"h100", test::h100()},
          {"gh200", test::make_machine({{"os", "linux"}, {"cpu_arch", "aarch64"}, {"glibc", "2.39"}, {"python", "3.12"},
                                        {"backend", "cuda"}, {"driver_version", "580.82.07"}, {"gpus", "9.0"}})},
          {"gtx1080", test::h100_with({{"gpus", "6.1"}, {"python", "3.11"}, {"driver_version", "570.133.07"}})}};
}

std::vector<std::string> urls(const api::ResolveResult& r) {
  std::vector<std::string> out;
  if (r.resolution)
    for (const auto& p : r.resolution->picks) out.push_back(p.url);
  return out;
}

}  // namespace

TEST_CASE("resolve_fleet: one index read, one result per machine, the picks of single resolves", "[facade][fleet]") {
  auto counting = counting_files();
  const auto fleet = three();
  const auto f = api::resolve_fleet(request_for_fleet(counting), fleet);
  INFO(f.report());
  REQUIRE_FALSE(f.error);
  REQUIRE(f.machines.size() == 3);
  CHECK(f.index_reads == 1);
  const std::size_t fleet_asked = counting->origin().requests().size();

  int worst = 0;
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    CAPTURE(fleet[i].name);
    auto one = counting_files();
    auto req = request_for_fleet(one);
    req.machine = fleet[i].machine;
    const auto single = api::resolve(req);
    CHECK(one->origin().requests().size() == fleet_asked);  // the fleet read the index as often as one machine does
    CHECK(f.machines[i].exit_code == single.exit_code);
    CHECK(urls(f.machines[i]) == urls(single));
    CHECK(f.machines[i].json() == single.json());
    CHECK(f.machines[i].report() == single.report());
    worst = std::max(worst, single.exit_code);
  }
  CHECK(f.exit_code == worst);
  CHECK(f.machines[0].exit_code == api::kExitResolved);
  CHECK(f.machines[1].exit_code == api::kExitResolved);  // aarch64: a combo the farm builds for it
}

TEST_CASE("resolve_fleet: a machine-level failure is that machine's result", "[facade][fleet]") {
  SECTION("a ROCm profile whose backend publishes no index: exit 3 for it alone") {
    auto req = request_for_fleet(counting_files());
    req.index.reset();  // each backend's own index: cuda's from the variable, rocm has none
    const test::ScopedEnv cuda_index("COMFY_ENV_CUDA_WHEELS_INDEX", farm().string());
    const test::ScopedEnv rocm_index("WHEELFIT_ROCM_WHEELS_INDEX", std::nullopt);
    auto fleet = three();
    fleet.push_back({"mi250", test::h100_with({{"torch", "2.7.1+rocm6.3"}, {"backend", "rocm"}, {"gpus", "gfx90a"}})});
    const auto f = api::resolve_fleet(req, fleet);
    REQUIRE(f.machines.size() == 4);
    CHECK(f.machines[0].exit_code == api::kExitResolved);
    REQUIRE(f.machines[3].error);
    CHECK(f.machines[3].exit_code == api::kExitNoIndex);
    CHECK_THAT(f.machines[3].error->message, Catch::Contains("no ROCm wheel index is published yet"));
    CHECK(f.exit_code == api::kExitNoIndex);
    CHECK(f.index_reads == 1);
    CHECK_THAT(f.summary(), Catch::Contains("mi250    -                 -          no index"));
  }
  SECTION("a device target the backend refuses") {
    auto fleet = three();
    fleet[1].machine.gpus = std::vector<std::string>{"sm_9"};
    const auto f = api::resolve_fleet(request_for_fleet(counting_files()), fleet);
    CHECK(f.machines[0].exit_code == api::kExitResolved);
    CHECK(f.machines[1].exit_code == api::kExitBadInput);
    CHECK(f.exit_code == api::kExitBadInput);
  }
  SECTION("an env override applies to every profile") {
    const test::ScopedEnv py("WHEELFIT_OVERRIDE_PYTHON", "3.10");
    auto req = request_for_fleet(counting_files());
    req.env_overrides = true;
    const auto f = api::resolve_fleet(req, three());
    for (const auto& r : f.machines) CHECK(r.machine.python->str() == "3.10");
  }
}

TEST_CASE("resolve_fleet: a profile that did not load is its row, bad input; the others resolve", "[facade][fleet]") {
  // Issue 20 item 9: one malformed profile in --machines DIR no longer fails the whole fleet.
  auto fleet = three();
  fleet.insert(fleet.begin() + 1, api::FleetMachine{"broken", {}, Error(Errc::invalid_input, "--machines: broken.toml: bad")});
  const auto f = api::resolve_fleet(request_for_fleet(counting_files()), fleet);
  INFO(f.report());
  REQUIRE_FALSE(f.error);
  REQUIRE(f.machines.size() == 4);
  CHECK(f.machines[0].exit_code == api::kExitResolved);
  CHECK(f.machines[1].exit_code == api::kExitBadInput);
  REQUIRE(f.machines[1].error);
  CHECK(f.machines[1].error->message == "--machines: broken.toml: bad");
  CHECK(f.machines[2].exit_code == api::kExitResolved);
  CHECK(f.exit_code == api::kExitBadInput);  // the worst row's
  CHECK(f.index_reads == 1);

  const auto doc = boost::json::parse(f.json()).as_object();
  const auto& broken = doc.at("machines").as_array().at(1).as_object();
  CHECK(broken.at("name").as_string() == "broken");
  CHECK(broken.at("error").at("message").as_string() == "--machines: broken.toml: bad");
  CHECK(broken.at("error").at("exit_code") == 2);
  CHECK(doc.at("summary").as_array().at(1).at("status").as_string() == "bad input");
  CHECK_THAT(f.report(), Catch::Contains("== broken ==\nwheelfit: --machines: broken.toml: bad\n"));
  CHECK_THAT(f.summary(), Catch::Contains("\nbroken   -                 -          bad input\n"));

  SECTION("every profile broken: every row bad input, exit 2, no index read") {
    const std::vector<api::FleetMachine> bad{{"a", {}, Error(Errc::invalid_input, "a.toml: bad")},
                                             {"b", {}, Error(Errc::invalid_input, "b.toml: bad")}};
    const auto g = api::resolve_fleet(request_for_fleet(counting_files()), bad);
    REQUIRE_FALSE(g.error);
    REQUIRE(g.machines.size() == 2);
    CHECK(g.exit_code == api::kExitBadInput);
    CHECK(g.index_reads == 0);
  }
}

TEST_CASE("resolve_fleet: errors of the whole request", "[facade][fleet]") {
  auto req = request_for_fleet(counting_files());
  SECTION("two machines with one name") {
    auto fleet = three();
    fleet[2].name = "h100";
    const auto f = api::resolve_fleet(req, fleet);
    REQUIRE(f.error);
    CHECK(f.exit_code == api::kExitBadInput);
    CHECK_THAT(f.error->message, Catch::Contains("two machines are named 'h100'"));
    CHECK(f.machines.empty());
    CHECK_THAT(f.json(), Catch::StartsWith(R"({"error":{"exit_code":2)"));
  }
  SECTION("no machines") {
    CHECK(api::resolve_fleet(req, {}).error);
  }
  SECTION("no environments") {
    req.envs.clear();
    const auto f = api::resolve_fleet(req, three());
    REQUIRE(f.error);
    CHECK_THAT(f.error->message, Catch::Contains("no environments"));
  }
}

TEST_CASE("FleetResult: the JSON shape and the summary table", "[facade][fleet]") {
  auto fleet = three();
  fleet[2].machine = test::h100_with({{"gpus", "6.1"}, {"torch", "2.8.0+cu128"}});
  auto req = request_for_fleet(counting_files());
  req.fallback = false;  // the GTX 1080 stays unresolved
  const auto f = api::resolve_fleet(req, fleet);
  REQUIRE(f.machines.size() == 3);
  CHECK(f.machines[2].exit_code == api::kExitUnresolved);
  CHECK(f.exit_code == api::kExitUnresolved);

  const auto doc = boost::json::parse(f.json()).as_object();
  const auto& machines = doc.at("machines").as_array();
  REQUIRE(machines.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    auto o = machines[i].as_object();
    CHECK(o.at("name").as_string() == fleet[i].name);
    o.erase("name");
    CHECK(o == boost::json::parse(f.machines[i].json()).as_object());  // the single object's keys
  }
  const auto& summary = doc.at("summary").as_array();
  REQUIRE(summary.size() == 3);
  CHECK(summary[0].as_object() == boost::json::object{{"machine", "h100"}, {"combo", "cu12.8/torch2.8"},
                                                      {"tier", "bootstrap"}, {"status", "resolved"}});
  CHECK(summary[2].as_object() == boost::json::object{{"machine", "gtx1080"}, {"combo", nullptr},
                                                      {"tier", nullptr}, {"status", "unresolved"}});

  const std::string table = f.summary();
  CHECK_THAT(table, Catch::StartsWith("machine  combo             tier       status\n"
                                      "h100     cu12.8/torch2.8   bootstrap  resolved\n"
                                      "gh200    cu13.2/torch2.13  bootstrap  resolved\n"));
  CHECK_THAT(table, Catch::EndsWith("gtx1080  -                 -          unresolved\n"));
  const std::string report = f.report();
  CHECK_THAT(report, Catch::StartsWith("== h100 ==\n" + f.machines[0].report()));
  CHECK_THAT(report, Catch::Contains("== gtx1080 ==\n" + f.machines[2].report()));
  CHECK_THAT(report, Catch::EndsWith("summary:\n" + table));
}

TEST_CASE("load_fleet: every profile of a folder, sorted, named by stem", "[facade][fleet]") {
  const test::TempDir tmp;
  const auto examples = test::source_dir() / "examples" / "machines";
  SECTION("profiles, other files ignored") {
    std::filesystem::copy_file(examples / "x86_64-h100-cu128.toml", tmp / "b-h100.toml");
    std::filesystem::copy_file(examples / "aarch64-gh200.toml", tmp / "a-gh200.toml");
    test::write_file(tmp / "c.json", R"({"os": "linux", "cpu_arch": "x86_64", "python": "3.11"})");
    test::write_file(tmp / "README.md", "not a profile");
    std::filesystem::create_directory(tmp / "sub.toml");  // a folder: not read
    auto fleet = api::load_fleet(tmp.path().string());
    REQUIRE(fleet);
    REQUIRE(fleet->size() == 3);
    CHECK((*fleet)[0].name == "a-gh200");
    CHECK((*fleet)[1].name == "b-h100");
    CHECK((*fleet)[2].name == "c");
    CHECK((*fleet)[0].machine.cpu_arch == "aarch64");
  }
  SECTION("a bad profile is its machine's error, naming the file; the others load") {
    std::filesystem::copy_file(examples / "x86_64-h100-cu128.toml", tmp / "good.toml");
    test::write_file(tmp / "bad.toml", "glibc = 2.35\n");
    auto fleet = api::load_fleet(tmp.path().string());
    REQUIRE(fleet);
    REQUIRE(fleet->size() == 2);
    CHECK((*fleet)[0].name == "bad");
    REQUIRE((*fleet)[0].error);
    CHECK_THAT((*fleet)[0].error->message, Catch::StartsWith("--machines: ") && Catch::Contains("bad.toml"));
    CHECK((*fleet)[1].name == "good");
    CHECK_FALSE((*fleet)[1].error);
  }
  SECTION("an entry that is not a regular file is skipped with a warning naming it, never read") {
    std::filesystem::copy_file(examples / "x86_64-h100-cu128.toml", tmp / "good.toml");
    const test::Fifo fifo(tmp / "fifo.toml");
    std::filesystem::create_symlink("/dev/null", tmp / "null.json");
    std::vector<std::string> warnings;
    const log::ScopedSink sink([&](log::Level level, std::string_view m) {
      if (level == log::Level::warn) warnings.emplace_back(m);
    });
    auto fleet = api::load_fleet(tmp.path().string());
    REQUIRE(fleet);
    REQUIRE(fleet->size() == 1);
    CHECK((*fleet)[0].name == "good");
    CHECK(test::any_contains(warnings, fifo.string() + ": is a FIFO, not a regular file; skipped"));
    CHECK(test::any_contains(warnings, (tmp / "null.json").string() + ": is a character device, not a regular file; skipped"));
  }
  SECTION("an empty folder") {
    auto fleet = api::load_fleet(tmp.path().string());
    REQUIRE_FALSE(fleet);
    CHECK_THAT(fleet.error().message, Catch::Contains("no machine profile"));
  }
  SECTION("a missing folder") {
    CHECK_FALSE(api::load_fleet((tmp / "none").string()));
  }
  SECTION("hundreds of profiles, read on several threads: each in its row, in file order") {
    for (int k = 0; k < 300; ++k) {
      char name[16];
      std::snprintf(name, sizeof name, "m%03d", k);
      if (k % 7 == 3) test::write_file(tmp / (std::string(name) + ".toml"), "glibc = 2.35\n");  // not a string: bad
      else test::write_file(tmp / (std::string(name) + ".json"), R"({"os": "linux", "cpu_arch": "x86_64", "python": "3.)" +
                                                                    std::to_string(10 + k % 4) + "\"}");
    }
    auto fleet = api::load_fleet(tmp.path().string());
    REQUIRE(fleet);
    REQUIRE(fleet->size() == 300);
    for (int k = 0; k < 300; ++k) {
      const auto& row = (*fleet)[static_cast<std::size_t>(k)];
      char name[16];
      std::snprintf(name, sizeof name, "m%03d", k);
      INFO(name);
      CHECK(row.name == name);
      if (k % 7 == 3) {
        REQUIRE(row.error);
        CHECK_THAT(row.error->message, Catch::StartsWith("--machines: ") && Catch::Contains(std::string(name) + ".toml"));
      } else {
        REQUIRE_FALSE(row.error);
        REQUIRE(row.machine.python);
        CHECK(row.machine.python->str() == "3." + std::to_string(10 + k % 4));
      }
    }
  }
  SECTION("two profiles with one stem") {
    std::filesystem::copy_file(examples / "x86_64-h100-cu128.toml", tmp / "a.toml");
    test::write_file(tmp / "a.json", R"({"os": "linux", "cpu_arch": "x86_64"})");
    auto fleet = api::load_fleet(tmp.path().string());
    REQUIRE_FALSE(fleet);
    CHECK_THAT(fleet.error().message, Catch::Contains("two profiles are named 'a'"));
  }
}

namespace {

// `m` with every fact's provenance set to `origin` (as loading the profile `origin` names would).
machine::Machine with_provenance(machine::Machine m, const std::string& origin) {
  for (auto& [key, from] : m.provenance) from = origin;
  return m;
}

}  // namespace

TEST_CASE("resolve_fleet: identical profiles are judged once, each row under its own name", "[facade][fleet][twins]") {
  const auto gh200 = three()[1].machine;
  const std::vector<api::FleetMachine> fleet = {
      {"a", with_provenance(test::h100(), "profile a.toml")},   {"b", with_provenance(gh200, "profile b.toml")},
      {"c", with_provenance(test::h100(), "profile c.toml")},   {"d", with_provenance(gh200, "profile d.toml")},
      {"e", with_provenance(test::h100(), "profile e.toml")}};
  const auto f = api::resolve_fleet(request_for_fleet(counting_files()), fleet);
  INFO(f.report());
  REQUIRE_FALSE(f.error);
  REQUIRE(f.machines.size() == 5);
  CHECK(f.resolves == 2);  // a (c, e its twins) and b (d)
  CHECK(f.index_reads == 1);
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    CAPTURE(fleet[i].name);
    const auto& row = f.machines[i];
    const auto& twin = f.machines[i % 2];  // a or b
    REQUIRE(row.resolution);
    CHECK(row.exit_code == twin.exit_code);
    CHECK(urls(row) == urls(twin));
    CHECK(row.resolution->warnings == twin.resolution->warnings);
    CHECK(row.report() == twin.report());
    auto json_of = [](const api::ResolveResult& r) {
      auto o = boost::json::parse(r.json()).as_object();
      o.erase("machine");  // the profile, with its provenance: each row's own
      return o;
    };
    CHECK(json_of(row) == json_of(twin));
    // Its own profile, with the provenance of its own file.
    CHECK(row.machine.provenance.at("gpus") == "profile " + fleet[i].name + ".toml");
  }
  const auto doc = boost::json::parse(f.json()).as_object();
  const auto& rows = doc.at("summary").as_array();
  REQUIRE(rows.size() == 5);
  for (std::size_t i = 0; i < fleet.size(); ++i) CHECK(rows[i].at("machine").as_string() == fleet[i].name);
}

TEST_CASE("resolve_fleet: profiles that differ in one fact are judged apart", "[facade][fleet][twins]") {
  struct Row {
    const char* differs;
    test::Facts change;
  };
  const Row rows[] = {
      {"gpus", {{"gpus", "8.6"}}},
      {"gpus: one more", {{"gpus", "9.0, 9.0"}}},
      {"glibc", {{"glibc", "2.39"}}},
      {"python", {{"python", "3.11"}}},
      {"python: free-threaded", {{"python", "3.12t"}}},
      {"driver_version", {{"driver_version", "570.133.07"}}},
      {"driver_line", {{"driver_line", "12.8"}}},
      {"torch", {{"torch", "2.7.1+cu126"}}},
      {"cpu_arch", {{"cpu_arch", "aarch64"}}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.differs);
    const std::vector<api::FleetMachine> fleet = {{"a", test::h100()}, {"b", test::h100_with(row.change)}, {"c", test::h100()}};
    const auto f = api::resolve_fleet(request_for_fleet(counting_files()), fleet);
    REQUIRE_FALSE(f.error);
    REQUIRE(f.machines.size() == 3);
    CHECK(f.resolves == 2);  // a (c its twin) and b
    CHECK_FALSE(machine::same_facts(f.machines[0].machine, f.machines[1].machine));
  }
}

TEST_CASE("resolve_fleet: twins whose resolve fails each name their own profile", "[facade][fleet][twins]") {
  auto bad = test::h100();
  bad.gpus = std::vector<std::string>{"sm_9"};  // the backend's grammar refuses it
  const std::vector<api::FleetMachine> fleet = {{"a", with_provenance(bad, "profile a.toml")},
                                                {"b", with_provenance(bad, "profile b.toml")}};
  const auto f = api::resolve_fleet(request_for_fleet(counting_files()), fleet);
  REQUIRE(f.machines.size() == 2);
  CHECK(f.resolves == 2);  // b judged again: a's error names a's file
  for (std::size_t i = 0; i < 2; ++i) {
    REQUIRE(f.machines[i].error);
    CHECK(f.machines[i].exit_code == api::kExitBadInput);
    CHECK_THAT(f.machines[i].error->message, Catch::StartsWith("profile " + fleet[i].name + ".toml: gpus: 'sm_9'"));
  }
}

TEST_CASE("resolve_fleet: each machine's result is its single resolve's, byte for byte", "[facade][fleet][memo]") {
  // Issue 23: machines of a fleet share their judging (a package's verdicts under one Python,
  // platform, combo, driver verdict and GPU class are made once). Every row must still read as
  // the machine's own resolve: picks, every candidate's failure, the advice, the warnings.
  auto req = request_for_fleet(counting_files());
  req.envs.push_back({"older", std::string("3.11"), {"Flash_Attn", "cumesh"}});  // another Python, another spelling
  const test::Facts no_torch = {{"torch", ""}};
  const std::vector<std::pair<const char*, test::Facts>> table = {
      {"h100", {}},
      {"h100-sm86", {{"gpus", "8.6"}}},
      {"h100-sm89", {{"gpus", "8.9"}}},  // the same GPU class as 8.6 for most packages
      {"sm61", {{"gpus", "6.1"}}},
      {"sm120", {{"gpus", "12.0"}, {"torch", "2.9.0+cu128"}}},
      {"two-gpus", {{"gpus", "8.6, 6.1"}}},
      {"no-gpu", {{"gpus", ""}}},
      {"py310", {{"python", "3.10"}}},
      {"py313t", {{"python", "3.13t"}}},
      {"old-driver", {{"driver_version", "535.183.01"}, {"driver_line", "12.2"}}},
      {"driver-version-only", {{"driver_line", ""}, {"driver_version", "550.127.05"}}},
      {"torch27", {{"torch", "2.7.1+cu126"}}},
      {"aarch64", {{"cpu_arch", "aarch64"}, {"glibc", "2.39"}}},
      {"old-glibc", {{"glibc", "2.17"}}},
  };
  std::vector<api::FleetMachine> fleet;
  for (const auto& [name, change] : table) fleet.push_back({name, test::h100_with(change)});
  fleet.push_back({"fresh", test::make_machine({{"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.35"}, {"python", "3.12"},
                                                {"backend", "cuda"}, {"driver_version", "570.133.07"}, {"gpus", "7.5"}})});
  fleet.push_back({"gpus-unknown", test::make_machine({{"os", "linux"}, {"cpu_arch", "x86_64"}, {"python", "3.12"},
                                                       {"backend", "cuda"}, {"torch", "2.8.0+cu128"}})});
  for (const bool fallback : {true, false}) {
    CAPTURE(fallback);
    req.fallback = fallback;
    const auto f = api::resolve_fleet(req, fleet);
    REQUIRE_FALSE(f.error);
    REQUIRE(f.machines.size() == fleet.size());
    CHECK(f.resolves == fleet.size());
    bool unresolved = false, advised = false;
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      CAPTURE(fleet[i].name);
      auto one = req;
      one.machine = fleet[i].machine;
      const auto single = api::resolve(one);
      CHECK(f.machines[i].exit_code == single.exit_code);
      CHECK(f.machines[i].json() == single.json());
      CHECK(f.machines[i].report() == single.report());
      if (single.resolution && !single.resolution->ok()) {
        unresolved = true;
        advised = advised || (single.resolution->advice && !single.resolution->advice->suggestions.empty());
      }
    }
    CHECK(unresolved);  // the table holds machines with per-candidate reports
    CHECK(advised);     // and advice
  }
}

namespace {

// Issue 31: a fleet's output goes to a sink a row at a time. The pieces a write gives its sink.
struct Pieces {
  std::vector<std::string> got;
  [[nodiscard]] api::TextSink sink() {
    return [this](std::string_view piece) { got.emplace_back(piece); };
  }
  [[nodiscard]] std::string joined() const {
    std::string out;
    for (const auto& p : got) out += p;
    return out;
  }
  [[nodiscard]] std::size_t longest() const {
    std::size_t n = 0;
    for (const auto& p : got) n = std::max(n, p.size());
    return n;
  }
};

// Twins (each under its own provenance) of an unresolved GTX 1080 and of a resolved H100, another
// machine, and a profile that did not load: rows of every kind, some sharing a resolution.
std::vector<api::FleetMachine> streamed_fleet() {
  const auto gtx = test::h100_with({{"gpus", "6.1"}});
  std::vector<api::FleetMachine> fleet = {{"gtx-a", with_provenance(gtx, "profile gtx-a.toml")},
                                          {"h100-a", with_provenance(test::h100(), "profile h100-a.toml")},
                                          {"gtx-b", with_provenance(gtx, "profile gtx-b.toml")},
                                          {"sm86", test::h100_with({{"gpus", "8.6"}})},
                                          {"gtx-c", with_provenance(gtx, "profile gtx-c.toml")},
                                          {"h100-b", with_provenance(test::h100(), "profile h100-b.toml")}};
  fleet.push_back({"broken", {}, Error(Errc::invalid_input, "--machines: broken.toml: glibc: not a string")});
  return fleet;
}

api::ResolveRequest streamed_request() {
  auto req = request_for_fleet(counting_files());
  req.fallback = false;  // the GTX 1080 stays unresolved: its rows list every candidate's verdict
  return req;
}

// The fleet's JSON as rows composed from each machine's own object (the single resolve's text,
// "name" spliced in first) and the summary: what FleetResult::json() has always printed.
std::string json_of_rows(const api::FleetResult& f) {
  std::string out = "{\"machines\":[";
  for (std::size_t i = 0; i < f.machines.size(); ++i) {
    std::string one = f.machines[i].json();
    one.pop_back();  // its newline
    out += (i ? ",{\"name\":" : "{\"name\":") + boost::json::serialize(boost::json::value(f.fleet[i].name)) + "," + one.substr(1);
  }
  const auto doc = boost::json::parse(f.json()).as_object();
  return out + "],\"summary\":" + boost::json::serialize(doc.at("summary")) + "}\n";
}

}  // namespace

TEST_CASE("FleetResult::write_json / write_report: json() and report() byte for byte, a row at a time",
          "[facade][fleet][stream]") {
  const auto fleet = streamed_fleet();
  const auto f = api::resolve_fleet(streamed_request(), fleet);
  REQUIRE_FALSE(f.error);
  REQUIRE(f.machines.size() == fleet.size());
  CHECK(f.machines[0].exit_code == api::kExitUnresolved);
  CHECK(f.machines[1].exit_code == api::kExitResolved);
  CHECK(f.machines[6].exit_code == api::kExitBadInput);
  std::size_t longest_row = 0, longest_report = 0;
  for (const auto& r : f.machines) {
    longest_row = std::max(longest_row, r.json().size());
    longest_report = std::max(longest_report, r.report().size());
  }

  Pieces json;
  f.write_json(json.sink());
  CHECK(json.joined() == json_of_rows(f));
  CHECK(json.joined() == f.json());
  // No piece is more than one row: the sink has each row before the next is made.
  CHECK(json.got.size() > fleet.size());
  CHECK(json.longest() < longest_row);

  Pieces report;
  f.write_report(report.sink());
  std::string rows;
  for (std::size_t i = 0; i < fleet.size(); ++i) rows += "== " + fleet[i].name + " ==\n" + f.machines[i].report() + "\n";
  CHECK(report.joined() == rows + "summary:\n" + f.summary());
  CHECK(report.joined() == f.report());
  CHECK(report.longest() < longest_report);

  SECTION("an error of the whole request: its one object, or its one line") {
    auto req = streamed_request();
    req.envs.clear();
    const auto failed = api::resolve_fleet(req, fleet);
    REQUIRE(failed.error);
    Pieces e;
    CHECK(failed.write_json(e.sink()) == 0);
    CHECK(e.joined() == R"j({"error":{"exit_code":2,"message":"resolve: no environments (give configs or envs)"}})j" "\n");
    CHECK(failed.report() == "wheelfit: resolve: no environments (give configs or envs)\n");
  }
}

TEST_CASE("FleetResult::write_json / write_report: identical machines' resolution is serialised once", "[facade][fleet][stream]") {
  const auto fleet = streamed_fleet();
  const auto f = api::resolve_fleet(streamed_request(), fleet);
  REQUIRE_FALSE(f.error);
  CHECK(f.resolves == 3);  // the GTX 1080 (b, c its twins), the H100 (b), sm86
  Pieces json, report;
  CHECK(f.write_json(json.sink()) == 3);
  CHECK(f.write_report(report.sink()) == 3);
  // Each twin's row is still its own: its name and its own profile's provenance.
  for (const char* name : {"gtx-a", "gtx-b", "gtx-c"}) {
    CAPTURE(name);
    CHECK_THAT(json.joined(), Catch::Contains("\"name\":\"" + std::string(name) + "\",\"combo\":null"));
    CHECK_THAT(json.joined(), Catch::Contains("\"gpus\":\"profile " + std::string(name) + ".toml\""));
  }
}

TEST_CASE("download and mirror: the fleet's JSON text with their keys after it, never parsed again",
          "[facade][fleet][stream]") {
  // A name that is not UTF-8 (a Latin-1 file name): a JSON parser refuses the fleet's text, so a
  // re-parse lost every machine's row.
  auto fleet = streamed_fleet();
  fleet[0].name = "gtx-\xe9";
  const test::TempDir tmp;
  SECTION("download: nothing resolved for the GTX 1080s is fetched for them") {
    api::DownloadRequest req;
    req.resolve = streamed_request();
    req.fleet = {fleet[0], fleet[2], fleet[4]};  // the unresolved twins: nothing to fetch
    req.dir = (tmp / "dl").string();
    const auto d = api::download(req);
    REQUIRE_FALSE(d.error);
    CHECK(d.exit_code == api::kExitUnresolved);
    std::string resolved = d.resolved.json();
    resolved.resize(resolved.size() - 2);  // "}\n"
    Pieces json;
    d.write_json(json.sink());
    CHECK(json.joined() == resolved + ",\"downloads\":[]}\n");
    CHECK(d.json() == json.joined());
    CHECK(d.report() == d.resolved.report());  // no file: no downloads lines
  }
  SECTION("mirror: no machine resolved, nothing published") {
    api::MirrorRequest req;
    req.resolve = streamed_request();
    req.fleet = {fleet[0], fleet[2], fleet[4], fleet[6]};
    req.out = (tmp / "mirror").string();
    const auto m = api::mirror(req);
    REQUIRE_FALSE(m.error);
    REQUIRE_FALSE(m.unpublished.empty());
    std::string resolved = m.resolved.json();
    resolved.resize(resolved.size() - 2);
    Pieces json;
    m.write_json(json.sink());
    CHECK(json.joined() == resolved + ",\"downloads\":[],\"published\":null,\"unpublished\":" +
                               boost::json::serialize(boost::json::value(m.unpublished)) + ",\"prune_skipped\":false}\n");
    CHECK(m.json() == json.joined());
    std::size_t longest_row = 0;
    for (const auto& r : m.resolved.machines) longest_row = std::max(longest_row, r.json().size());
    CHECK(json.longest() < longest_row);
    CHECK(m.report() == m.resolved.report() + "not published: " + m.unpublished + "\n");
  }
}
