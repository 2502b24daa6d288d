#pragma once
// Private to the façade (fleet.cpp): the exact torch wheel the advice names when a machine's own
// torch cannot run on its GPUs (resolve::TorchAdvice::file), chosen from its torch index the way
// `mirror --with-torch` chooses (resolve::TorchChooser: the same tag rules and two-digest rule; decision 0030).
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/resolve/torch_family.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api::detail {

/// The torch files of one resolve call, shared by a fleet's machines: each torch index read once
/// (through the request's transport, else a stack of the request's network options and cache,
/// --offline answered from the cache alone), each choice made once. Without --torch-index the
/// backend's torch index is read only when the resolve read an http(s) index itself (no caller's
/// transport). Thread-safe.
class TorchAdviceFiles {
 public:
  explicit TorchAdviceFiles(const ResolveRequest& req) : req_(req) {}

  /// Fills `advice`'s file, url and sha256 for machine `m` (its Python and platform), and its
  /// index when --torch-index names it; or `file_note` with why not: the torch index could not be
  /// read (or lists no such file), or was not looked up: no --torch-index, and the resolve read
  /// no http(s) index (`index_url`) of its own. Nothing when the advice names no torch.
  void fill(resolve::TorchAdvice& advice, const machine::Machine& m, const std::string& index_url);

 private:
  /// One torch index: its credential-free URL by the URL as named, its transport and chooser, or
  /// why none could be made.
  struct Source {
    std::map<std::string, std::string> clean;
    std::shared_ptr<net::Transport> transport;
    std::unique_ptr<resolve::TorchChooser> chooser;
    std::string error;
  };
  Source& source_for(const std::string& raw);

  const ResolveRequest& req_;
  std::mutex mu_;
  std::map<std::string, Source> sources_;  ///< by URL as named
};

}  // namespace wheelfit::api::detail
