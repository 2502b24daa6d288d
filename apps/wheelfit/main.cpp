// wheelfit: which prebuilt CUDA wheel will actually run on this machine? The executable is thin:
// argument parsing, the log sink, exit codes. The work happens in the libraries.
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "wheelfit/api/options.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/transports/register.hpp"
#include "wheelfit/util/allocator.hpp"
#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/native_text.hpp"

#ifndef WHEELFIT_VERSION
#define WHEELFIT_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  using namespace wheelfit;
  util::use_utf8_console();  // Windows: what is written (UTF-8) shows as written
  util::keep_freed_memory();  // a short-lived process moving tens of MB: reuse, do not re-fault
  util::remove_temp_files_on_signal();  // Ctrl-C or a kill mid-write leaves no temporary file
  log::set_sink([](log::Level level, std::string_view message) {
    if (level == log::Level::debug && !std::getenv("WHEELFIT_DEBUG")) return;
    // Log lines quote names and URLs from the network: control characters escaped (cli::show).
    cli::show(std::cerr, std::string(level == log::Level::warn ? "warning: " : "") + std::string(message) + "\n");
  });
  // The arguments as UTF-8 (Windows: from the UTF-16 command line, so a path may name C:\Users\Jürgen).
  const std::vector<std::string> utf8_args = util::utf8_arguments(argc, argv);
  std::vector<std::string_view> args(utf8_args.begin() + 1, utf8_args.end());
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::cout << api::options::usage();  // generated from the option table
    return args.empty() ? api::kExitBadInput : api::kExitResolved;
  }
  if (args[0] == "version" || args[0] == "--version") {
    std::cout << "wheelfit " << WHEELFIT_VERSION << "\n";
    return api::kExitResolved;
  }
  // The one registration of the transports (file, http(s), the cache, the Releases failover),
  // as the backends are loaded: every command's façade call reads through this registry.
  if (auto done = transports::register_transports(net::default_registry()); !done) {
    std::cerr << "wheelfit: transports: " << done.error().message << "\n";
    return api::kExitInternal;
  }
  // The policy format (policies/, format 2), installed as the core's policy reader.
  if (auto done = policies::register_format(); !done) {
    std::cerr << "wheelfit: policies: " << done.error().message << "\n";
    return api::kExitInternal;
  }
  const std::string_view command = args[0];
  args.erase(args.begin());
  bool json = false;
  for (auto a : args) json = json || a == "--json";
  try {
    if (command == "resolve") return cli::run_resolve(args);
    if (command == "plugins") return cli::run_plugins(args);
    if (command == "detect") return cli::run_detect(args);
    if (command == "explain") return cli::run_explain(args);
    if (command == "doctor") return cli::run_doctor(args);
    if (command == "cache") return cli::run_cache(args);
    if (command == "download") return cli::run_download(args);
    if (command == "mirror") return cli::run_mirror(args);
    if (command == "check") return cli::run_check(args);
    return cli::fail(json, api::kExitBadInput, "unknown command '" + std::string(command) + "' (try wheelfit --help)");
  } catch (const cli::UsageError& e) {
    return cli::fail(json, api::kExitBadInput, e.message);
  } catch (const std::exception& e) {
    return cli::fail(json, api::kExitInternal, std::string("internal error (a bug: please report it): ") + e.what());
  }
}
