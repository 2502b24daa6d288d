// bench_fleet: the fleet resolve of issues 13, 21 and 23, through the façade, next to baselines
// measured in the same run.
//
// Generates the 44-package farm (file index) and a fleet of 50 machine profiles (sm 6.1 to 12.0,
// Python 3.10-3.13, drivers 535-580, torch 2.7-2.9 or none, one machine in five aarch64), all
// asking for the 44 packages, then times, in interleaved rounds (wall and CPU time of each):
//   one      api::resolve for one H100 (the baseline; every round)
//   fleet    api::resolve_fleet for the 50 (the first --fleet-reps rounds); the index is read once
//   twins    10,000 profile files in a temp folder, machine k of them the fleet's machine k % 300
//            (so 300 distinct): api::load_fleet, then api::resolve_fleet (the first --twins-reps
//            rounds), and the peak RSS of the process with its result held
//   singles  50 x api::resolve, one machine at a time (once, after the rounds): what the fleet saves
// and prints fleet / one (goal: at most 6x), singles / fleet and twins / one (goal: at most 3x,
// at most 300 MB RSS), each from the medians.
//
//   bench_fleet [--machines N] [--reps N] [--fleet-reps N] [--twins-reps N] [--no-singles] [--twins N] [--distinct N]
//               [--packages N]
//     --reps N      rounds (default 5); --fleet-reps / --twins-reps: rounds with the fleet (5) / the twins (3)
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

#include <sys/resource.h>
#include <time.h>

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

// CPU seconds this process has used (all threads): what a run costs whatever else the cores run.
double cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The peak resident set of this process so far, in MB.
double max_rss_mb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

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
  int reps = 5, fleet_reps = 5, twins_reps = 3;
  bool singles_too = true;
  std::size_t twins = 10000, distinct = 300, packages = 44;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--machines" && i + 1 < argc) machines = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--fleet-reps" && i + 1 < argc) fleet_reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--twins-reps" && i + 1 < argc) twins_reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--no-singles") singles_too = false;
    else if (a == "--twins" && i + 1 < argc) twins = static_cast<std::size_t>(std::max(0, std::atoi(argv[++i])));
    else if (a == "--distinct" && i + 1 < argc) distinct = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
    else if (a == "--packages" && i + 1 < argc) packages = static_cast<std::size_t>(std::clamp(std::atoi(argv[++i]), 1, 44));
    else {
      std::fprintf(stderr, "usage: bench_fleet [--machines N] [--reps N] [--fleet-reps N] [--no-singles] [--twins N] "
                           "[--distinct N] [--packages N] [--twins-reps N]\n");
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

  // The twins' profile files: a large fleet with few distinct machines.
  const fs::path dir = tmp / "machines";
  std::size_t twins_distinct = 0;
  if (twins > 0) {
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
  }

  // Interleaved rounds: one machine (the baseline), the fleet, the twins, so that the load of the
  // cores weighs on each alike. Wall and CPU time (all threads) of each.
  std::vector<double> one, one_cpu, all, all_cpu, twins_wall, twins_cpu, twins_load;
  std::string one_outcome;
  std::size_t reads = 0, resolved = 0, twins_resolves = 0, twins_resolved = 0;
  double twins_rss = 0;
  auto timed = [](std::vector<double>& wall, std::vector<double>& cpu, auto&& run) {
    const double c0 = cpu_seconds();
    const auto t0 = Clock::now();
    auto out = run();
    wall.push_back(seconds_since(t0));
    cpu.push_back(cpu_seconds() - c0);
    return out;
  };
  auto count_resolved = [](const api::FleetResult& f) {
    return static_cast<std::size_t>(std::count_if(f.machines.begin(), f.machines.end(), [](const auto& m) {
      return m.resolution && m.resolution->ok();
    }));
  };
  for (int r = 0; r < reps; ++r) {
    {
      auto req = request_for(opts.out, names);
      req.machine = h100();
      const auto res = timed(one, one_cpu, [&] { return api::resolve(req); });
      if (res.error) throw std::runtime_error("one: " + res.error->message);
      one_outcome = res.resolution && res.resolution->ok() ? "resolved" : "unresolved";
    }
    if (r < fleet_reps) {
      const auto req = request_for(opts.out, names);
      const auto res = timed(all, all_cpu, [&] { return api::resolve_fleet(req, fleet); });
      if (res.error) throw std::runtime_error("fleet: " + res.error->message);
      reads = res.index_reads;
      resolved = count_resolved(res);
    }
    if (twins > 0 && r < twins_reps) {
      const auto t0 = Clock::now();
      auto loaded = api::load_fleet(dir.string());
      twins_load.push_back(seconds_since(t0));
      if (!loaded) throw std::runtime_error("twins: " + loaded.error().message);
      const auto req = request_for(opts.out, names);
      const auto res = timed(twins_wall, twins_cpu, [&] { return api::resolve_fleet(req, *loaded); });
      if (res.error) throw std::runtime_error("twins: " + res.error->message);
      twins_rss = max_rss_mb();  // the results still held: the peak of the process so far
      twins_resolves = res.resolves;
      twins_resolved = count_resolved(res);
    }
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

  const double one_ms = median(one) * 1e3, one_cpu_ms = median(one_cpu) * 1e3;
  std::printf("one machine (H100, %zu packages, %s): %.1f ms, CPU %.1f ms (median of %d)\n", names.size(), one_outcome.c_str(),
              one_ms, one_cpu_ms, reps);
  if (!all.empty()) {
    const double fleet_ms = median(all) * 1e3;
    std::printf("fleet of %zu: %.1f ms, CPU %.1f ms (median of %zu), %.1f ms a machine, %zu index read(s), %zu of %zu resolved\n",
                fleet.size(), fleet_ms, median(all_cpu) * 1e3, all.size(), fleet_ms / static_cast<double>(fleet.size()), reads,
                resolved, fleet.size());
    if (singles_too) std::printf("%zu single resolves one after another: %.1f ms\n", fleet.size(), singles * 1e3);
    std::printf("fleet / one machine: %.2fx (CPU %.2fx; goal at most 6x: %s)", fleet_ms / one_ms,
                median(all_cpu) * 1e3 / one_cpu_ms, fleet_ms / one_ms <= 6 ? "met" : "NOT met");
    if (singles_too) std::printf("; singles / fleet: %.2fx", singles * 1e3 / fleet_ms);
    std::printf("\n");
  }
  if (!twins_wall.empty()) {
    const double twins_ms = median(twins_wall) * 1e3, load_ms = median(twins_load) * 1e3;
    std::printf("twins: %zu profile files (%zu distinct): load_fleet %.1f ms, resolve_fleet %.1f ms, CPU %.1f ms (median of %zu; "
                "%zu resolves run, %zu of %zu resolved); max RSS %.0f MB (goal at most 300 MB: %s)\n",
                twins, twins_distinct, load_ms, twins_ms, median(twins_cpu) * 1e3, twins_wall.size(), twins_resolves,
                twins_resolved, twins, twins_rss, twins_rss <= 300 ? "met" : "NOT met");
    std::printf("twins / one machine: %.2fx resolve (CPU %.2fx), %.2fx with load_fleet (goal at most 3x: %s)\n",
                twins_ms / one_ms, median(twins_cpu) * 1e3 / one_cpu_ms, (twins_ms + load_ms) / one_ms,
                twins_ms / one_ms <= 3 ? "met" : "NOT met");
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return 0;
}
