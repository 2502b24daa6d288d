// bench_resolve: index parse throughput and resolve time on a full-grid synthetic farm.
//
// Generates the farm (the real package list, topped up with synthetic packages to 44) into a
// temp dir with the farm generator, then prints each figure next to a baseline measured in the
// same run:
//   1. parse_simple_html over every page body held in memory (best of several reps), next to a
//      bare memchr '<a ' scan and a std::regex wheel-name scan (the predecessor's approach).
//      Goal: >= 1 GB/s on one core.
//   2. read_index (file transport) + resolve::resolve for 1, 10 and 44 packages on an H100
//      machine, a fresh snapshot per rep (median), next to just opening and reading the same
//      files (each package page + packages.json). Goal: 44 packages within 2x of the reads.
//
//   bench_resolve [--reps N] [--keep DIR] [--only parse|resolve]
//     --reps N      repetitions for the resolve medians (default 21)
//     --keep DIR    generate the farm into DIR and leave it there (default: a temp dir, removed)
//     --only PART   run one part (for profiling: perf record bench_resolve --only parse)

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bench_args.hpp"
#include "support/backend_support.hpp"
#include "farmgen.hpp"
#include "wheelfit/config/workspace.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

volatile std::size_t g_sink = 0;  // keeps the measured work observable

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

using bench::best_of;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct PageBody {
  std::string url;
  std::string body;
};

std::string slurp(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + p.string());
  struct stat st {};
  ::fstat(fd, &st);
  std::string s(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < s.size()) {
    const ssize_t n = ::read(fd, s.data() + got, s.size() - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  s.resize(got);
  return s;
}

// The reference machine: the H100 profile the README's demo uses.
machine::Machine h100() {
  auto m = machine::load_machine_profile(WHEELFIT_SOURCE_DIR "/examples/machines/x86_64-h100-cu128.toml");
  if (!m) throw std::runtime_error(m.error().message);
  return std::move(*m);
}

config::Workspace workspace(const std::vector<std::string>& names) {
  std::string text = "[cuda]\npackages = [";
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", \"" : "\"") + names[i] + "\"";
  text += "]\n";
  auto env = config::parse_env_config(text, "bench/comfy-env.toml");
  if (!env) throw std::runtime_error(env.error().message);
  config::Workspace ws;
  ws.envs.push_back(std::move(*env));
  return ws;
}

const char* status_name(resolve::TierOutcome::Status s) {
  switch (s) {
    case resolve::TierOutcome::Status::resolved: return "resolved";
    case resolve::TierOutcome::Status::failed: return "failed";
    case resolve::TierOutcome::Status::skipped: return "skipped";
    case resolve::TierOutcome::Status::set_aside: return "set_aside";
  }
  return "?";
}

// 1. parse_simple_html throughput over every page of the farm, held in memory.
void bench_parse(const fs::path& farm_dir, const std::string& base, int parse_reps, bool with_regex) {
  std::vector<PageBody> pages;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(farm_dir))
    if (e.is_regular_file() && e.path().filename() == "index.html") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::size_t total = 0;
  std::size_t biggest = 0;
  for (const auto& f : files) {
    const std::string rel = fs::relative(f.parent_path(), farm_dir).generic_string();
    pages.push_back({base + (rel == "." ? "" : rel + "/"), slurp(f)});
    total += pages.back().body.size();
    biggest = std::max(biggest, pages.back().body.size());
  }
  const double mb = static_cast<double>(total) / 1e6;
  std::printf("\n1. index parse throughput: %zu pages, %.2f MB of HTML (largest page %.1f KB), one core\n",
              pages.size(), mb, static_cast<double>(biggest) / 1e3);

  std::size_t links = 0;
  const double t_parse = best_of(parse_reps, [&] {
    std::size_t n = 0;
    for (const auto& p : pages) {
      auto r = index::parse_simple_html(p.body, p.url);
      if (!r) throw std::runtime_error(r.error().message);
      n += r->links.size();
    }
    links = n;
    g_sink = g_sink + n;
  });
  std::size_t a_tags = 0;
  const double t_memchr = best_of(parse_reps, [&] {
    std::size_t n = 0;
    for (const auto& p : pages) {
      const char* s = p.body.data();
      const char* end = s + p.body.size();
      while (s < end) {
        const void* hit = std::memchr(s, '<', static_cast<std::size_t>(end - s));
        if (!hit) break;
        s = static_cast<const char*>(hit) + 1;
        if (end - s >= 2 && s[0] == 'a' && s[1] == ' ') ++n;
      }
    }
    a_tags = n;
    g_sink = g_sink + n;
  });

  auto row = [&](const std::string& what, double t, const std::string& note) {
    std::printf("   %-36s %9.1f MB/s %7.3f GB/s %9.2f ms   %s\n", what.c_str(), mb / t, mb / t / 1e3, t * 1e3,
                note.c_str());
  };
  const std::string reps_label = " (best of " + std::to_string(parse_reps) + ")";
  row("parse_simple_html" + reps_label, t_parse, std::to_string(links) + " links");
  row("memchr '<a ' scan" + reps_label, t_memchr, std::to_string(a_tags) + " '<a ' tags (baseline: bare scan)");
  std::printf("   parse_simple_html is %.1fx slower than the bare scan", t_parse / t_memchr);

  if (with_regex) {
    // The predecessor's approach: a regex for wheel file names over the whole page.
    const std::regex wheel_re(R"([A-Za-z0-9_.+-]+\.whl)");
    std::size_t hits = 0;
    auto scan = [&] {
      std::size_t n = 0;
      for (const auto& p : pages)
        for (auto it = std::sregex_iterator(p.body.begin(), p.body.end(), wheel_re); it != std::sregex_iterator(); ++it)
          ++n;
      hits = n;
      g_sink = g_sink + n;
    };
    const double t_regex = best_of(2, scan);
    std::printf(" and %.1fx faster than the regex scan\n", t_regex / t_parse);
    row("std::regex [A-Za-z0-9_.+-]+\\.whl (best of 2)", t_regex, std::to_string(hits) + " matches (baseline: predecessor)");
  } else {
    std::printf("\n");
  }
  std::printf("   goal >= 1 GB/s on one core: %s (%.3f GB/s)\n", mb / t_parse >= 1000.0 ? "met" : "NOT met",
              mb / t_parse / 1e3);
}

// 2. read_index + resolve for 1, 10 and 44 packages, next to reading the same files.
void bench_resolve(const fs::path& farm_dir, const std::string& base, const semantics::Policy& policy, int reps) {
  const machine::Machine machine = h100();
  std::vector<std::string> all_names;
  for (const auto& p : farmgen::select_packages(farmgen::builtin_packages(), 44)) all_names.push_back(p.index_name);
  {
    const auto pj = slurp(farm_dir / "packages.json");
    const double t_pj = best_of(5, [&] {
      auto r = index::parse_packages_json(pj, "packages.json");
      g_sink = g_sink + (r ? r->packages.size() : 0);
    });
    std::printf("\n2. resolve, H100 x86_64 py3.12 torch 2.8.0+cu128, file transport, median of %d reps "
                "(fresh transport + snapshot each)\n   packages.json: %.2f MB; parse_packages_json alone: %.2f ms "
                "(%.0f MB/s)\n",
                reps, static_cast<double>(pj.size()) / 1e6, t_pj * 1e3, static_cast<double>(pj.size()) / 1e6 / t_pj);
  }
  std::printf("   %-4s %12s %12s %12s %14s %8s   %s\n", "pkgs", "read_index", "resolve", "total", "read files",
              "ratio", "outcome");
  for (const std::size_t n : {std::size_t{1}, std::size_t{10}, std::size_t{44}}) {
    const std::vector<std::string> names(all_names.begin(), all_names.begin() + static_cast<std::ptrdiff_t>(n));
    const auto ws = workspace(names);
    std::vector<double> t_read, t_res, t_total, t_files;
    std::string outcome;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      auto transport = transports::make_file_transport();
      const auto snap = index::read_index(*transport, base, names);
      const auto t1 = Clock::now();
      auto res = resolve::resolve({ws, machine, policy, snap, "cuda"});
      const auto t2 = Clock::now();
      if (!res) throw std::runtime_error(res.error().message);
      t_read.push_back(std::chrono::duration<double>(t1 - t0).count());
      t_res.push_back(std::chrono::duration<double>(t2 - t1).count());
      t_total.push_back(std::chrono::duration<double>(t2 - t0).count());
      if (r == 0) {
        if (res->ok()) {
          outcome = "resolved, tier " + *res->tier + ", " + policy.combo_str(*res->combo) + ", " +
                    std::to_string(res->picks.size()) + " picks";
        } else {
          outcome = "unresolved (tier 1 " + std::string(status_name(res->tiers[0].status)) + ", tier 2 " +
                    status_name(res->tiers[1].status) + ")";
        }
      }
      // Baseline: open + read the same files (packages.json and each package page).
      const auto f0 = Clock::now();
      std::size_t bytes = slurp(farm_dir / "packages.json").size();
      for (const auto& name : names) bytes += slurp(farm_dir / name / "index.html").size();
      t_files.push_back(seconds_since(f0));
      g_sink = g_sink + bytes;
    }
    const double total_ms = median(t_total) * 1e3, files_ms = median(t_files) * 1e3;
    std::printf("   %-4zu %9.2f ms %9.2f ms %9.2f ms %11.2f ms %7.1fx   %s\n", n, median(t_read) * 1e3,
                median(t_res) * 1e3, total_ms, files_ms, total_ms / files_ms, outcome.c_str());
    if (n == 44)
      std::printf("   goal: 44-package resolve within 2x of reading its files: %s\n",
                  total_ms <= 2 * files_ms ? "met" : "NOT met");
  }
}

// Issue 14's goal: advice for a machine where both tiers fail costs at most 2x the failing
// resolve without it. A GTX 1080 (sm 6.1) with torch 2.8.0+cu128: tier 1 and the fallback fail.
void bench_advice(const std::string& base, const semantics::Policy& policy, int reps) {
  machine::Machine machine = h100();
  if (auto r = machine::set_fact(machine, "gpus", "6.1", "bench"); !r) throw std::runtime_error(r.error().message);
  std::vector<std::string> names;
  for (const auto& p : farmgen::select_packages(farmgen::builtin_packages(), 44)) names.push_back(p.index_name);
  const auto ws = workspace(names);
  auto transport = transports::make_file_transport();
  const auto snap = index::read_index(*transport, base, names);
  std::vector<double> without, with;
  std::size_t searched = 0, suggestions = 0, misses = 0;
  for (int r = 0; r < reps; ++r) {
    for (const bool advise : {false, true}) {
      resolve::Inputs in{ws, machine, policy, snap, "cuda"};
      in.advise = advise;
      const auto t0 = Clock::now();
      auto res = resolve::resolve(in);
      (advise ? with : without).push_back(seconds_since(t0));
      if (!res || res->ok()) throw std::runtime_error("bench_advice: expected both tiers to fail");
      if (advise && res->advice) {
        searched = res->advice->combos_searched;
        suggestions = res->advice->suggestions.size();
        misses = res->advice->near_misses.size();
      }
    }
  }
  const double a = median(without) * 1e3, b = median(with) * 1e3;
  std::printf("\n3. advice: 44 packages, GTX 1080 (sm 6.1) torch 2.8.0+cu128, both tiers fail; median of %d reps\n"
              "   resolve without advice %.2f ms, with advice %.2f ms: %.2fx (%zu combos searched, %zu suggestions, "
              "%zu near misses)\n   goal: advice at most 2x the failing resolve: %s\n",
              reps, a, b, b / a, searched, suggestions, misses, b <= 2 * a ? "met" : "NOT met");
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  std::string keep, only;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--keep" && i + 1 < argc) {
      keep = argv[++i];
    } else if (a == "--only" && i + 1 < argc && (std::string_view(argv[i + 1]) == "parse" ||
                                                 std::string_view(argv[i + 1]) == "resolve")) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_resolve [--reps N] [--keep DIR] [--only parse|resolve]\n");
      return 2;
    }
  }

  // --- the farm ---------------------------------------------------------------------------------
  fs::path tmp_root;
  fs::path farm_dir;
  if (keep.empty()) {
    std::string templ = (fs::temp_directory_path() / "wheelfit-bench-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
      std::perror("mkdtemp");
      return 1;
    }
    tmp_root = templ;
    farm_dir = tmp_root / "farm";
  } else {
    farm_dir = keep;
  }
  const auto& policy = test::cuda_policy();
  farmgen::FarmOptions opts;
  opts.out = farm_dir;
  opts.packages = 44;
  auto t_gen0 = Clock::now();
  auto stats = farmgen::generate_farm(opts, policy);
  const double t_gen = seconds_since(t_gen0);
  if (!stats) {
    std::fprintf(stderr, "bench_resolve: %s\n", stats.error().message.c_str());
    return 1;
  }
  std::printf("farm: %zu packages, %zu wheels, %zu anchors, %zu pages, %.1f MB, generated in %.2f s (%s)\n",
              stats->packages, stats->wheels, stats->anchors, stats->pages, static_cast<double>(stats->bytes) / 1e6,
              t_gen, farm_dir.c_str());

  const std::string base = transports::to_url(farm_dir.string(), true);
  if (only != "resolve") bench_parse(farm_dir, base, only.empty() ? 9 : 60, /*with_regex=*/only.empty());
  if (only != "parse") bench_resolve(farm_dir, base, policy, reps);
  if (only != "parse") bench_advice(base, policy, reps);

  if (!tmp_root.empty()) {
    std::error_code ec;
    fs::remove_all(tmp_root, ec);
  }
  return 0;
}
