#pragma once
// The torch family as a resolver step: for each resolved machine's torch pins, the exact files
// of its torch index that fit it (`mirror --with-torch` adds them to the picks, decision 0023),
// and the chooser the advice's torch file is chosen with too (decision 0030). Like the resolver
// it reads no network itself: the caller hands in how a torch index is read (an IndexReader).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "wheelfit/index/index_client.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/resolve/resolver.hpp"

namespace wheelfit::resolve {

/// How a torch index is read: the pages of `names` at `base` (normalised, credential-free) and
/// its packages.json, pages that could not be read marked so (index::read_index over a transport).
using IndexReader = std::function<index::IndexSnapshot(const std::string& base, const std::vector<std::string>& names)>;

/// One torch family file to fetch, merged by URL over the machines that take it.
struct TorchFile {
  std::string url, filename, project;
  std::string version;                          ///< from its parsed file name, for the locks
  std::optional<std::string> sha256;            ///< its link's #sha256=
  std::optional<std::string> requires_python;   ///< its link's data-requires-python
  std::vector<std::string> machines;            ///< the machines whose pins it fills
};

/// One torch index as read (torch_family.cpp).
struct TorchIndex;

/// The file chosen for a pin: its link and its parsed version.
struct TorchChoice {
  const index::Link* link;
  model::Version version;
};

/// Chooses torch family files the way `mirror --with-torch` does, for it and for the advice's
/// torch (resolve::TorchAdvice): for a pin, the newest file of its name within its version that
/// fits the machine's Python and platform (the better Python tag, then the better platform tag
/// on a tie). Each torch index is read once, through `read` at the URL `clean` maps it to;
/// each page's links parsed once; each choice made once per (index, pin, Python, platform). Not
/// thread-safe.
class TorchChooser {
 public:
  /// `what` opens every error ("--with-torch"; "" nothing). `clean` must outlive the chooser.
  TorchChooser(IndexReader read, const std::map<std::string, std::string>& clean, std::string what);
  ~TorchChooser();
  TorchChooser(const TorchChooser&) = delete;
  TorchChooser& operator=(const TorchChooser&) = delete;

  /// The file of `pin` for machine `m` (named `machine` in errors; "" none) from the index at
  /// `raw`, read on first use with the pages of `names`. Errors name the index, the pin and the
  /// machine: a page that cannot be read (Errc::io_error), no fitting file, a file listed with two
  /// sha256 (Errc::invalid_input).
  Expected<const TorchChoice*> choose(const std::string& raw, const machine::Machine& m, const Pin& pin,
                                      const std::vector<std::string>& names, const std::string& machine);
  /// The choices made so far: each a scan of a page's links.
  [[nodiscard]] std::size_t choices() const { return made_; }

 private:
  using ChoiceKey = std::tuple<std::string, std::string, std::string, model::NumericVersion, bool, std::optional<model::Os>,
                               std::optional<std::string>, std::optional<model::NumericVersion>>;
  TorchIndex& index_at(const std::string& base, const std::vector<std::string>& names);
  IndexReader read_;
  const std::map<std::string, std::string>& clean_;
  std::string prefix_;
  std::map<std::string, std::unique_ptr<TorchIndex>> indexes_;  ///< by URL (credentials taken out)
  std::map<ChoiceKey, TorchChoice> chosen_;
  std::size_t made_ = 0;
};

/// One machine of a fleet, as the torch family step reads it.
struct TorchMachine {
  std::string name;
  const Resolution* resolution = nullptr;  ///< nullptr: it did not resolve (no torch family)
  const machine::Machine* machine = nullptr;
};

/// The torch index of every pin of every machine that takes a torch family (`torch_index`, the
/// --torch-index template, with the machine's line; else the pin's own index), normalised, each
/// once, mapped to itself: what the transport's per-origin credentials are taken from (the caller
/// replaces each value with the URL without its user name and password, as for --index).
std::map<std::string, std::string> torch_index_urls(const std::vector<TorchMachine>& machines,
                                                    const std::optional<std::string>& torch_index);

/// A machine whose combo's torch cannot run on its GPUs: its torch family is left out.
struct TorchSetAside {
  std::string machine;
  std::string combo;   ///< "cu12.6/torch2.8"
  std::string reason;  ///< "torch cannot run on sm 12.0: ..."
};

/// What torch_family found.
struct TorchFamily {
  std::vector<TorchFile> files;
  std::vector<TorchSetAside> set_aside;  ///< the machines whose combo's torch cannot run on their GPUs
  std::size_t choices = 0;  ///< the choices made: one per distinct (index, pin, Python, platform)
};

/// The torch family files of every resolved machine whose combo's torch is not known to fail on
/// its GPUs (Resolution::combo_torch; the others are set aside, with the reason), merged by URL:
/// for each pin, the file `chooser` chooses from its torch index (torch_index_urls' rule). Each
/// choice is made once per distinct (index, pin, Python, platform), however many machines share
/// it. A chosen file the index lists with two sha256 (resolve/digests.hpp) is an error naming
/// both, as is a page that cannot be read or holds no such file; each error names the index, the
/// pin and the machine.
Expected<TorchFamily> torch_family(const std::vector<TorchMachine>& machines, const std::optional<std::string>& torch_index,
                                   TorchChooser& chooser);

}  // namespace wheelfit::resolve
