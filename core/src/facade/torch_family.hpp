#pragma once
// Private to the façade (deliver.cpp): the torch family files `mirror --with-torch` adds to the
// picks, chosen from each machine's torch index (decision 0023).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "wheelfit/transport/transport.hpp"
#include "wheelfit/wheelfit.hpp"

namespace wheelfit::api::detail {

/// One torch family file to fetch, merged by URL over the machines that take it.
struct TorchFile {
  std::string url, filename, project;
  std::string version;                          ///< from its parsed file name, for the locks
  std::optional<std::string> sha256;            ///< its link's #sha256=
  std::optional<std::string> requires_python;   ///< its link's data-requires-python
  std::vector<std::string> machines;            ///< the machines whose pins it fills
};

/// The torch index of every pin of every resolved machine of `fleet` (`req.torch_index` with
/// the machine's line, else the pin's own index), normalised, each once, mapped to itself: what
/// the transport's per-origin credentials are taken from (the caller replaces each value with
/// the URL without its user name and password, as for --index).
std::map<std::string, std::string> torch_index_urls(const MirrorRequest& req, const FleetResult& fleet);

/// What torch_family found.
struct TorchFamily {
  std::vector<TorchFile> files;
  std::size_t choices = 0;  ///< the choices made: one per distinct (index, pin, Python, platform)
};

/// The torch family files of every resolved machine, merged by URL: for each pin, the newest
/// file of the pinned name and version that fits the machine's Python and platform, from its
/// torch index (read through `transport` at the URL `clean` maps it to). Each page's links are
/// parsed once and each choice made once per distinct (index, pin, Python, platform), however
/// many machines share it. A chosen file the index lists with two sha256 (resolve/digests.hpp) is
/// an error naming both, as is a page that cannot be read or holds no such file; each error
/// names the index, the pin and the machine.
Expected<TorchFamily> torch_family(const MirrorRequest& req, const FleetResult& fleet,
                                   transport::Transport& transport, const std::map<std::string, std::string>& clean);

}  // namespace wheelfit::api::detail
