#include "cli.hpp"

#include <boost/json.hpp>
#include <cstdlib>
#include <iostream>

namespace wheelfit::cli {

std::optional<std::string> Args::value(std::string_view flag) const {
  if (auto it = values.find(flag); it != values.end()) return it->second;
  return std::nullopt;
}

Args parse_args(const std::vector<std::string_view>& args, const std::set<std::string, std::less<>>& value_flags,
                const std::set<std::string, std::less<>>& switch_flags, const std::map<std::string, std::string, std::less<>>& aliases) {
  Args out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "--") {
      for (++i; i < args.size(); ++i) out.positional.emplace_back(args[i]);
      break;
    }
    if (!a.starts_with("-") || a == "-") {
      out.positional.emplace_back(a);
      continue;
    }
    std::string flag(a.substr(0, a.find('=')));
    if (auto al = aliases.find(flag); al != aliases.end()) flag = al->second;
    if (switch_flags.count(flag)) {
      if (a.find('=') != std::string_view::npos) throw UsageError{flag + ": takes no value"};
      out.switches.insert(flag);
      continue;
    }
    if (!value_flags.count(flag)) throw UsageError{"unknown option " + std::string(a)};
    std::string value;
    if (auto eq = a.find('='); eq != std::string_view::npos) {
      value = std::string(a.substr(eq + 1));
    } else {
      if (i + 1 >= args.size()) throw UsageError{flag + ": missing value"};
      value = std::string(args[++i]);
    }
    if (!out.values.emplace(flag, std::move(value)).second) throw UsageError{flag + ": given twice"};
  }
  return out;
}

int fail(bool json, int code, const std::string& message) {
  std::cerr << "wheelfit: " << message << "\n";
  if (json) {
    boost::json::object o{{"error", boost::json::object{{"exit_code", code}, {"message", message}}}};
    std::cout << boost::json::serialize(o) << "\n";
  }
  return code;
}

std::optional<std::string> env(const char* name) {
  if (const char* v = std::getenv(name)) return std::string(v);
  return std::nullopt;
}

}  // namespace wheelfit::cli
