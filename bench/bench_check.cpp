// bench_check: `wheelfit check` of a 500-wheel lock (issue 35: at most 2x a resolve of the same
// packages), next to that resolve, measured in the same run.
//
// Generates the 44-package farm (file index), writes a pylock.toml of --wheels of its wheels (each
// by URL with its sha256, every package's, round-robin), then times, best of --reps each:
//   resolve   api::resolve of the lock's packages for one H100 (the baseline)
//   check     api::check of the lock on the same H100: the same resolve (the index read once), then
//             each entry looked up by file name, its digest and yank compared, judged on the machine
// and prints check / resolve (goal: at most 2x) and the statuses counted.
//
//   bench_check [--wheels N] [--reps N]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <boost/json.hpp>

#include "bench_args.hpp"
#include "bench_farm.hpp"
#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "wheelfit/api.hpp"
#include "wheelfit/output/locks.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

machine::Machine h100() {
  machine::Machine m;
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.35"}, {"python", "3.12"}, {"backend", "cuda"},
           {"torch", "2.8.0+cu128"}, {"driver_version", "580.65.06"}, {"driver_line", "13.0"}, {"gpus", "9.0"}}) {
    if (auto r = machine::set_fact(m, k, v, "bench"); !r) throw std::runtime_error(k + ": " + r.error().message);
  }
  return m;
}

// `wheels` of the farm's files, round-robin over its packages, as pylock.toml entries.
std::vector<output::LockedWheel> lock_entries(const fs::path& farm, std::size_t wheels, std::vector<std::string>& names) {
  std::ifstream in(farm / "packages.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto packages = json::parse(text).as_object().at("packages").as_object();
  std::vector<std::pair<std::string, const json::array*>> lists;
  for (const auto& [name, entry] : packages) lists.emplace_back(std::string(name), &entry.as_object().at("wheels").as_array());
  std::vector<output::LockedWheel> out;
  for (std::size_t round = 0; out.size() < wheels; ++round) {
    bool any = false;
    for (const auto& [name, list] : lists) {
      if (round >= list->size() || out.size() >= wheels) continue;
      any = true;
      const auto& w = (*list)[round].as_object();
      const std::string filename(w.at("filename").as_string());
      const auto wheel = model::WheelName::parse(filename);
      if (!wheel) continue;
      out.push_back({.name = name, .version = wheel->version.str(), .filename = filename, .location = std::string(w.at("url").as_string()),
                     .sha256 = std::string(w.at("sha256").as_string())});
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    if (!any) break;
  }
  return out;
}

api::ResolveRequest request_for(const fs::path& farm, const std::vector<std::string>& names) {
  api::ResolveRequest r = bench::farm_request(farm, names);
  r.machine = h100();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t wheels = 500;
  int reps = 5;
  bench::parse_args("bench_check", argc, argv,
                    {{"--wheels", [&](const std::string& v) { wheels = static_cast<std::size_t>(std::max(1, std::atoi(v.c_str()))); }},
                     {"--reps", [&](const std::string& v) { reps = bench::at_least_one(v); }}},
                    "--wheels N --reps N");
  const auto made = bench::temp_farm("bench-check");
  if (!made) return 1;
  const fs::path tmp = made->tmp;
  const auto stats = &made->stats;
  const fs::path farm_dir = made->farm;
  std::vector<std::string> names;
  const auto entries = lock_entries(farm_dir, wheels, names);
  const auto lock_text = output::pylock_toml(entries, std::string("==3.12.*"), {});
  if (!lock_text) {
    std::fprintf(stderr, "bench_check: %s\n", lock_text.error().message.c_str());
    return 1;
  }
  const fs::path lock = tmp / "pylock.toml";
  std::ofstream(lock) << *lock_text;

  api::CheckRequest check;
  check.resolve = request_for(farm_dir, {});
  check.locks = {lock.string()};
  std::map<std::string, std::size_t> counts;
  int check_code = -1;
  const double resolve_s = bench::best_of(reps, [&] {
    const auto r = api::resolve(request_for(farm_dir, names));
    if (r.error) throw std::runtime_error(r.error->message);
  });
  const double check_s = bench::best_of(reps, [&] {
    const auto r = api::check(check);
    if (r.error) throw std::runtime_error(r.error->message);
    check_code = r.exit_code;
    counts.clear();
    for (const auto& l : r.locks)
      for (const auto& e : l.entries) ++counts[std::string(api::to_string(e.status))];
  });
  std::printf("farm: %zu packages, %zu wheels; lock: %zu wheels of %zu packages\n", stats->packages, stats->wheels, entries.size(), names.size());
  std::printf("resolve (baseline)  %8.1f ms\ncheck               %8.1f ms   check / resolve = %.2fx (goal: at most 2x)\n",
              resolve_s * 1e3, check_s * 1e3, check_s / resolve_s);
  std::printf("check exit %d (the lock spans every combo the farm ships: most are not for this H100):", check_code);
  for (const auto& [status, n] : counts) std::printf(" %zu %s", n, status.c_str());
  std::printf("\n");
  fs::remove_all(tmp);
  return 0;
}
