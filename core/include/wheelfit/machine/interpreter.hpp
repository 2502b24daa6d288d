#pragma once
// The target Python interpreter: one short query of the interpreter itself (version, ABI flags,
// platform machine, where packages are installed), then torch / torchvision / torchaudio
// versions read from the installed distributions' metadata, without Python and without
// importing torch. Both answers are cached.
//
// The query runs `<python> -I -S -c <interpreter_script()>` with a timeout (posix_spawn, its own
// process group, killed at the deadline). -I ignores PYTHON* variables and the user's current
// folder, -S skips `site` (no .pth processing: the start costs about what a bare interpreter
// start does). The script imports only sys, os and site (never torch), applies a
// venv's pyvenv.cfg itself (which `site` would have done) and prints one JSON object:
//   {"wheelfit_query": 1, "executable", "implementation", "version": [3, 12, 1], "abiflags",
//    "gil_disabled", "machine", "prefix", "venv_config", "site_dirs": [...]}
// site_dirs are the folders the interpreter imports installed packages from, in import order:
// the user site (when a normal start would enable it), then site.getsitepackages() (what `site`
// puts on sys.path; pip's purelib / platlib are among them). gil_disabled is 't' in abiflags.
// PYTHONPATH and .pth additions are not looked at.
//
// The cache: <cache_dir>/<16 hex digits of FNV-1a(interpreter path)>.json, written atomically
// (a temp file renamed over it). An entry holds the interpreter's answer with the stamps
// (device, inode, size, mtime in ns) of the interpreter path (the link and its target),
// sys.executable and pyvenv.cfg, and the distributions found with the stamps of the site dirs.
// The answer is reused while the interpreter stamps match; the distributions while the site
// dirs' stamps also match (installing or removing a package changes its site dir's mtime). An
// entry that cannot be read as one is discarded with a note. A wrapper (a pyenv shim: a
// program whose sys.executable is another file) is never cached: it may pick another
// interpreter on each run.
//
// Thread safety: reentrant; concurrent processes may share the cache folder (each write is a
// rename of a private temp file).

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/machine/machine.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::machine {

/// What the interpreter said about itself.
struct InterpreterInfo {
  std::string executable;      ///< sys.executable
  std::string implementation;  ///< sys.implementation.name: "cpython", "pypy"
  std::vector<int> version;    ///< sys.version_info[:3]: {3, 12, 1}
  std::string abiflags;        ///< sys.abiflags: "", "t" (free-threaded), "d"
  bool gil_disabled = false;   ///< a free-threaded build ('t' in abiflags, PEP 703)
  std::string machine;         ///< os.uname().machine: "x86_64"
  std::string prefix;          ///< sys.prefix (the venv for a venv)
  std::string venv_config;     ///< the pyvenv.cfg applied; "" when not a venv
  std::vector<std::string> site_dirs;  ///< where installed packages are imported from, in order

  /// "3.12", or "3.13t" for a free-threaded build (the machine profile's python).
  [[nodiscard]] std::string python_fact() const;
  friend bool operator==(const InterpreterInfo&, const InterpreterInfo&) = default;
};

/// One installed distribution.
struct InstalledDist {
  std::string name;      ///< PEP 503 normalised: "torch"
  std::string version;   ///< as its metadata says: "2.8.0+cu128"
  std::string metadata;  ///< the file read: ".../torch-2.8.0+cu128.dist-info/METADATA"
  friend bool operator==(const InstalledDist&, const InstalledDist&) = default;
};

/// The result of inspect_interpreter.
struct InterpreterFacts {
  std::string path;  ///< the interpreter as run: an absolute path
  InterpreterInfo info;
  std::map<std::string, InstalledDist> packages;  ///< found ones only, by normalised name
  bool info_cached = false;      ///< the answer came from the cache (the interpreter was not run)
  bool packages_cached = false;  ///< the distributions came from the cache (no metadata read)
  /// torch's library folder (torch/lib, where libtorch_cuda.so / torch_cuda.dll lie):
  /// torch_library_dir of the torch found; "" without torch.
  std::string torch_lib;
  std::vector<std::string> notes;  ///< why a package is absent, cache trouble, a wrapper
};

struct InterpreterOptions {
  std::string python = "python3";  ///< a path (with a '/') or a name searched on `path_env` (Windows: see find_interpreter)
  std::string path_env;            ///< the PATH to search
  std::optional<std::filesystem::path> cache_dir;  ///< nullopt = no cache
  std::chrono::milliseconds timeout{5000};
  std::vector<std::string> packages = {"torch", "torchvision", "torchaudio"};
};

/// The script the query runs (for the docs and the benchmark).
[[nodiscard]] std::string_view interpreter_script();

/// The cache folder: $XDG_CACHE_HOME/wheelfit/interpreters when XDG_CACHE_HOME is an absolute
/// path, else $HOME/.cache/wheelfit/interpreters; nullopt when neither is usable.
[[nodiscard]] std::optional<std::filesystem::path> default_cache_dir(const Getenv& getenv);

/// The interpreter to run: `python` itself (made absolute) when it contains a '/', else the
/// first executable regular file of that name in `path_env`'s folders (an empty entry is the
/// current folder, as the shell reads it). Errors name what was looked for: Errc::not_found
/// ("python3: not found on PATH (...)", "/x/python: no such file"), Errc::usage (a directory,
/// not executable). Windows (interpreter_path.cpp): PATH is ';'-separated and a name without an
/// extension gets PATHEXT's .exe/.com (empty Store alias stubs skipped); a path holds '\', '/'
/// or ':'; a folder is a Python environment (a venv's Scripts\python.exe, else conda's
/// python.exe); "py", "py -3", "py -3.12" ask the py launcher for sys.executable, and the default
/// "python" falls back to "py -3" when it is not on PATH.
[[nodiscard]] Expected<std::string> find_interpreter(std::string_view python, std::string_view path_env);

/// Runs the query once (no cache). Errors name the interpreter: not found / not executable
/// (from run_process), "timed out after 5000 ms", "exited with status 1: <last line of
/// stderr>", "printed no JSON (...)" / an answer missing a field: all Errc::invalid_input except
/// the start failures, which keep run_process's code.
[[nodiscard]] Expected<InterpreterInfo> query_interpreter(const std::string& path, std::chrono::milliseconds timeout);

/// Parses the script's output; `path` names the interpreter in errors. Errc::invalid_input.
[[nodiscard]] Expected<InterpreterInfo> parse_interpreter_answer(std::string_view text, const std::string& path);

/// The value of the first `field` header ("Version") in metadata text (RFC 822 style headers up
/// to the first blank line; field names case-insensitive). Errc::not_found when absent.
[[nodiscard]] Expected<std::string> metadata_field(std::string_view text, std::string_view field);

/// Finds `names` (PEP 503 normalised) among the *.dist-info and *.egg-info entries of
/// `site_dirs` (the first folder holding one wins, as imports do) and reads their versions from
/// METADATA / PKG-INFO. A name not found is left out; a name found twice in one folder, or with
/// unreadable metadata, gets a note.
[[nodiscard]] std::map<std::string, InstalledDist> find_distributions(const std::vector<std::string>& site_dirs,
                                                                      const std::vector<std::string>& names,
                                                                      std::vector<std::string>& notes);

/// torch's library folder for its distribution: "torch/lib" in the site folder holding its
/// dist-info (beside torch/__init__.py, what torch.__file__ names); "" when `torch.metadata` is "".
/// It is not checked to exist.
[[nodiscard]] std::string torch_library_dir(const InstalledDist& torch);

/// find_interpreter, then the cache, then query_interpreter and find_distributions as needed,
/// then the cache write. Errors are those of find_interpreter and query_interpreter; cache
/// trouble is only a note. Same as InterpreterInspection::start(options), then finish().
[[nodiscard]] Expected<InterpreterFacts> inspect_interpreter(const InterpreterOptions& options);

/// inspect_interpreter in two steps, so that the caller can work while the interpreter starts
/// (detect_machine runs the backends' detection meanwhile). start() finds the interpreter,
/// reads the cache and, when the cache has no valid answer, starts the query process and
/// returns at once; finish() collects the answer (within the timeout counted from the start),
/// reads the distributions and writes the cache. Destroying an inspection that was not
/// finished kills the query process. Move-only.
class InterpreterInspection {
 public:
  /// Errors: find_interpreter's, and a query that cannot be started (run_process's).
  [[nodiscard]] static Expected<InterpreterInspection> start(const InterpreterOptions& options);
  /// Errors: query_interpreter's. Call once.
  [[nodiscard]] Expected<InterpreterFacts> finish();

  InterpreterInspection(InterpreterInspection&&) noexcept;
  InterpreterInspection& operator=(InterpreterInspection&&) noexcept;
  ~InterpreterInspection();

 private:
  struct State;
  explicit InterpreterInspection(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace wheelfit::machine
