#pragma once
// The exact torch wheel the advice names when a machine's own torch cannot run on its GPUs
// (resolve::TorchAdvice::file), chosen from its torch index the way `mirror --with-torch` chooses
// (resolve::TorchChooser: the same tag rules and two-digest rule; decision 0030).
//
// Thread safety: TorchAdviceFiles::fill may run on several threads at once (a fleet's machines).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "wheelfit/machine/machine.hpp"
#include "wheelfit/net/options.hpp"
#include "wheelfit/net/registry.hpp"
#include "wheelfit/net/transport.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/resolve/torch_family.hpp"

namespace wheelfit::session {

/// Where a resolve call's torch indexes are read from: its options, as the request gave them.
struct TorchAdviceSource {
  std::shared_ptr<net::Transport> transport;  ///< the caller's: it answers every read (then nothing else is made)
  const net::Registry* transports = nullptr;  ///< nullptr: net::default_registry()
  net::HttpOptions network;
  std::optional<std::string> torch_index;     ///< --torch-index (a template with {line_nodot} ...)
  bool use_cache = true;
  std::optional<std::string> cache_dir;
  std::optional<std::uint64_t> cache_max_size;
  bool offline = false;                       ///< answered from the cache alone
};

/// The torch files of one resolve call, shared by a fleet's machines: each torch index read once
/// (through the call's transport, else a stack of its network options and cache, --offline
/// answered from the cache alone), each choice made once. Without --torch-index the backend's
/// torch index is read only when the resolve read an http(s) index itself (no caller's transport).
class TorchAdviceFiles {
 public:
  explicit TorchAdviceFiles(TorchAdviceSource source) : source_(std::move(source)) {}

  /// Fills `advice`'s file, url and sha256 for machine `m` (its Python and platform), and its
  /// index when --torch-index names it; or `file_note` with why not: the torch index could not be
  /// read (or lists no such file), or was not looked up: no --torch-index, and the resolve read
  /// no http(s) index (`index_url`) of its own. Nothing when the advice names no torch.
  void fill(resolve::TorchAdvice& advice, const machine::Machine& m, const std::string& index_url);

 private:
  /// One torch index: its credential-free URL by the URL as named, its transport and chooser, or
  /// why none could be made.
  struct Index {
    std::map<std::string, std::string> clean;
    std::shared_ptr<net::Transport> transport;
    std::unique_ptr<resolve::TorchChooser> chooser;
    std::string error;
  };
  Index& index_for(const std::string& raw);

  const TorchAdviceSource source_;
  std::mutex mu_;
  std::map<std::string, Index> indexes_;  ///< by URL as named
};

}  // namespace wheelfit::session
