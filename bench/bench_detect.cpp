// bench_detect: the wall time of `wheelfit detect --json` with a cold and a warm interpreter
// cache, next to starting the same interpreter with `-c pass`, all measured in the same run,
// interleaved (one of each per round), every process started the same way (posix_spawn, pipes).
// Plain std::chrono, no framework.
//
//   build/bench/bench_detect [--reps N] [--python PATH] [--wheelfit PATH]
//
// --python defaults to python3 on PATH, resolved to the interpreter it really runs (a pyenv shim
// is a wrapper that wheelfit does not cache, so it is measured as what it starts).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "bench_args.hpp"
#include "wheelfit/machine/interpreter.hpp"
#include "wheelfit/util/subprocess.hpp"

namespace fs = std::filesystem;
namespace wm = wheelfit::machine;
namespace bench = wheelfit::bench;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}
double minimum(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

[[noreturn]] void die(const std::string& message) {
  std::cerr << "bench_detect: " << message << "\n";
  std::exit(1);
}

// User + system CPU time of the reaped children (and theirs), in ms.
double children_cpu_ms() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

struct Sample {
  double wall_ms, cpu_ms;
};

// Runs argv once; returns its wall time and its (and its children's) CPU time. `check` sees
// stdout (and may die).
Sample timed(const std::vector<std::string>& argv, const std::function<void(const std::string&)>& check = {}) {
  const double cpu0 = children_cpu_ms();
  const auto start = Clock::now();
  auto r = wheelfit::util::run_process(argv, std::chrono::milliseconds(60000));
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const double cpu = children_cpu_ms() - cpu0;
  if (!r) die(r.error().message);
  if (!r->exited_ok()) die(argv[0] + " " + r->describe(std::chrono::milliseconds(60000)) + ": " + r->err);
  if (check) check(r->out);
  return {ms, cpu};
}

struct Series {
  std::string label;
  std::vector<double> ms, cpu;
  void add(Sample s) {
    ms.push_back(s.wall_ms);
    cpu.push_back(s.cpu_ms);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  std::string python = "python3";
  std::string wheelfit = WHEELFIT_EXE;
  bench::parse_args("bench_detect", argc, argv,
                    {{"--reps", [&](const std::string& v) { reps = bench::at_least_one(v); }},
                     {"--python", [&](const std::string& v) { python = v; }},
                     {"--wheelfit", [&](const std::string& v) { wheelfit = v; }}},
                    "--reps N, --python PATH, --wheelfit PATH");

  // The interpreter that `python` really runs.
  const char* path_env = std::getenv("PATH");
  auto found = wm::find_interpreter(python, path_env ? path_env : "");
  if (!found) die(found.error().message);
  auto info = wm::query_interpreter(*found, std::chrono::milliseconds(30000));
  if (!info) die(info.error().message);
  const std::string py = info->executable.empty() ? *found : info->executable;

  // A private cache folder: cold = emptied before the run, warm = kept from the previous run.
  char tmpl[] = "/tmp/wheelfit-bench-detect-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) die("cannot create a temporary folder");
  const fs::path root(tmpl);
  const fs::path cold_cache = root / "cold", warm_cache = root / "warm";
  ::unsetenv("WHEELFIT_OVERRIDE_PYTHON");
  ::unsetenv("WHEELFIT_OVERRIDE_TORCH");

  const std::vector<std::string> detect = {wheelfit, "detect", "--json", "--python", py};
  auto expect_cached = [](bool cached) {
    return [cached](const std::string& out) {
      const bool says = out.find("\"cached\":true") != std::string::npos;
      if (says != cached) die(std::string("detect ") + (cached ? "did not answer from" : "answered from") + " the cache: " + out);
    };
  };
  auto with_cache = [](const fs::path& dir, const std::function<Sample()>& run) {
    ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
    return run();
  };

  // Warm-up (page cache, the warm entry).
  timed({py, "-c", "pass"});
  with_cache(warm_cache, [&] { return timed(detect); });

  Series pass{"python -c pass", {}, {}}, pass_is{"python -I -S -c pass", {}, {}}, version{"wheelfit version (start only)", {}, {}},
      cold{"wheelfit detect --json, cold cache", {}, {}}, warm{"wheelfit detect --json, warm cache", {}, {}},
      no_py{"wheelfit detect --json, python+torch overridden", {}, {}};
  for (int i = 0; i < reps; ++i) {
    pass.add(timed({py, "-c", "pass"}));
    pass_is.add(timed({py, "-I", "-S", "-c", "pass"}));
    version.add(timed({wheelfit, "version"}));
    std::error_code ec;
    fs::remove_all(cold_cache, ec);
    cold.add(with_cache(cold_cache, [&] { return timed(detect, expect_cached(false)); }));
    warm.add(with_cache(warm_cache, [&] { return timed(detect, expect_cached(true)); }));
    ::setenv("WHEELFIT_OVERRIDE_PYTHON", "3.12", 1);
    ::setenv("WHEELFIT_OVERRIDE_TORCH", "", 1);
    no_py.add(timed(detect));
    ::unsetenv("WHEELFIT_OVERRIDE_PYTHON");
    ::unsetenv("WHEELFIT_OVERRIDE_TORCH");
  }
  std::error_code ec;
  fs::remove_all(root, ec);

  std::string version_text;
  for (int n : info->version) version_text += (version_text.empty() ? "" : ".") + std::to_string(n);
  std::printf("detect benchmark: %d rounds, interleaved; interpreter %s (%s %s); wheelfit %s\n\n", reps, py.c_str(),
              info->implementation.c_str(), version_text.c_str(), wheelfit.c_str());
  std::printf("%-50s %11s %10s %13s\n", "", "wall median", "wall min", "CPU median");
  for (const auto* s : {&pass, &pass_is, &version, &cold, &warm, &no_py}) {
    std::printf("%-50s %8.1f ms %7.1f ms %10.1f ms\n", s->label.c_str(), median(s->ms), minimum(s->ms), median(s->cpu));
  }
  const double cold_extra = median(cold.ms) - median(pass.ms);
  const double warm_total = median(warm.ms);
  std::printf("\n%-50s %+7.1f ms  (goal < 20 ms: %s)\n", "cold detect - python -c pass", cold_extra,
              cold_extra < 20.0 ? "met" : "NOT met");
  std::printf("%-50s %+7.1f ms\n", "cold detect - python -I -S -c pass", median(cold.ms) - median(pass_is.ms));
  std::printf("%-50s %7.1f ms  (goal < 5 ms: %s)\n", "warm detect (no interpreter started)", warm_total,
              warm_total < 5.0 ? "met" : "NOT met");
  std::printf("%-50s %+7.1f ms\n", "warm detect - wheelfit version", warm_total - median(version.ms));
  std::printf("%-50s %+7.1f ms\n", "warm detect - detect without the interpreter", warm_total - median(no_py.ms));
  return 0;
}
