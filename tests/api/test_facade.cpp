// The façade (wheelfit/api.hpp): api::resolve with a caller's in-memory Transport, envs given
// directly and the shipped backends in-process; its exit codes and messages, table-driven.
// api::doctor over a crafted site folder, judged against two given machines. api::cache over a
// temporary cache folder.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "inspect/binary_writer.hpp"
#include "support/backend_support.hpp"
#include "support/memory_transport.hpp"
#include "support/resolve_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/api.hpp"

using namespace wheelfit;

namespace {

// An index held in memory: URL -> HTML body; anything else is 404, or a reset when down.
using MemoryTransport = test::MemoryTransport;
void go_down(MemoryTransport& t) {
  t.origin().fail_all(net::net_error(net::NetErrc::reset, "{url}: connection reset"));
}

std::string page(const std::vector<std::string>& files) {
  std::string out = "<html><body>\n";
  for (const auto& f : files) out += "<a href=\"https://files.test/" + f + "#sha256=" + std::string(64, 'a') + "\">" + f + "</a>\n";
  return out + "</body></html>\n";
}

// The shipped backends, registered in-process (no plugin folder needed).
const registry::Registry& backends() {
  static const registry::Registry reg = [] {
    registry::Registry r;
    REQUIRE(r.add(test::cuda_backend()));
    REQUIRE(r.add(test::rocm_backend()));
    return r;
  }();
  return reg;
}

api::ResolveRequest request_for_facade(std::shared_ptr<net::Transport> transport) {
  api::ResolveRequest r;
  r.envs = {{"demo", "3.12", {"Pkg_A"}}};
  r.machine = test::h100();
  r.env_overrides = false;
  r.index = "https://mirror.test/simple/";
  r.transport = std::move(transport);
  r.backends = &backends();
  return r;
}

}  // namespace

TEST_CASE("api::resolve reads the caller's transport and returns what the CLI prints", "[facade]") {
  auto memory = std::make_shared<MemoryTransport>();
  memory->origin().serve("https://mirror.test/simple/pkg-a/",
      page({"pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl",
            "pkg_a-1.0+cu126torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"}));
  const auto r = api::resolve(request_for_facade(memory));
  INFO(r.report());
  REQUIRE(r.exit_code == api::kExitResolved);
  REQUIRE(r.resolution);
  CHECK(r.resolution->combo_str(*r.resolution->combo) == "cu12.8/torch2.8");
  REQUIRE(r.resolution->picks.size() == 1);
  CHECK(r.resolution->picks[0].url == "https://files.test/pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl");
  CHECK(r.resolution->picks[0].env == "demo");
  CHECK(r.resolution->picks[0].requested == "Pkg_A");
  CHECK(memory->origin().requests().size() >= 1);
  CHECK_THAT(r.json(), Catch::Contains(R"("combo":{"cuda":"12.8","torch":"2.8"})"));
  CHECK_THAT(r.report(), Catch::Contains("resolved: cu12.8/torch2.8 via tier 1 (bootstrap)"));
  auto manifest = r.pixi_manifest();
  REQUIRE(manifest);
  CHECK_THAT(*manifest, Catch::Contains("pkg_a-1.0+cu128torch2.8"));
}

TEST_CASE("api::resolve -o: the format table's row by the file name or --format, a test's own row too", "[facade][formats]") {
  auto memory = std::make_shared<MemoryTransport>();
  memory->origin().serve("https://mirror.test/simple/pkg-a/", page({"pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"}));
  const auto r = api::resolve(request_for_facade(memory));
  REQUIRE(r.exit_code == api::kExitResolved);
  REQUIRE(output::formats().add({"toy", [](std::string_view n) { return n.ends_with(".toy"); }, "deps.toy",
                                 [](const output::Target& t) -> Expected<std::string> {
                                   std::string out = "toy for " + t.machine.name + " (python " + t.machine.python.value_or("?") + ")\n";
                                   for (const auto& w : output::locked_wheels(t)) out += w.name + " " + w.location + "\n";
                                   return out;
                                 }}));
  struct Restore {
    ~Restore() { output::formats().remove("toy"); }
  } restore;
  auto by_name = api::output_format_for("out/deps.toy", std::nullopt);
  REQUIRE(by_name);
  CHECK((*by_name)->name == "toy");
  auto by_flag = api::output_format_for("pixi.toml", std::string("toy"));
  REQUIRE(by_flag);
  CHECK(*by_flag == *by_name);
  auto text = r.write_output(**by_name);
  REQUIRE(text);
  CHECK(*text == "toy for machine (python 3.12)\n"
                 "pkg-a https://files.test/pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl\n");
  // The LockFormat door keeps its three formats and names the table's others as its not to write.
  auto as_enum = api::lock_format_for("deps.toy", std::nullopt);
  REQUIRE_FALSE(as_enum);
  CHECK(as_enum.error().is(Errc::usage));
  // The built-in rows are what lock_file writes.
  for (const auto& [format, name] : {std::pair{api::LockFormat::requirements, "requirements.txt"},
                                     std::pair{api::LockFormat::pylock, "pylock.toml"}, std::pair{api::LockFormat::pixi, "pixi.toml"}}) {
    CAPTURE(name);
    CHECK(*api::lock_format_for(name, std::nullopt) == format);
    CHECK(*r.lock_file(format) == *r.write_output(**api::output_format_for(name, std::nullopt)));
  }
}

TEST_CASE("api::resolve: exit codes and messages", "[facade]") {
  struct Row {
    const char* what;
    std::function<void(api::ResolveRequest&, MemoryTransport&)> change;
    int code;
    const char* message;
  };
  const std::vector<Row> rows = {
      {"nothing fits: exit 1", [](auto& r, auto&) { r.machine->gpus = std::vector<std::string>{"6.1"}; }, api::kExitUnresolved, ""},
      {"an unknown backend", [](auto& r, auto&) { r.backend = "metal"; }, api::kExitBadInput,
       "--backend: unknown backend 'metal' (known: cuda, rocm)"},
      {"a backend with no index", [](auto& r, auto&) {
         r.index.reset();
         r.machine->torch = *model::Version::parse("2.7.1+rocm6.3");
         r.machine->gpus = std::vector<std::string>{"gfx90a"};
       }, api::kExitNoIndex, "ROCm backend detected gfx90a with torch 2.7.1+rocm6.3; no ROCm wheel index is published yet"},
      {"an index that cannot be read", [](auto&, auto& t) { go_down(t); }, api::kExitUnreadable,
       "the index https://mirror.test/simple/ (--index) could not be read"},
      {"a device target the backend refuses", [](auto& r, auto&) { r.machine->gpus = std::vector<std::string>{"sm_9"}; },
       api::kExitBadInput, "'sm_9' is not a compute capability"},
      {"an env without a name", [](auto& r, auto&) { r.envs[0].name.clear(); }, api::kExitBadInput, "an env without a name"},
      {"an env's python that is not major.minor", [](auto& r, auto&) { r.envs[0].python = "3"; }, api::kExitBadInput,
       "python '3' is not major.minor"},
      {"a package name that is not one", [](auto& r, auto&) { r.envs[0].packages = {"no such/pkg"}; }, api::kExitBadInput,
       "'no such/pkg' is not a package name"},
      {"no environments", [](auto& r, auto&) { r.envs.clear(); }, api::kExitBadInput, "no environments"},
      {"a missing policy file", [](auto& r, auto&) { r.policy_file = "/nonexistent/policy.json"; }, api::kExitBadInput,
       "--policy: /nonexistent/policy.json: no such policy file"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    auto memory = std::make_shared<MemoryTransport>();
    memory->origin().serve("https://mirror.test/simple/pkg-a/", page({"pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"}));
    auto req = request_for_facade(memory);
    row.change(req, *memory);
    const auto r = api::resolve(req);
    CHECK(r.exit_code == row.code);
    if (row.code == api::kExitUnresolved) {
      CHECK_FALSE(r.error);
      REQUIRE(r.resolution);
      CHECK_FALSE(r.resolution->ok());
      CHECK_FALSE(r.pixi_manifest());
      continue;
    }
    REQUIRE(r.error);
    CHECK_THAT(r.error->message, Catch::Contains(row.message));
    CHECK_THAT(r.json(), Catch::StartsWith(R"({"error":{"exit_code":)" + std::to_string(row.code)));
  }
}

TEST_CASE("api::resolve: a request's log sink takes that call's messages, on every thread at once", "[facade][log]") {
  std::vector<std::string> process;
  log::Sink previous = log::set_sink([&process](log::Level, std::string_view m) { process.emplace_back(m); });
  // Assertions stay on this thread (Catch2's are not thread-safe): the machine and the backends
  // are made here, the threads only resolve.
  machine::Machine cpu_build = test::h100();
  REQUIRE(machine::set_fact(cpu_build, "torch", "2.8.0+cpu", "test"));  // a CPU build: warned
  REQUIRE(machine::set_fact(cpu_build, "backend", "cpu", "test"));
  (void)backends();
  std::vector<std::vector<std::string>> seen(3);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, &cpu_build, i] {
      auto memory = std::make_shared<MemoryTransport>();
      memory->origin().serve("https://mirror.test/simple/pkg-a/",
          page({"pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"}));
      auto req = request_for_facade(memory);
      req.machine = cpu_build;
      req.log_sink = [&seen, i](log::Level level, std::string_view m) {
        if (level == log::Level::warn) seen[i].emplace_back(m);
      };
      (void)api::resolve(req);
    });
  }
  for (auto& t : threads) t.join();
  log::set_sink(previous);
  for (const auto& s : seen) {
    REQUIRE(s.size() == 1);
    CHECK_THAT(s[0], Catch::Contains("the machine's backend is cpu"));
  }
  CHECK(process.empty());
}

TEST_CASE("api::resolve may run on several threads at once", "[facade]") {
  (void)backends();  // registered (and asserted) on this thread
  std::vector<std::thread> threads;
  std::vector<int> codes(4, -1);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    threads.emplace_back([&codes, i] {
      auto memory = std::make_shared<MemoryTransport>();
      memory->origin().serve("https://mirror.test/simple/pkg-a/",
          page({"pkg_a-1.0+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"}));
      codes[i] = api::resolve(request_for_facade(memory)).exit_code;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(codes == std::vector<int>(4, api::kExitResolved));
}

namespace {

// site-packages/ with one compiled distribution whose kernels are sm_80 SASS only.
void make_site(const test::TempDir& dir) {
  namespace bin = wheelfit::test::bin;
  bin::LibrarySpec spec;
  spec.needed = {"libc10.so", "libcudart.so.12"};
  spec.needs = {{"libc.so.6", {"GLIBC_2.17"}}};
  spec.extra.push_back(bin::Section{".nv_fatbin", 1, bin::fatbin_container({{2, 80}})});
  const auto site = dir / "site-packages";
  const std::string info = "kern-1.0+cu128torch2.8.dist-info/";
  test::write_file(site / (info + "METADATA"), "Metadata-Version: 2.1\nName: kern\nVersion: 1.0+cu128torch2.8\n\n");
  test::write_file(site / (info + "WHEEL"), "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\n");
  test::write_file(site / (info + "RECORD"), "kern_cuda.cpython-312-x86_64-linux-gnu.so,sha256=x,1\n" + info + "RECORD,,\n");
  test::write_file(site / "kern_cuda.cpython-312-x86_64-linux-gnu.so", bin::write_library(spec).bytes);
}

api::DoctorRequest doctor_request(const test::TempDir& dir, const std::string& gpus) {
  api::DoctorRequest r;
  r.site = (dir / "site-packages").string();
  r.machine = test::h100();
  REQUIRE(machine::set_fact(*r.machine, "gpus", gpus, "test"));
  r.env_overrides = false;
  r.backends = &backends();
  return r;
}

}  // namespace

TEST_CASE("api::doctor: the verdict per distribution, its exit code, report and JSON", "[facade][doctor]") {
  test::TempDir dir;
  make_site(dir);

  const auto miss = api::doctor(doctor_request(dir, "9.0"));
  REQUIRE_FALSE(miss.error);
  CHECK(miss.exit_code == api::kExitUnresolved);
  REQUIRE(miss.doctor);
  REQUIRE(miss.doctor->dists.size() == 1);
  CHECK_FALSE(miss.doctor->dists[0].fits());
  CHECK_THAT(miss.report(), Catch::Contains("kern 1.0+cu128torch2.8 (1 compiled file): WILL NOT RUN (gpu_arch)"));
  CHECK_THAT(miss.report(), Catch::Contains("1 distribution will not run here"));
  CHECK_THAT(miss.json(), Catch::Contains(R"("ok":false)"));
  CHECK_THAT(miss.json(), Catch::Contains(R"("failing":["gpu_arch"])"));

  const auto fits = api::doctor(doctor_request(dir, "8.6"));
  REQUIRE_FALSE(fits.error);
  CHECK(fits.exit_code == api::kExitResolved);
  CHECK_THAT(fits.report(), Catch::Contains("everything compiled here fits this machine"));
  CHECK_THAT(fits.json(), Catch::Contains(R"("ok":true)"));
}

TEST_CASE("api::doctor: bad input is exit 2 with the message", "[facade][doctor]") {
  test::TempDir dir;
  make_site(dir);
  struct Row {
    const char* what;
    std::function<void(api::DoctorRequest&)> change;
    const char* message;
  };
  const std::vector<Row> rows = {
      {"a policy file that does not exist", [&](api::DoctorRequest& r) { r.policy_file = (dir / "nope.toml").string(); },
       "nope.toml"},
      {"no site and an interpreter that is not there", [&](api::DoctorRequest& r) {
         r.site.reset();
         r.python = (dir / "no-python").string();
       },
       "--python"},
  };
  for (const auto& row : rows) {
    INFO(row.what);
    auto req = doctor_request(dir, "9.0");
    row.change(req);
    const auto r = api::doctor(req);
    CHECK(r.exit_code == api::kExitBadInput);
    REQUIRE(r.error);
    CHECK_THAT(r.error->message, Catch::Contains(row.message));
    CHECK_THAT(r.report(), Catch::StartsWith("wheelfit: "));
    CHECK_THAT(r.json(), Catch::StartsWith(R"({"error":{"exit_code":2)"));
  }
}

TEST_CASE("api::cache: info, prune to the cap, clean; the cap from the request, the variable or the default",
          "[facade][cache]") {
  test::TempDir dir;
  const auto root = dir / "http";
  std::filesystem::create_directories(root / "v2");
  for (const char key : {'a', 'b', 'c'}) test::write_file(root / "v2" / (std::string(64, key) + ".entry"), std::string(100, 'x'));
  test::ScopedEnv unset("WHEELFIT_CACHE_MAX_SIZE", std::nullopt);
  struct Row {
    const char* what;
    api::CacheAction action;
    std::optional<std::uint64_t> max_size;
    std::optional<std::string> env;
    int exit_code;
    std::uint64_t entries_after, max_size_used;
  };
  auto row = GENERATE(values<Row>({
      {"info: the default cap", api::CacheAction::info, std::nullopt, std::nullopt, 0, 3, net::kDefaultCacheMaxSize},
      {"prune: the request's cap", api::CacheAction::prune, 250, "1G", 0, 2, 250},
      {"prune: the variable's cap", api::CacheAction::prune, std::nullopt, "150B", 0, 1, 150},
      {"prune: a bad variable is exit 2", api::CacheAction::prune, std::nullopt, "lots", 2, 3, 0},
      {"clean: everything", api::CacheAction::clean, std::nullopt, std::nullopt, 0, 0, net::kDefaultCacheMaxSize},
  }));
  CAPTURE(row.what);
  test::ScopedEnv env("WHEELFIT_CACHE_MAX_SIZE", row.env);
  api::CacheRequest req;
  req.action = row.action;
  req.cache_dir = root.string();
  req.max_size = row.max_size;
  const auto r = api::cache(req);
  CHECK(r.exit_code == row.exit_code);
  if (row.exit_code != 0) {
    REQUIRE(r.error);
    CHECK_THAT(r.error->message, Catch::StartsWith("WHEELFIT_CACHE_MAX_SIZE: 'lots' is not a size"));
    CHECK_THAT(r.json(), Catch::Contains("\"exit_code\":2"));
    return;
  }
  REQUIRE(r.outcome);
  CHECK(r.outcome->after.entries == row.entries_after);
  CHECK(r.max_size == row.max_size_used);
  CHECK_THAT(r.report(), Catch::StartsWith("cache: " + root.string() + "\n"));
  CHECK_THAT(r.json(), Catch::Contains("\"entries\":" + std::to_string(row.entries_after)));
}
