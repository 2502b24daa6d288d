#pragma once
// Builders for resolver tests: machines, workspaces and in-memory index snapshots.
#include <string>
#include <vector>

#include "wheelfit/config/workspace.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/resolve/torch_gate.hpp"

namespace wheelfit::test {

/// Machine facts as set_fact's text forms: (key, value) pairs.
using Facts = std::vector<std::pair<std::string, std::string>>;

/// A machine from `facts`; throws on a bad fact.
machine::Machine make_machine(const Facts& facts);

/// The reference machine, examples/machines/x86_64-h100-cu128.toml: linux x86_64 glibc 2.35,
/// python 3.12, torch 2.8.0+cu128, driver 580.65.06 (CUDA 13.0), one sm_90 GPU.
machine::Machine h100();
/// The reference machine with `changes` set on it (each REQUIREd to be accepted).
machine::Machine h100_with(const Facts& changes);

/// A workspace of one env named "env" with these packages and (optionally) its own python.
config::Workspace workspace(const std::vector<std::string>& packages, const std::string& python = "");

/// A snapshot where each package page lists these anchors (text == href basename unless
/// `href` is given), under https://example.test/simple/.
struct Anchor {
  std::string text;
  std::string href = "";             ///< defaults to <base>files/<text with + as %2B>
  std::string sha256 = "";
  bool yanked = false;
  std::string requires_python = "";  ///< data-requires-python, when not empty
};
index::IndexSnapshot snapshot(const std::vector<std::pair<std::string, std::vector<Anchor>>>& pages);

/// The installed torch's own list (resolve::Inputs::torch_archs) of a torch built from source for
/// `list` ("6.1;9.0"): for tests of the packages' verdicts on a GPU PyTorch's own builds of the
/// machine's torch leave out (a GTX 1080 on torch 2.8.0+cu128), whose tier 1 is otherwise set aside.
resolve::TorchArchs torch_built_for(const std::string& list);

}  // namespace wheelfit::test
