// The registry proper: entries, lookups, detection calls, descriptor checks, index choice.
// Loading plugins from a folder lives in plugin_loader.cpp, the default folder in plugin_dir.cpp.
#include "wheelfit/registry/registry.hpp"

#include <algorithm>

#include "entry.hpp"
#include "wheelfit/model/url.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::registry {

namespace {

constexpr std::size_t kMaxNameLength = 64;

bool valid_backend_name(std::string_view name) {
  return !name.empty() && name.size() <= kMaxNameLength && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
         });
}

Expected<void> check_name(std::string_view name) {
  if (name.empty()) return unexpected(Errc::invalid_input, "the backend name is empty");
  if (!valid_backend_name(name)) {
    return unexpected(Errc::invalid_input, "backend name '" + std::string(name) +
                                               "' is not 1-" + std::to_string(kMaxNameLength) +
                                               " characters of [a-z0-9_-]");
  }
  return {};
}

}  // namespace

namespace detail {

Expected<BackendInfo> check_descriptor(const wheelfit_backend_v2* d) {
  if (d == nullptr) return unexpected(Errc::invalid_input, "the entry point returned no descriptor (NULL)");
  // The version is the only field read before it is known to match.
  if (d->abi_version != WHEELFIT_BACKEND_ABI_VERSION) {
    return unexpected(Errc::unsupported, "built for wheelfit backend ABI " + std::to_string(d->abi_version) +
                                             "; this wheelfit reads ABI " +
                                             std::to_string(WHEELFIT_BACKEND_ABI_VERSION));
  }
  if (d->size < WHEELFIT_BACKEND_V2_MIN_SIZE) {
    return unexpected(Errc::invalid_input, "descriptor size " + std::to_string(d->size) +
                                               " is smaller than wheelfit_backend_v2's first revision (" +
                                               std::to_string(WHEELFIT_BACKEND_V2_MIN_SIZE) + " bytes)");
  }
  const std::pair<const char*, const char*> fields[] = {
      {"name", d->name},
      {"description", d->description},
      {"index_url", d->index_url},
      {"index_env", d->index_env},
      {"releases_repo", d->releases_repo},
      {"policy_json", d->policy_json},
  };
  for (const auto& [field, value] : fields) {
    if (value == nullptr) {
      return unexpected(Errc::invalid_input, std::string("descriptor field '") + field + "' is NULL (use \"\" for none)");
    }
  }
  if (auto ok = check_name(d->name); !ok) return ok.error();
  if (*d->policy_json == '\0') {
    return unexpected(Errc::invalid_input, "descriptor field 'policy_json' is empty (a backend must name its line and label grammar)");
  }
  const std::pair<const char*, bool> functions[] = {
      {"parse_target", d->parse_target != nullptr},
      {"parse_target_list", d->parse_target_list != nullptr},
      {"match_targets", d->match_targets != nullptr},
  };
  for (const auto& [field, set] : functions) {
    if (!set) return unexpected(Errc::invalid_input, std::string("descriptor function '") + field + "' is NULL (required)");
  }
  return BackendInfo{
      .name = d->name,
      .description = d->description,
      .index_url = d->index_url,
      .index_env = d->index_env,
      .releases_repo = d->releases_repo,
      .policy_json = d->policy_json,
      .origin = "",
      .has_detection = d->detect != nullptr,
      .targets = {d->parse_target, d->parse_target_list, d->match_targets, d->read_device_code,
                  wheelfit_backend_has(d, variant_properties) ? d->variant_properties : nullptr,
                  wheelfit_backend_has(d, describe_target_list) ? d->describe_target_list : nullptr,
                  wheelfit_backend_has(d, read_device_code_at) ? d->read_device_code_at : nullptr},
  };
}

}  // namespace detail

Expected<BackendInfo> read_descriptor(const wheelfit_backend_v2* descriptor, const std::string& origin) {
  auto info = detail::check_descriptor(descriptor);
  if (!info) return info.error().with_context(origin);
  info->origin = origin;
  return info;
}

Registry::Registry() = default;
Registry::~Registry() = default;
Registry::Registry(Registry&&) noexcept = default;
Registry& Registry::operator=(Registry&&) noexcept = default;

Expected<void> Registry::add(BackendInfo info) {
  if (auto ok = check_name(info.name); !ok) return ok.error().with_context(info.origin.empty() ? "backend" : info.origin);
  if (auto it = entries_.find(info.name); it != entries_.end()) {
    return unexpected(Errc::invalid_input, "backend '" + info.name + "' from " + info.origin +
                                               " is already registered by " + it->second->info.origin);
  }
  info.has_detection = false;  // nothing to call without a plugin
  auto entry = std::make_unique<Entry>();
  entry->info = std::move(info);
  std::string name = entry->info.name;
  entries_.emplace(std::move(name), std::move(entry));
  return {};
}

const BackendInfo* Registry::find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second->info;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

std::vector<const BackendInfo*> Registry::backends() const {
  std::vector<const BackendInfo*> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(&entry->info);
  return out;
}

Expected<std::shared_ptr<const semantics::Policy>> Registry::builtin_policy(std::string_view backend) const {
  auto it = entries_.find(backend);
  if (it == entries_.end()) return unexpected(Errc::not_found, "no backend '" + std::string(backend) + "' is registered");
  Entry& e = *it->second;
  const std::lock_guard lock(e.policy_mu);
  if (!e.policy) {
    auto made = make_policy(e.info, std::nullopt);
    if (made) e.policy.emplace(std::make_shared<const semantics::Policy>(std::move(*made)));
    else e.policy.emplace(made.error());
  }
  return *e.policy;
}

Expected<std::string> Registry::detect(std::string_view backend) const {
  auto it = entries_.find(backend);
  if (it == entries_.end()) return unexpected(Errc::not_found, "no backend '" + std::string(backend) + "' is registered");
  const Entry& e = *it->second;
  if (e.descriptor == nullptr || e.descriptor->detect == nullptr) {
    return unexpected(Errc::unsupported, "backend " + e.info.name + " has no detection");
  }
  const char* text = nullptr;
  try {
    text = e.descriptor->detect();
  } catch (...) {
    // The ABI forbids this; a plugin not built with plugin_support.hpp might still do it.
    return unexpected(Errc::invalid_input, "backend " + e.info.name + " (" + e.info.origin +
                                               "): its detection let an exception out of the plugin (a plugin bug)");
  }
  if (text == nullptr) {
    return unexpected(Errc::invalid_input,
                      "backend " + e.info.name + " (" + e.info.origin + "): its detection returned NULL (a plugin bug)");
  }
  return std::string(text);
}

std::string_view to_string(SkipReason reason) noexcept {
  switch (reason) {
    case SkipReason::not_plugin_name: return "not_plugin_name";
    case SkipReason::not_regular_file: return "not_regular_file";
    case SkipReason::world_writable: return "world_writable";
    case SkipReason::untrusted: return "untrusted";
    case SkipReason::not_shared_library: return "not_shared_library";
    case SkipReason::load_failed: return "load_failed";
    case SkipReason::no_entry: return "no_entry";
    case SkipReason::entry_failed: return "entry_failed";
    case SkipReason::abi_mismatch: return "abi_mismatch";
    case SkipReason::bad_descriptor: return "bad_descriptor";
    case SkipReason::duplicate_name: return "duplicate_name";
  }
  return "unknown";
}

namespace {
bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }
std::string with_slash(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.pop_back();
  // An http(s) URL's query stays last (a token some private indexes authenticate with): the '/'
  // ends the path (index::normalize_base).
  const std::size_t end = model::url::is_http(s) ? std::min(s.find_first_of("?#"), s.size()) : s.size();
  if (end > 0 && s[end - 1] != '/') s.insert(end, "/");
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
