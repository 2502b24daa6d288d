#pragma once
// The benchmarks' farm: the 44-package full-grid farm (wheelfit::farmgen) generated into a
// temporary folder of its own, for the benchmarks that read it through the façade.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "farmgen.hpp"
#include "support/backend_support.hpp"
#include "wheelfit/api.hpp"
#include "wheelfit/transports/file_transport.hpp"

namespace wheelfit::bench {

struct TempFarm {
  std::filesystem::path tmp;   ///< the folder made for the run (the caller removes it)
  std::filesystem::path farm;  ///< tmp/farm: the index
  farmgen::FarmStats stats;
};

/// The farm of `packages` packages in a new folder under the system's temporary one
/// ("wheelfit-<name>-XXXXXX"); nullopt (the reason on stderr, naming `name`) when it cannot be made.
inline std::optional<TempFarm> temp_farm(const std::string& name, std::size_t packages = 44) {
  std::string templ = (std::filesystem::temp_directory_path() / ("wheelfit-" + name + "-XXXXXX")).string();
  if (!::mkdtemp(templ.data())) {
    std::perror("mkdtemp");
    return std::nullopt;
  }
  farmgen::FarmOptions opts;
  opts.out = std::filesystem::path(templ) / "farm";
  opts.packages = packages;
  const auto stats = farmgen::generate_farm(opts, test::cuda_policy());
  if (!stats) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), stats.error().message.c_str());
    return std::nullopt;
  }
  return TempFarm{templ, opts.out, *stats};
}

/// A resolve of `names` (one env, Python 3.12) against the farm at `farm`, read through a file
/// transport with no cache, by the shipped backends; no machine (the caller's, or detected).
inline api::ResolveRequest farm_request(const std::filesystem::path& farm, const std::vector<std::string>& names) {
  api::ResolveRequest r;
  r.envs = {{"all", std::string("3.12"), names}};
  r.env_overrides = false;
  r.index = farm.string();
  r.use_cache = false;
  r.transport = std::shared_ptr<net::Transport>(transports::make_file_transport());
  r.backends = &test::shipped_backends();
  return r;
}

}  // namespace wheelfit::bench
