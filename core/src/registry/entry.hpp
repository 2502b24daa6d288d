#pragma once
// Registry::Entry, shared by registry.cpp and plugin_loader.cpp (private to the component).
// BOOST_DLL_USE_STD_FS is set on the target (core/CMakeLists.txt): Boost.DLL speaks
// std::filesystem and std::error_code, so Boost.Filesystem is not needed.

#include <memory>
#include <mutex>
#include <optional>

#include <boost/dll/shared_library.hpp>

#include "wheelfit/registry/registry.hpp"

namespace wheelfit::registry {

// Member order is the lifetime: the library is declared first so it is destroyed last, after
// everything read from it. (Plugins are opened with RTLD_NODELETE, so even then the code stays.)
struct Registry::Entry {
  boost::dll::shared_library library;              ///< empty for add(BackendInfo)
  const wheelfit_backend_v2* descriptor = nullptr;  ///< owned by the library; null without one
  BackendInfo info;
  /// The built-in policy, read on first use (builtin_policy): its result, kept either way.
  std::mutex policy_mu;
  std::optional<Expected<std::shared_ptr<const semantics::Policy>>> policy;
};

}  // namespace wheelfit::registry

namespace wheelfit::registry::detail {
/// read_descriptor without the origin: the messages name no file (the loader adds it).
/// Errc::unsupported for another ABI version, Errc::invalid_input for anything else.
Expected<BackendInfo> check_descriptor(const wheelfit_backend_v2* descriptor);
}  // namespace wheelfit::registry::detail
