// bench_mirror: what a `wheelfit mirror` re-run costs when nothing changed upstream, next to a
// fleet resolve of the same machines (the baseline, same run) and to a re-run that must read
// every pool file again (the digest records removed: what every re-run did before issue 21).
// A farm generated with real wheels (wheelfit-farmgen --with-files), the fleet's picked wheels
// made large (--size-mb each), a fleet of profiles on several combos; the built CLI timed with
// posix_spawn, median of --reps, interleaved. Plain std::chrono, no framework.
// Then `mirror --with-torch` for --twins identical machines next to one machine (the baseline,
// same run), with --torch-links links on each torch page (issue 31 item 11), and the same two
// without --with-torch. --section rerun|torch runs one of the two.
//
//   build/bench/bench_mirror [--reps N] [--size-mb N] [--twins N] [--torch-links N] [--section all|rerun|torch]
//                            [--wheelfit PATH] [--farmgen PATH]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <boost/json.hpp>

#include "bench_args.hpp"
#include "wheelfit/deliver/download.hpp"
#include "zip_writer.hpp"
#include "wheelfit/util/subprocess.hpp"

namespace fs = std::filesystem;
namespace bench = wheelfit::bench;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string& message) {
  std::cerr << "bench_mirror: " << message << "\n";
  std::exit(1);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

std::string run(const std::vector<std::string>& argv, double* ms = nullptr) {
  const auto start = Clock::now();
  auto r = wheelfit::util::run_process(argv, std::chrono::milliseconds(600000));
  if (ms) *ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!r) die(r.error().message);
  if (!r->exited_ok()) die(argv[1] + " " + r->describe(std::chrono::milliseconds(600000)) + ": " + r->err.substr(0, 2000));
  return r->out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A profile: x86_64 on a combo, with these GPUs.
std::string profile(const std::string& torch, const std::string& gpu, const std::string& arch = "x86_64") {
  return "os = \"linux\"\ncpu_arch = \"" + arch + "\"\nglibc = \"2.35\"\npython = \"3.12\"\ntorch = \"" + torch +
         "\"\ndriver_version = \"580.65.06\"\ncuda_driver = \"13.0\"\ngpus = [\"" + gpu + "\"]\n";
}

/// A torch index under `root` (cu128/<project>/index.html, files/): the one real file of each of
/// torch, torchvision and torchaudio an x86_64 Python 3.12 machine gets, and on each page `links`
/// decoys inside the pin that no such machine takes (aarch64), never fetched.
void write_torch_index(const fs::path& root, std::size_t links) {
  const std::vector<std::pair<std::string, std::string>> family = {
      {"torch", "2.8.1"}, {"torchvision", "0.23.0"}, {"torchaudio", "2.8.0"}};
  fs::create_directories(root / "files");
  for (const auto& [dist, version] : family) {
    const std::string file = dist + "-" + version + "+cu128-cp312-cp312-manylinux_2_28_x86_64.whl";
    spit(root / "files" / file, wheelfit::farmgen::build_zip({{dist + "-" + version + ".dist-info/METADATA",
                                                               "Metadata-Version: 2.1\nName: " + dist + "\nVersion: " + version + "\n"}}));
    std::string page = "<html><body>\n<a href=\"../../files/" + file + "#sha256=" + *wheelfit::deliver::sha256_file(root / "files" / file) +
                       "\">" + file + "</a><br>\n";
    for (std::size_t i = 0; i < links; ++i) {
      const std::string decoy = dist + "-" + version + ".post" + std::to_string(i) + "+cu128-cp312-cp312-manylinux_2_28_aarch64.whl";
      page += "<a href=\"../../files/" + decoy + "#sha256=" + std::string(64, 'a') + "\">" + decoy + "</a><br>\n";
    }
    fs::create_directories(root / "cu128" / dist);
    spit(root / "cu128" / dist / "index.html", page + "</body></html>\n");
  }
}

/// `mirror --with-torch` for `twins` identical machines next to one, and both without --with-torch.
void torch_section(const std::string& wheelfit, const std::string& farmgen, const fs::path& root, int reps, std::size_t twins,
                   std::size_t links) {
  const fs::path farm = root / "farm", config = root / "comfy-env.toml", torch = root / "torch";
  run({farmgen, "--out", farm.string(), "--with-files", "--only", "cubvh,nvdiffrast"});
  spit(config, "python = \"3.12\"\n[cuda]\npackages = [\"cubvh\", \"nvdiffrast\"]\n");
  write_torch_index(torch, links);
  const auto fleet_of = [&](std::size_t n) {
    const fs::path dir = root / ("fleet" + std::to_string(n));
    fs::create_directories(dir);
    for (std::size_t i = 0; i < n; ++i) spit(dir / ("m" + std::to_string(i) + ".toml"), profile("2.8.0+cu128", "9.0"));
    return dir;
  };
  const auto mirror = [&](std::size_t n, bool with_torch) {
    std::vector<std::string> argv = {wheelfit, "mirror", config.string(), "--machines", fleet_of(n).string(), "--index", farm.string(),
                                     "--out", (root / ("out" + std::to_string(n) + (with_torch ? "t" : ""))).string(), "--no-cache"};
    if (with_torch) argv.insert(argv.end(), {"--with-torch", "--torch-index", torch.string() + "/cu{line_nodot}"});
    return argv;
  };
  const std::vector<std::vector<std::string>> runs = {mirror(1, true), mirror(twins, true), mirror(1, false), mirror(twins, false)};
  for (const auto& argv : runs) run(argv);  // the first runs: the pools filled
  std::vector<std::vector<double>> ms(runs.size());
  for (int r = 0; r < reps; ++r) {
    for (std::size_t i = 0; i < runs.size(); ++i) run(runs[i], &ms[i].emplace_back());
  }
  const double one = median(ms[0]), plain_one = median(ms[2]);
  std::printf("bench_mirror --with-torch: %zu links on each of the 3 torch pages, %d reps, median wall ms\n", links, reps);
  std::printf("  %-58s %9.1f  (baseline)\n", "mirror --with-torch, 1 machine", one);
  std::printf("  %-58s %9.1f  %5.2fx the one machine\n", ("mirror --with-torch, " + std::to_string(twins) + " identical machines").c_str(),
              median(ms[1]), median(ms[1]) / one);
  std::printf("  %-58s %9.1f  (baseline without the torch family)\n", "mirror, 1 machine", plain_one);
  std::printf("  %-58s %9.1f  %5.2fx the one machine\n", ("mirror, " + std::to_string(twins) + " identical machines").c_str(),
              median(ms[3]), median(ms[3]) / plain_one);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::size_t size_mb = 256;
  std::string wheelfit = WHEELFIT_EXE, farmgen = FARMGEN_EXE, section = "all";
  std::size_t twins = 80, torch_links = 100000;
  bench::parse_args("bench_mirror", argc, argv,
                    {{"--reps", [&](const std::string& v) { reps = bench::at_least_one(v); }},
                     {"--size-mb", [&](const std::string& v) { size_mb = static_cast<std::size_t>(bench::at_least_one(v)); }},
                     {"--wheelfit", [&](const std::string& v) { wheelfit = v; }},
                     {"--farmgen", [&](const std::string& v) { farmgen = v; }},
                     {"--twins", [&](const std::string& v) { twins = static_cast<std::size_t>(bench::at_least_one(v)); }},
                     {"--torch-links", [&](const std::string& v) { torch_links = static_cast<std::size_t>(std::atoll(v.c_str())); }},
                     {"--section", [&](const std::string& v) { section = v; }}},
                    "--reps N, --size-mb N, --twins N, --torch-links N, --section all|rerun|torch, --wheelfit PATH, --farmgen PATH");
  if (section != "all" && section != "rerun" && section != "torch") die("--section: '" + section + "' is not all, rerun or torch");
  char tmpl[] = "/tmp/wheelfit-bench-mirror-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) die("cannot create a temporary folder");
  const fs::path root(tmpl), farm = root / "farm", fleet = root / "fleet", out = root / "mirror", config = root / "comfy-env.toml";
  ::setenv("WHEELFIT_PLUGIN_PATH", "", 1);
  if (section != "rerun") {
    torch_section(wheelfit, farmgen, root / "torch-section", reps, twins, torch_links);
    if (section == "torch") {
      std::error_code ec;
      fs::remove_all(root, ec);
      return 0;
    }
  }
  run({farmgen, "--out", farm.string(), "--with-files", "--only", "flash_attn,cumm,cubvh,nvdiffrast"});
  spit(config, "python = \"3.12\"\n[cuda]\npackages = [\"flash_attn\", \"cumm\", \"cubvh\", \"nvdiffrast\"]\n");
  fs::create_directories(fleet);
  const std::vector<std::pair<std::string, std::string>> machines = {
      {"h100", profile("2.8.0+cu128", "9.0")},       {"a100", profile("2.8.0+cu128", "8.0")},
      {"rtx5090", profile("2.9.0+cu130", "12.0")},   {"rtx4090", profile("2.7.1+cu126", "8.9")},
      {"l40s", profile("2.8.0+cu128", "8.9")},       {"gh200", profile("2.8.0+cu128", "9.0", "aarch64")}};
  for (const auto& [name, text] : machines) spit(fleet / (name + ".toml"), text);

  // The picks, made large: each picked file rewritten as --size-mb of bytes, its digest replaced
  // wherever the farm published it.
  const std::vector<std::string> resolve = {wheelfit, "resolve", config.string(), "--machines", fleet.string(), "--index",
                                            farm.string(), "--no-cache", "--json"};
  const auto doc = boost::json::parse(run(resolve));
  std::set<std::string> picked;
  for (const auto& m : doc.at("machines").as_array()) {
    for (const auto& p : m.at("packages").as_array()) picked.insert(std::string(p.at("filename").as_string()));
  }
  std::map<std::string, std::string> new_sha;  // old digest -> new
  std::string big(size_mb << 20, '\0');
  for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i * 2654435761u >> 24);
  for (const auto& e : fs::recursive_directory_iterator(farm / "releases")) {
    if (!picked.count(e.path().filename().string())) continue;
    const std::string old_sha = *wheelfit::deliver::sha256_file(e.path());
    // Still a wheel the mirror reads METADATA from: its METADATA and the bytes as a stored member.
    const std::string name = e.path().filename().string();
    const auto dash = name.find('-'), dash2 = name.find('-', dash + 1);
    const std::string dist = name.substr(0, dash), version = name.substr(dash + 1, dash2 - dash - 1);
    const std::string bytes = wheelfit::farmgen::build_zip(
        {{dist + "-" + version + ".dist-info/METADATA", "Metadata-Version: 2.1\nName: " + dist + "\nVersion: " + version + "\n"},
         {dist + "/blob.bin", big, false}});
    spit(e.path(), bytes);
    new_sha[old_sha] = *wheelfit::deliver::sha256_file(e.path());
  }
  for (const auto& e : fs::recursive_directory_iterator(farm)) {
    if (!e.is_regular_file() || e.path().extension() == ".whl") continue;
    std::string text = slurp(e.path());
    bool changed = false;
    for (const auto& [from, to] : new_sha) {
      for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
        text.replace(at, from.size(), to);
        changed = true;
      }
    }
    if (changed) spit(e.path(), text);
  }
  const std::vector<std::string> mirror = {wheelfit, "mirror", config.string(), "--machines", fleet.string(), "--index",
                                           farm.string(), "--out", out.string(), "--no-cache"};
  double first_ms = 0;
  run(mirror, &first_ms);  // the first run: every wheel downloaded (file://) and recorded
  std::vector<double> fleet_ms, rerun_ms, reread_ms;
  for (int r = 0; r < reps; ++r) {
    double ms = 0;
    run(resolve, &ms);
    fleet_ms.push_back(ms);
    run(mirror, &ms);
    rerun_ms.push_back(ms);
    for (const auto& e : fs::directory_iterator(out / "pool")) {
      if (e.path().filename().string().ends_with(".whl.sha256")) fs::remove(e.path());
    }
    run(mirror, &ms);  // reads every pool file whole (and records them again)
    reread_ms.push_back(ms);
  }
  const double base = median(fleet_ms);
  std::printf("bench_mirror: %zu machines, %zu picked wheels of %zu MiB (%zu MiB in the pool), %d reps, median wall ms\n",
              machines.size(), picked.size(), size_mb, picked.size() * size_mb, reps);
  std::printf("  %-58s %9.1f  (baseline)\n", "fleet resolve of the same machines (resolve --machines)", base);
  std::printf("  %-58s %9.1f\n", "mirror, first run (downloads everything)", first_ms);
  std::printf("  %-58s %9.1f  %5.2fx the fleet resolve (goal <= 2x)\n", "mirror re-run, nothing changed (digest records)",
              median(rerun_ms), median(rerun_ms) / base);
  std::printf("  %-58s %9.1f  %5.2fx the fleet resolve\n", "mirror re-run reading every pool file (no records)",
              median(reread_ms), median(reread_ms) / base);
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
