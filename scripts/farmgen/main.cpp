// wheelfit-farmgen: writes a full-grid synthetic wheel index laid out like the cuda-wheels farm.
//
//   wheelfit-farmgen --out DIR [--backend NAME] [--packages N] [--policy FILE] [--base-url URL] [--with-files]
//
// Prints one summary line on success (exit 0). Bad arguments, an unreadable policy or an
// unwritable output exit 2 with a message naming the flag or path.

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "farmgen.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/registry/registry.hpp"
#include "wheelfit/util/native_text.hpp"

namespace {

constexpr std::string_view kUsage =
    "usage: wheelfit-farmgen --out DIR [--backend NAME] [--packages N] [--only A,B,...] [--policy FILE] [--base-url URL] [--with-files]\n"
    "  --out DIR        the index directory to write (created; an earlier farm there is replaced)\n"
    "  --packages N     how many packages (default: the built-in list of the farm's packages;\n"
    "                   more adds synthetic-pkg-K packages, fewer takes the first N)\n"
    "  --only A,B,...   only these packages of the built-in list (names as in an index or a\n"
    "                   comfy-env.toml: flash-attn or flash_attn); a name not in it is an error\n"
    "  --backend NAME   the backend plugin whose policy and label grammar the farm follows (default cuda)\n"
    "  --policy FILE    policy data replacing the backend's (the grid comes from its matrix)\n"
    "  --base-url URL   release download base (default: the backend's Releases repository on GitHub,\n"
    "                   https://github.com/Comfy-Forge/cuda-wheels for cuda; https://example.invalid/NAME-wheels\n"
    "                   for a backend without one: a synthetic farm names no real host; with --with-files,\n"
    "                   file://DIR, where the files are)\n"
    "  --with-files     also write every wheel (a real, installable wheel: zip, METADATA, WHEEL, RECORD, a small\n"
    "                   native module) under DIR/releases/download/, with its true sha256 in the pages and\n"
    "                   packages.json; serve DIR and pass its URL as --base-url to download over http\n";

int usage_error(const std::string& message) {
  std::cerr << "wheelfit-farmgen: " << message << "\n" << kUsage;
  return 2;
}

// What the command line asks.
struct Args {
  wheelfit::farmgen::FarmOptions options;
  std::optional<std::string> policy_file;
  std::string backend_name = "cuda";
  bool have_out = false, have_base = false;
};

// --only's comma-separated names, each a package of the built-in list, into `options`; a usage
// error's message, or "".
std::string choose_packages(std::string_view value, wheelfit::farmgen::FarmOptions& options) {
  using namespace wheelfit;
  std::vector<farmgen::FarmPackage> chosen;
  for (std::string_view rest = value; !rest.empty();) {
    const auto comma = rest.find(',');
    const std::string name = model::normalize_name(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto& list = farmgen::builtin_packages();
    const auto it = std::find_if(list.begin(), list.end(), [&](const farmgen::FarmPackage& p) {
      return model::normalize_name(p.index_name) == name || model::normalize_name(p.name) == name;
    });
    if (name.empty() || it == list.end()) return "--only: '" + name + "' is not a package of the built-in list";
    chosen.push_back(*it);
  }
  if (chosen.empty()) return "--only: give one or more package names, comma-separated";
  options.package_list = std::move(chosen);
  return "";
}

// One option's value into `args`; a usage error's message, or "".
std::string take_option(std::string_view flag, std::string_view value, Args& args) {
  if (flag == "--out") {
    if (value.empty()) return "--out: empty path";
    args.options.out = wheelfit::util::path_from_utf8(value);
    args.have_out = true;
  } else if (flag == "--packages") {
    std::size_t n = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || ptr != value.data() + value.size() || n == 0 || n > 100000)
      return "--packages: expected a whole number from 1 to 100000, got '" + std::string(value) + "'";
    args.options.packages = n;
  } else if (flag == "--only") {
    return choose_packages(value, args.options);
  } else if (flag == "--policy") {
    args.policy_file = std::string(value);
  } else if (flag == "--backend") {
    args.backend_name = std::string(value);
  } else {
    args.options.base_url = std::string(value);
    args.have_base = true;
  }
  return "";
}

// The command line into `args`: nullopt to go on, else the exit code (the help shown, or a usage
// error said).
std::optional<int> parse_args(const std::vector<const char*>& argv, Args& args) {
  const int argc = static_cast<int>(argv.size());
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--with-files") {
      args.options.with_files = true;
      continue;
    }
    std::string_view flag = arg, value;
    bool inline_value = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    if (flag != "--out" && flag != "--packages" && flag != "--policy" && flag != "--base-url" && flag != "--backend" &&
        flag != "--only")
      return usage_error("unknown argument '" + std::string(arg) + "'");
    if (!inline_value) {
      if (i + 1 >= argc) return usage_error(std::string(flag) + ": missing value");
      value = argv[++i];
    }
    if (const std::string why = take_option(flag, value, args); !why.empty()) return usage_error(why);
  }
  if (!args.have_out) return usage_error("--out: required");
  return std::nullopt;
}

}  // namespace

int main(int argc, char** raw_argv) {
  using namespace wheelfit;
  util::use_utf8_console();
  // The arguments as UTF-8 (on Windows from the UTF-16 command line: --out may name C:\Users\Jürgen).
  const std::vector<std::string> utf8_args = util::utf8_arguments(argc, raw_argv);
  std::vector<const char*> argv;
  for (const auto& a : utf8_args) argv.push_back(a.c_str());
  Args args;
  if (auto done = parse_args(argv, args)) return *done;
  farmgen::FarmOptions& options = args.options;

  if (auto done = policies::register_format(); !done) {
    std::cerr << "wheelfit-farmgen: " << done.error().message << "\n";
    return 70;
  }
  registry::Registry reg;
  const auto report = registry::load_plugins(reg, registry::plugin_dirs());
  if (!report.ok()) {
    std::cerr << "wheelfit-farmgen: " << report.error->message << "\n";
    return 2;
  }
  const auto* backend = reg.find(args.backend_name);
  if (!backend) return usage_error("--backend: no plugin supplies the backend '" + args.backend_name + "'");
  auto loaded = registry::make_policy(*backend, args.policy_file);
  if (!loaded) {
    std::cerr << "wheelfit-farmgen: " << (args.policy_file ? "--policy: " : "") << loaded.error().message << "\n";
    return 2;
  }
  const semantics::Policy& policy = *loaded;
  if (!args.have_base && options.with_files) {
    // The files are beside the pages: link them where they are until a server's URL is given.
    std::error_code ec;
    options.base_url = "file://" + std::filesystem::absolute(options.out, ec).lexically_normal().generic_string();
    while (options.base_url.size() > 7 && options.base_url.back() == '/') options.base_url.pop_back();
  } else if (!args.have_base) {
    options.base_url = backend->releases_repo.empty() ? "https://example.invalid/" + backend->name + "-wheels"
                                                      : "https://github.com/" + backend->releases_repo;
  }

  auto stats = farmgen::generate_farm(options, policy);
  if (!stats) {
    const auto& e = stats.error();
    // Option errors name their flag already; everything else is about the output directory.
    const bool names_flag = e.message.rfind("--", 0) == 0;
    std::cerr << "wheelfit-farmgen: " << (names_flag ? "" : "--out: ") << e.message << "\n";
    return 2;
  }
  std::cout << "wrote " << options.out.string() << ": " << stats->packages << " packages, " << stats->wheels
            << " wheels (" << stats->anchors << " anchors), " << stats->pages << " pages, " << stats->bytes
            << " bytes\n";
  return 0;
}
