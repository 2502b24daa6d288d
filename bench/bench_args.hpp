#pragma once
// The benchmarks' command lines: `--name value` options, each given to its handler. An unknown
// option or a missing value ends the program (exit 2) with the options it knows.

#include <algorithm>
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

/// A count of at least one ("--reps 0" runs once).
inline int at_least_one(const std::string& value) { return std::max(1, std::atoi(value.c_str())); }

}  // namespace wheelfit::bench
