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
//   print    (issue 31) --print profile files as the twins' (machine k the fleet's k % --distinct),
//            asking for 40 packages (the 4 no machine fits left out: 117 of the 300 unresolved, their
//            rows every candidate's verdict): `resolve --machines --json` and its report, each in a
//            process of its own (this program again) so that its peak RSS and CPU time are its
//            own: load_fleet + resolve_fleet alone (the baseline), then + the JSON written to
//            /dev/null as the CLI writes it, + the report; with --held also json() made whole
//            first (what the CLI did before)
// and prints fleet / one (goal: at most 6x), singles / fleet and twins / one (goal: at most 3x,
// at most 300 MB RSS), each from the medians, and the printed fleet's figures (goal: at most 1 GB).
//
//   bench_fleet [--machines N] [--reps N] [--fleet-reps N] [--twins-reps N] [--no-singles] [--twins N] [--distinct N]
//               [--packages N] [--print N] [--print-reps N] [--held] [--cap-gb N]
//     --reps N      rounds (default 5); --fleet-reps / --twins-reps: rounds with the fleet (5) / the twins (3)
//     --no-singles  skip the 50 single resolves (for profiling the fleet: perf record bench_fleet --no-singles)
//     --twins N     profiles of the twins fleet (default 10000; 0 skips it); --distinct N: its distinct ones (300)
//     --packages N  every machine asks for the first N of the farm's 44 packages (default 44)
//     --print N     profiles of the printed fleet (default 10000; 0 skips it); --print-reps N: runs of each case (1);
//                   --held: the held case too; --cap-gb N: each case's address space (default 8), a case past it
//                   says "out of memory" (the old code's held JSON of 10,000 rows runs to tens of GB)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_farm.hpp"
#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/transports/register.hpp"
#include "wheelfit/api.hpp"

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

std::vector<std::string> package_names(std::size_t packages) {
  std::vector<std::string> names;
  for (const auto& p : farmgen::select_packages(farmgen::builtin_packages(), packages)) names.push_back(p.index_name);
  return names;
}

// The printed fleet's packages: the farm's 44 but the four no machine of the fleet fits (so that
// about a third of the 300 distinct machines are unresolved, the others resolved).
std::vector<std::string> printed_packages() {
  auto names = package_names(44);
  std::erase_if(names, [](const std::string& n) { return n == "nunchaku" || n == "sageattn3" || n == "torchao" || n == "vllm"; });
  return names;
}

// `count` profile files in `dir`, file k machine k % distinct; how many distinct they hold.
std::size_t write_profiles(const fs::path& dir, std::size_t count, std::size_t distinct,
                           machine::Machine (*machine_k)(std::size_t)) {
  fs::create_directories(dir);
  std::set<std::string> seen;
  for (std::size_t k = 0; k < count; ++k) {
    const std::string facts = machine::to_json(machine_k(k % distinct));
    seen.insert(facts);
    char name[32];
    std::snprintf(name, sizeof name, "m%05zu.json", k);
    std::ofstream(dir / name) << facts;
  }
  return seen.size();
}

// One case of the printed fleet, in this process (started by run_case): "resolve" (the
// baseline), "json" / "report" (written to /dev/null piece by piece, as the CLI writes them) or
// "json-held" (json() made whole, then written). Prints "rows unresolved resolves bytes".
int print_child(const std::string& which, const fs::path& farm, const fs::path& dir) {
  try {
    auto loaded = api::load_fleet(dir.string());
    if (!loaded) throw std::runtime_error(loaded.error().message);
    const auto res = api::resolve_fleet(bench::farm_request(farm, printed_packages()), *loaded);
    if (res.error) throw std::runtime_error(res.error->message);
    std::FILE* null = std::fopen("/dev/null", "w");
    unsigned long long bytes = 0;
    const api::TextSink sink = [&](std::string_view piece) {
      bytes += piece.size();
      std::fwrite(piece.data(), 1, piece.size(), null);
    };
    if (which == "json") res.write_json(sink);
    else if (which == "report") res.write_report(sink);
    else if (which == "json-held") sink(res.json());
    else if (which != "resolve") throw std::runtime_error("no case " + which);
    std::fclose(null);
    const auto unresolved = std::count_if(res.machines.begin(), res.machines.end(), [](const auto& m) {
      return m.exit_code == api::kExitUnresolved;
    });
    std::printf("%zu %zu %zu %llu\n", res.machines.size(), static_cast<std::size_t>(unresolved), res.resolves, bytes);
    return 0;
  } catch (const std::bad_alloc&) {
    std::printf("out of memory\n");
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
  }
  return 1;
}

// What one case's process did and cost.
struct CaseRun {
  std::string said;  // its line: "rows unresolved resolves bytes", or why it failed
  double wall_s = 0, cpu_s = 0, rss_mb = 0;
};

// This program again, as `--child which`, its address space capped at `cap_gb`; its peak RSS and
// CPU time from wait4.
CaseRun run_case(const std::string& which, const fs::path& farm, const fs::path& dir, double cap_gb) {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    const rlimit cap{static_cast<rlim_t>(cap_gb * 1024 * 1024 * 1024), static_cast<rlim_t>(cap_gb * 1024 * 1024 * 1024)};
    ::setrlimit(RLIMIT_AS, &cap);
    ::execl("/proc/self/exe", "bench_fleet", "--child", which.c_str(), farm.c_str(), dir.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  CaseRun run;
  char buf[256];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) run.said.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  rusage u{};
  ::wait4(pid, &status, 0, &u);
  run.wall_s = seconds_since(t0);
  run.cpu_s = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  run.rss_mb = static_cast<double>(u.ru_maxrss) / 1024.0;
  while (!run.said.empty() && run.said.back() == '\n') run.said.pop_back();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) run.said = "failed (" + (run.said.empty() ? "killed" : run.said) + ")";
  return run;
}

// The printed fleet's cases, each run `reps` times (the medians printed), next to its baseline
// (resolve alone) and the one machine's median.
void print_cases(const fs::path& farm, const fs::path& dir, int reps, bool held, double cap_gb, double one_ms) {
  std::vector<std::string> cases = {"resolve", "json", "report"};
  if (held) cases.push_back("json-held");
  std::map<std::string, std::vector<CaseRun>> runs;
  for (int r = 0; r < reps; ++r)
    for (const auto& c : cases) runs[c].push_back(run_case(c, farm, dir, cap_gb));
  auto med = [&runs](const std::string& c, double CaseRun::*field) {
    std::vector<double> v;
    for (const auto& run : runs[c]) v.push_back(run.*field);
    return median(v);
  };
  std::printf("printed fleet (rows unresolved resolves bytes: %s)\n", runs["json"].back().said.c_str());
  const double base_ms = med("resolve", &CaseRun::wall_s) * 1e3, base_rss = med("resolve", &CaseRun::rss_mb);
  for (const auto& c : cases) {
    const double ms = med(c, &CaseRun::wall_s) * 1e3, rss = med(c, &CaseRun::rss_mb);
    std::printf("  %-9s %9.0f ms (+%.0f), CPU %9.0f ms, max RSS %6.0f MB (+%.0f); %.2fx one machine; RSS at most 1 GB: %s%s\n",
                c.c_str(), ms, ms - base_ms, med(c, &CaseRun::cpu_s) * 1e3, rss, rss - base_rss, ms / one_ms,
                rss <= 1024 ? "met" : "NOT met", runs[c].back().said.starts_with("failed") ? ("; " + runs[c].back().said).c_str() : "");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (auto done = wheelfit::transports::register_transports(wheelfit::net::default_registry()); !done) return 70;
  if (auto done = wheelfit::policies::register_format(); !done) return 70;
  if (argc == 5 && std::string(argv[1]) == "--child") return print_child(argv[2], argv[3], argv[4]);  // run_case
  std::size_t machines = 50;
  int reps = 5, fleet_reps = 5, twins_reps = 3;
  bool singles_too = true, held = false;
  std::size_t twins = 10000, distinct = 300, packages = 44, printed = 10000;
  int print_reps = 1;
  double cap_gb = 8;
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
    else if (a == "--print" && i + 1 < argc) printed = static_cast<std::size_t>(std::max(0, std::atoi(argv[++i])));
    else if (a == "--print-reps" && i + 1 < argc) print_reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--held") held = true;
    else if (a == "--cap-gb" && i + 1 < argc) cap_gb = std::max(1.0, std::atof(argv[++i]));
    else {
      std::fprintf(stderr, "usage: bench_fleet [--machines N] [--reps N] [--fleet-reps N] [--no-singles] [--twins N] "
                           "[--distinct N] [--packages N] [--twins-reps N] [--print N] [--print-reps N] [--held] [--cap-gb N]\n");
      return 2;
    }
  }
  const auto made = bench::temp_farm("bench-fleet");
  if (!made) return 1;
  const fs::path tmp = made->tmp;
  const auto stats = &made->stats;
  const fs::path farm_dir = made->farm;
  const std::vector<std::string> names = package_names(packages);
  std::vector<api::FleetMachine> fleet;
  for (std::size_t k = 0; k < machines; ++k) fleet.push_back(fleet_machine(k));
  std::printf("farm: %zu packages, %zu wheels, %zu pages; fleet: %zu machines; %u hardware threads\n", stats->packages,
              stats->wheels, stats->pages, fleet.size(), std::max(1u, std::thread::hardware_concurrency()));

  // The twins' profile files: a large fleet with few distinct machines.
  const fs::path dir = tmp / "machines";
  const std::size_t twins_distinct =
      twins > 0 ? write_profiles(dir, twins, distinct, [](std::size_t j) { return fleet_machine(j).machine; }) : 0;
  const fs::path print_dir = tmp / "printed";
  const std::size_t print_distinct =
      printed > 0 ? write_profiles(print_dir, printed, distinct, [](std::size_t j) { return fleet_machine(j).machine; }) : 0;

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
      auto req = bench::farm_request(farm_dir, names);
      req.machine = h100();
      const auto res = timed(one, one_cpu, [&] { return api::resolve(req); });
      if (res.error) throw std::runtime_error("one: " + res.error->message);
      one_outcome = res.resolution && res.resolution->ok() ? "resolved" : "unresolved";
    }
    if (r < fleet_reps) {
      const auto req = bench::farm_request(farm_dir, names);
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
      const auto req = bench::farm_request(farm_dir, names);
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
    auto req = bench::farm_request(farm_dir, names);
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
  if (printed > 0) {
    std::printf("printed fleet: %zu profile files (%zu distinct), %zu packages, each case in its own process (median of %d):\n",
                printed, print_distinct, printed_packages().size(), print_reps);
    print_cases(farm_dir, print_dir, print_reps, held, cap_gb, one_ms);
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return 0;
}
