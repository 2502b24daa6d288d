#pragma once
// The benchmarks' command lines: `--name value` options, each given to its handler. An unknown
// option or a missing value ends the program (exit 2) with the options it knows. And the
// best-of timer the benchmarks share.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <string>

namespace wheelfit::bench {

using Options = std::map<std::string, std::function<void(const std::string& value)>>;

inline void parse_args(const char* program, int argc, char** argv, const Options& options, const std::string& usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    const auto it = options.find(name);
    if (it == options.end() || i + 1 >= argc) {
      std::cerr << program << ": " << name << (it == options.end() ? ": unknown option" : ": missing value") << " ("
                << usage << ")\n";
      std::exit(2);
    }
    it->second(argv[++i]);
  }
}

/// The fastest of `reps` runs of `f`, in seconds (steady clock).
template <class F>
double best_of(int reps, F&& f) {
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

/// A count of at least one ("--reps 0" runs once).
inline int at_least_one(const std::string& value) { return std::max(1, std::atoi(value.c_str())); }

}  // namespace wheelfit::bench
