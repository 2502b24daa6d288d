#include "wheelfit/registry/registry.hpp"

namespace wheelfit::registry {

Expected<void> Registry::add(BackendInfo info) {
  if (auto it = backends_.find(info.name); it != backends_.end()) {
    return unexpected(Errc::invalid_input, "backend '" + info.name + "' from " + info.origin +
                                               " is already registered by " + it->second.origin);
  }
  std::string name = info.name;
  backends_.emplace(std::move(name), std::move(info));
  return {};
}

const BackendInfo* Registry::find(std::string_view name) const {
  auto it = backends_.find(name);
  return it == backends_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, info] : backends_) out.push_back(name);
  return out;
}

namespace {
bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }
std::string with_slash(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (!s.empty() && s.back() != '/') s += '/';
  return s;
}
}  // namespace

Expected<IndexChoice> choose_index(const BackendInfo& backend, const std::optional<std::string>& cli_index,
                                   const std::optional<std::string>& env_value) {
  if (cli_index) {
    if (blank(*cli_index)) return unexpected(Errc::usage, "--index: the URL is empty");
    return IndexChoice{with_slash(*cli_index), "--index"};
  }
  if (env_value && !blank(*env_value)) return IndexChoice{with_slash(*env_value), "env " + backend.index_env};
  if (backend.index_url.empty()) {
    return unexpected(Errc::unsupported, "the " + backend.name + " backend publishes no wheel index yet; set one with --index URL" +
                                             (backend.index_env.empty() ? std::string() : " or " + backend.index_env));
  }
  return IndexChoice{with_slash(backend.index_url), "default for " + backend.name};
}

}  // namespace wheelfit::registry
