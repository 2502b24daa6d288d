// bench_fleet: the fleet resolve of issue 13, through the façade, next to baselines measured in
// the same run.
//
// Generates the 44-package farm (file index) and a fleet of 50 machine profiles (sm 6.1 to 12.0,
// Python 3.10-3.13, drivers 535-580, torch 2.7-2.9 or none, one machine in five aarch64), all
// asking for the 44 packages, then times:
//   one      api::resolve for one H100 (median of --reps)
//   fleet    api::resolve_fleet for the 50 (median of --fleet-reps); the index is read once
//   singles  50 x api::resolve, one machine at a time (once): what the fleet saves
//   twins    (issue 21) 10,000 profile files in a temp folder, machine k of them the fleet's
//            machine k % 300 (so ~300 distinct): api::load_fleet, then api::resolve_fleet (once)
// and prints fleet / one (goal: under 10x), singles / fleet and twins / one (goal: at most 3x).
//
//   bench_fleet [--machines N] [--reps N] [--fleet-reps N] [--no-singles] [--twins N] [--distinct N] [--packages N]
//     --no-singles  skip the 50 single resolves (for profiling the fleet: perf record bench_fleet --no-singles)
//     --twins N     profiles of the twins fleet (default 10000; 0 skips it); --distinct N: its distinct ones (300)
//     --packages N  every machine asks for the first N of the farm's 44 packages (default 44)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/transports/register.hpp"
#include "wheelfit/wheelfit.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

machine::Machine machine_of(const std::vector<std::pair<std::string, std::string>>& facts) {
  machine::Machine m;
  for (const auto& [k, v] : facts) {
    if (auto r = machine::set_fact(m, k, v, "bench"); !r) throw std::runtime_error(k + ": " + r.error().message);
  }
  return m;
}

machine::Machine h100() {
  return machine_of({{"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.35"}, {"python", "3.12"}, {"backend", "cuda"},
                     {"torch", "2.8.0+cu128"}, {"driver_version", "580.65.06"}, {"driver_line", "13.0"}, {"gpus", "9.0"}});
}

// Machine k of the fleet: the facts cycle with coprime periods, so the 50 are all different.
api::FleetMachine fleet_machine(std::size_t k) {
  static const char* const kGpus[] = {"6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"};
  static const char* const kPythons[] = {"3.10", "3.11", "3.12", "3.13"};
  static const std::pair<const char*, const char*> kDrivers[] = {
      {"535.183.01", "12.2"}, {"550.127.05", "12.4"}, {"560.35.03", "12.6"}, {"570.133.07", "12.8"}, {"580.65.06", "13.0"}};
  static const char* const kTorch[] = {"2.7.1+cu126", "2.8.0+cu128", "2.9.0+cu128", ""};
  const bool arm = k % 5 == 4;
  std::vector<std::pair<std::string, std::string>> facts = {
      {"os", "linux"}, {"cpu_arch", arm ? "aarch64" : "x86_64"}, {"glibc", arm ? "2.39" : "2.35"}, {"backend", "cuda"},
      {"python", kPythons[k % 4]}, {"driver_version", kDrivers[k % 5].first}, {"driver_line", kDrivers[k % 5].second},
      {"gpus", kGpus[k % 9]}};
  if (*kTorch[k % 7 % 4]) facts.emplace_back("torch", kTorch[k % 7 % 4]);
  return {"m" + std::to_string(k), machine_of(facts)};
}

api::ResolveRequest request_for(const fs::path& farm, const std::vector<std::string>& names) {
  api::ResolveRequest r;
  r.envs = {{"all", std::string("3.12"), names}};
  r.env_overrides = false;
  r.index = farm.string();
  r.use_cache = false;
  r.transport = std::shared_ptr<transport::Transport>(transports::make_file_transport());
  r.backends = &test::shipped_backends();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (auto done = wheelfit::transports::register_transports(wheelfit::transport::default_registry()); !done) return 70;
  if (auto done = wheelfit::policies::register_format(); !done) return 70;
  std::size_t machines = 50;
  int reps = 9, fleet_reps = 3;
  bool singles_too = true;
  std::size_t twins = 10000, distinct = 300, packages = 44;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--machines" && i + 1 < argc) machines = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--fleet-reps" && i + 1 < argc) fleet_reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--no-singles") singles_too = false;
    else if (a == "--twins" && i + 1 < argc) twins = static_cast<std::size_t>(std::max(0, std::atoi(argv[++i])));
    else if (a == "--distinct" && i + 1 < argc) distinct = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    else if (a == "--packages" && i + 1 < argc) packages = static_cast<std::size_t>(std::clamp(std::atoi(argv[++i]), 1, 44));
    else {
      std::fprintf(stderr, "usage: bench_fleet [--machines N] [--reps N] [--fleet-reps N] [--no-singles] [--twins N] "
                           "[--distinct N] [--packages N]\n");
      return 2;
    }
  }
  std::string templ = (fs::temp_directory_path() / "wheelfit-bench-fleet-XXXXXX").string();
  if (!::mkdtemp(templ.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  const fs::path tmp = templ;
  farmgen::FarmOptions opts;
  opts.out = tmp / "farm";
  opts.packages = 44;
  const auto stats = farmgen::generate_farm(opts, test::cuda_policy());
  if (!stats) {
    std::fprintf(stderr, "bench_fleet: %s\n", stats.error().message.c_str());
    return 1;
  }
  std::vector<std::string> names;
  for (const auto& p : farmgen::select_packages(farmgen::builtin_packages(), packages)) names.push_back(p.index_name);
  std::vector<api::FleetMachine> fleet;
  for (std::size_t k = 0; k < machines; ++k) fleet.push_back(fleet_machine(k));
  std::printf("farm: %zu packages, %zu wheels, %zu pages; fleet: %zu machines; %u hardware threads\n", stats->packages,
              stats->wheels, stats->pages, fleet.size(), std::max(1u, std::thread::hardware_concurrency()));

  // One machine.
  std::vector<double> one;
  std::string one_outcome;
  for (int r = 0; r < reps; ++r) {
    auto req = request_for(opts.out, names);
    req.machine = h100();
    const auto t0 = Clock::now();
    const auto res = api::resolve(req);
    one.push_back(seconds_since(t0));
    if (res.error) throw std::runtime_error("one: " + res.error->message);
    one_outcome = res.resolution && res.resolution->ok() ? "resolved" : "unresolved";
  }

  // The fleet.
  std::vector<double> all;
  std::size_t reads = 0, resolved = 0;
  for (int r = 0; r < fleet_reps; ++r) {
    const auto req = request_for(opts.out, names);
    const auto t0 = Clock::now();
    const auto res = api::resolve_fleet(req, fleet);
    all.push_back(seconds_since(t0));
    if (res.error) throw std::runtime_error("fleet: " + res.error->message);
    reads = res.index_reads;
    resolved = static_cast<std::size_t>(std::count_if(res.machines.begin(), res.machines.end(), [](const auto& m) {
      return m.resolution && m.resolution->ok();
    }));
  }

  // 50 single resolves, one after another (each reads the index).
  const auto s0 = Clock::now();
  for (const auto& m : fleet) {
    if (!singles_too) break;
    auto req = request_for(opts.out, names);
    req.machine = m.machine;
    const auto res = api::resolve(req);
    if (res.error && !res.resolution) throw std::runtime_error("single " + m.name + ": " + res.error->message);
  }
  const double singles = seconds_since(s0);

  // The twins: profile files of a large fleet with few distinct machines, loaded and resolved.
  double twins_load = 0, twins_resolve = 0;
  std::size_t twins_resolves = 0, twins_distinct = 0, twins_resolved = 0;
  if (twins > 0) {
    const fs::path dir = tmp / "machines";
    fs::create_directories(dir);
    std::set<std::string> seen;
    for (std::size_t k = 0; k < twins; ++k) {
      const std::string facts = machine::to_json(fleet_machine(k % distinct).machine);
      seen.insert(facts);
      char name[32];
      std::snprintf(name, sizeof name, "m%05zu.json", k);
      std::ofstream(dir / name) << facts;
    }
    twins_distinct = seen.size();
    const auto t0 = Clock::now();
    auto loaded = api::load_fleet(dir.string());
    twins_load = seconds_since(t0);
    if (!loaded) throw std::runtime_error("twins: " + loaded.error().message);
    const auto req = request_for(opts.out, names);
    const auto t1 = Clock::now();
    const auto res = api::resolve_fleet(req, *loaded);
    twins_resolve = seconds_since(t1);
    if (res.error) throw std::runtime_error("twins: " + res.error->message);
    twins_resolves = res.resolves;
    twins_resolved = static_cast<std::size_t>(std::count_if(res.machines.begin(), res.machines.end(), [](const auto& m) {
      return m.resolution && m.resolution->ok();
    }));
  }

  const double one_ms = median(one) * 1e3, fleet_ms = median(all) * 1e3;
  std::printf("one machine (H100, %zu packages, %s): %.1f ms (median of %d)\n", names.size(), one_outcome.c_str(), one_ms, reps);
  std::printf("fleet of %zu: %.1f ms (median of %d), %.1f ms a machine, %zu index read(s), %zu of %zu resolved\n",
              fleet.size(), fleet_ms, fleet_reps, fleet_ms / static_cast<double>(fleet.size()), reads, resolved, fleet.size());
  if (singles_too) std::printf("%zu single resolves one after another: %.1f ms\n", fleet.size(), singles * 1e3);
  std::printf("fleet / one machine: %.2fx (goal under 10x: %s)", fleet_ms / one_ms, fleet_ms / one_ms < 10 ? "met" : "NOT met");
  if (singles_too) std::printf("; singles / fleet: %.2fx", singles * 1e3 / fleet_ms);
  std::printf("\n");
  if (twins > 0) {
    const double twins_ms = twins_resolve * 1e3;
    std::printf("twins: %zu profile files (%zu distinct): load_fleet %.1f ms, resolve_fleet %.1f ms (%zu resolves run, "
                "%zu of %zu resolved)\n",
                twins, twins_distinct, twins_load * 1e3, twins_ms, twins_resolves, twins_resolved, twins);
    std::printf("twins / one machine: %.2fx resolve, %.2fx with load_fleet (goal at most 3x: %s)\n", twins_ms / one_ms,
                (twins_ms + twins_load * 1e3) / one_ms, twins_ms / one_ms <= 3 ? "met" : "NOT met");
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return 0;
}
