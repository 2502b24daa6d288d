#pragma once
// WHEEL_INDEX_REGISTRY: backend name -> what the backend supplies. Backends are plugins: shared
// libraries (CMake MODULEs) exporting one C entry point (plugin_abi.h) that returns a plain
// descriptor: its default index, the env var overriding it, its Releases repository, its torch
// label and PyTorch index pattern, its policy data (arch lists, fallback combos per CPU arch) as
// JSON text, and its detection. The core knows no backend by name: adding one is one plugin.
//
// Registration is explicit: the executable calls load_plugins(registry, plugin_dirs()) once at
// start-up; nothing registers itself during static initialisation.
//
// Lifetime: a registry entry owns the plugin's library first and its descriptor second, so the
// library outlives everything read from it. Plugins are never unloaded: they are opened with
// RTLD_NODELETE, so even destroying the Registry leaves their code mapped (backends load vendor
// runtimes, which must not be unloaded either).
//
// Thread safety: load and add during start-up, on one thread; find/names/choose_index may then
// run concurrently. detect() calls into the plugin: call it from one thread at a time per backend
// (the returned text lives in the plugin's buffer until its next detect call); builtin_policy
// may run concurrently.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/registry/plugin_abi.h"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::registry {

/// The backend's target functions (plugin_abi.h): its device-target grammar, its coverage rule
/// and its device-code reader. The code they point to lives as long as the plugin (never
/// unloaded) or, for a backend added in-process, as long as the program.
struct TargetFunctions {
  const char* (*parse_target)(const char*, int*) = nullptr;
  const char* (*parse_target_list)(const char*, int*) = nullptr;
  int (*match_targets)(const char*, const char*, const char**) = nullptr;
  const char* (*read_device_code)(const char*, const unsigned char*, std::size_t) = nullptr;
  /// The native variant provider (ABI 2 revision 1); nullptr when the backend provides none.
  const char* (*variant_properties)(const char*) = nullptr;
  /// Describes a target list by kind (ABI 2 revision 2); nullptr when the backend does not.
  const char* (*describe_target_list)(const char*) = nullptr;
  /// Reads a section through the core's read function (ABI 2 revision 3); nullptr when the
  /// backend does not (its sections are then read whole for read_device_code).
  const char* (*read_device_code_at)(const char*, std::uint64_t, wheelfit_section_read_fn, void*) = nullptr;
};

/// What a backend supplies, copied out of its descriptor (so it stays valid on its own).
struct BackendInfo {
  std::string name;                 ///< the registry key: "cuda", "rocm" ([a-z0-9_-]+)
  std::string description;          ///< one line for `wheelfit plugins`
  std::string index_url;            ///< default wheel index; empty when none is published
  std::string index_env;            ///< env var that overrides the index ("COMFY_ENV_CUDA_WHEELS_INDEX")
  std::string releases_repo;        ///< "Comfy-Forge/cuda-wheels"; empty when none
  std::string policy_json;          ///< the backend's policy data (policies/README.md, format 2)
  std::string origin;               ///< the plugin file, or what registered it ("test")
  bool has_detection = false;       ///< whether detect() can ask the backend
  TargetFunctions targets;          ///< all but read_device_code are required
};

/// Checks a descriptor the way load_plugins does and copies it into a BackendInfo: the ABI
/// version is read first (Errc::unsupported naming `origin` and both versions unless it is
/// WHEELFIT_BACKEND_ABI_VERSION), then `size` (at least sizeof(wheelfit_backend_v2)), then
/// the name ([a-z0-9_-]+, at most 64 characters), every string field (NULL is refused; ""
/// means "none"; policy_json must not be empty) and the required target functions. Errors
/// other than the version are Errc::invalid_input naming `origin`.
Expected<BackendInfo> read_descriptor(const wheelfit_backend_v2* descriptor, const std::string& origin);

/// The policy a resolve or explain judges with for `backend`: the file `policy_file` when given
/// (--policy / WHEELFIT_POLICY), else the backend's own policy data, with the backend's target
/// functions as its DeviceRules. Errors name the file or "<origin> (built-in policy)".
Expected<semantics::Policy> make_policy(const BackendInfo& backend, const std::optional<std::string>& policy_file);

/// The backend's target functions as DeviceRules (what make_policy wires into the policy).
std::shared_ptr<const semantics::DeviceRules> device_rules(const BackendInfo& backend);

struct PluginLoadReport;
struct PluginDir;

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(Registry&&) noexcept;
  Registry& operator=(Registry&&) noexcept;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Adds a backend that has no plugin behind it (no detection): for tests and embedders. A
  /// second backend with the same name is refused (Errc::invalid_input naming both origins);
  /// the first stays. An invalid name is Errc::invalid_input.
  Expected<void> add(BackendInfo info);
  [[nodiscard]] const BackendInfo* find(std::string_view name) const;
  /// Names in sorted order.
  [[nodiscard]] std::vector<std::string> names() const;
  /// Every backend, sorted by name.
  [[nodiscard]] std::vector<const BackendInfo*> backends() const;

  /// Runs the backend's detection and returns its JSON text (plugin_abi.h documents the
  /// object). A detection that failed inside the plugin is still a value: the JSON carries
  /// "error" and the caller parses it. Errors: Errc::not_found for an unknown backend,
  /// Errc::unsupported "backend X has no detection" when it supplies none, Errc::invalid_input
  /// when the plugin breaks the ABI (returns NULL, or lets an exception out).
  [[nodiscard]] Expected<std::string> detect(std::string_view backend) const;

  /// The backend's built-in policy (make_policy without a file), read on the first call and
  /// shared after it, an error included: a fleet asks it for each machine's torch label. May be
  /// called from several threads at once. Errc::not_found for an unknown backend.
  [[nodiscard]] Expected<std::shared_ptr<const semantics::Policy>> builtin_policy(std::string_view backend) const;

 private:
  struct Entry;  // { the library, the descriptor, the BackendInfo }: defined in registry.cpp
  friend PluginLoadReport load_plugins(Registry& registry, const std::vector<PluginDir>& dirs);
  std::map<std::string, std::unique_ptr<Entry>, std::less<>> entries_;
};

/// Why load_plugins skipped a file.
enum class SkipReason {
  not_plugin_name,     ///< the name does not end in ".so" (or starts with '.')
  not_regular_file,    ///< a directory, socket, dangling link...
  world_writable,      ///< anyone could have replaced it
  untrusted,           ///< group-writable, owned by another user, or reached through a folder others can write
  not_shared_library,  ///< no ELF header
  load_failed,         ///< dlopen refused it (the reason carries dlerror's text)
  no_entry,            ///< no wheelfit_backend_entry symbol
  entry_failed,        ///< the entry returned NULL or threw
  abi_mismatch,        ///< built for another WHEELFIT_BACKEND_ABI_VERSION (both versions named)
  bad_descriptor,      ///< too small, a bad or empty name, a NULL string field
  duplicate_name,      ///< another file already supplies that backend (both files named)
};
[[nodiscard]] std::string_view to_string(SkipReason reason) noexcept;

struct SkippedFile {
  std::filesystem::path file;
  SkipReason kind;
  std::string reason;  ///< for a human, without `file`: "built for wheelfit backend ABI 2; this wheelfit reads ABI 1"
};

struct LoadedPlugin {
  std::string backend;  ///< the registry key
  std::filesystem::path file;
};

/// Where a folder of the plugin search list comes from.
enum class DirSource {
  env,      ///< an entry of WHEELFIT_PLUGIN_PATH
  builtin,  ///< next to the executable (builtin_plugin_dir())
  given,    ///< named by the caller of load_plugins(registry, dir)
};
/// "WHEELFIT_PLUGIN_PATH", "built-in", "given".
[[nodiscard]] std::string_view to_string(DirSource source) noexcept;

/// One folder of the plugin search list.
struct PluginDir {
  std::filesystem::path path;
  DirSource source = DirSource::given;
  bool operator==(const PluginDir&) const = default;
};

/// What happened to one folder of the search list.
struct SearchedDir {
  std::filesystem::path dir;
  DirSource source = DirSource::given;
  /// Set when the folder was not used (nothing was loaded from it): Errc::not_found (no such
  /// folder), Errc::io_error (not a folder, unreadable), Errc::invalid_input (not absolute, or
  /// untrusted: check_trusted_path).
  /// The message names the folder.
  std::optional<Error> error;
};

/// What load_plugins did: every folder in search order, and the files in the order it looked at
/// them (folder by folder, each sorted by name).
struct PluginLoadReport {
  std::vector<SearchedDir> dirs;
  std::vector<LoadedPlugin> loaded;
  std::vector<SkippedFile> skipped;
  /// Set when no folder at all could be used (each was missing, refused or unreadable; or the
  /// list was empty); nothing was loaded then. With one folder this is that folder's error; with
  /// several, Errc of the first, and the message names each folder and why.
  std::optional<Error> error;
  [[nodiscard]] bool ok() const noexcept { return !error.has_value(); }
};

/// Loads every backend plugin of the folders `dirs` into `registry`, on the calling thread,
/// folder by folder in list order, each folder's files in file-name order. Only regular files
/// named "*.so" are considered (anything else is listed as skipped); a folder that is relative or
/// fails check_trusted_path is refused as a whole; a file that fails it (world_writable, or
/// untrusted: group-writable, another user's, or a link into a folder others can write), a
/// file that is not a shared library or fails to
/// load (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE), one without the entry symbol, with another ABI
/// version, with a bad descriptor or with a backend name already loaded is skipped with its
/// reason. A backend name found twice: the first file (earlier folder, else earlier name) wins;
/// the other is skipped as duplicate_name, naming both files. A folder that is missing, refused
/// or unreadable is recorded in its SearchedDir and the others are still searched: the report
/// is an error only when no folder could be used. Never throws for anything a file contains.
PluginLoadReport load_plugins(Registry& registry, const std::vector<PluginDir>& dirs);

/// load_plugins over the one folder `dir` (DirSource::given): its error is the report's error.
PluginLoadReport load_plugins(Registry& registry, const std::filesystem::path& dir);

#ifndef _WIN32
/// Why code may not be loaded through a file system object owned by `uid` with mode `mode`
/// (st_mode) by a process whose effective user is `euid`: "world-writable", "group-writable",
/// "owned by uid 1000 (neither root nor you)"; nullopt when it may. Trusted: owned by root or
/// by `euid`, and writable by neither its group nor others, as ssh (StrictModes) and sudo
/// judge their files. A `parent` folder (one on the way to the plugin) that is root-owned with
/// the sticky bit, such as /tmp, may be writable by others: nobody can rename or remove what
/// another user put in it. Pure.
[[nodiscard]] std::optional<std::string> untrusted_because(unsigned uid, unsigned mode, bool parent, unsigned euid);
#else
/// Windows: what the trust check reads of a folder's or file's security descriptor
/// (GetNamedSecurityInfoW), docs/decisions/0035-windows-plugin-trust.md.
struct SecurityFacts {
  /// One ACCESS_ALLOWED entry of the DACL that applies to the object itself (inherit-only
  /// entries, which only pass down to new children, are left out; deny entries are ignored).
  struct Grant {
    std::string who;        ///< "NT AUTHORITY\Authenticated Users", or the SID's text
    bool trusted = false;   ///< SYSTEM, Administrators, TrustedInstaller, OWNER RIGHTS or this user
    std::uint32_t mask = 0; ///< the entry's access mask
  };
  std::string owner;           ///< the owner's name, or its SID's text
  bool owner_trusted = false;  ///< SYSTEM, Administrators, TrustedInstaller or this user
  bool has_dacl = true;        ///< false: a NULL DACL, which grants everyone everything
  std::vector<Grant> grants;
};
/// Why code may not be loaded through an object with these facts: "owned by X (neither SYSTEM,
/// Administrators, TrustedInstaller nor you)", "open to everyone (it has no access list)",
/// "writable by BUILTIN\Users"; nullopt when it may. Trusted: a trusted owner, and no allow entry
/// for anyone else carrying a right that changes it (write or append data, delete, write the DACL
/// or the owner, generic write or all; a folder's delete-child). A `parent` folder (one on the way
/// to the plugin) may let others add entries (FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY: C:\ grants
/// Authenticated Users that), as a sticky /tmp does on Linux: they cannot replace what is there.
/// Pure.
[[nodiscard]] std::optional<std::string> untrusted_because(const SecurityFacts& facts, bool folder, bool parent);
#endif

/// Checks that `path` (a plugin folder, or a plugin file) and every folder passed on the way to
/// it from / are trusted. Windows: from the drive's root, each part judged by its security
/// descriptor (untrusted_because(SecurityFacts)), a reparse point (symbolic link, junction, mount
/// point) anywhere on the way refused (Errc::invalid_input), ".." taken lexically; elsewhere
/// as follows: trusted (untrusted_because, with this process's effective user), walking one
/// name at a time and following symbolic links as the kernel does (at most 40), so that a link
/// cannot lead around the check. Returns the path the walk arrived at (no links in it).
/// Errors, each beginning "<path>: ": Errc::invalid_input (relative, or untrusted: "<noun> is
/// group-writable, so ..." or "the folder /x on the way to it is world-writable, so ..."),
/// Errc::not_found (a part is missing), Errc::io_error (a part cannot be examined, or is not a
/// folder).
[[nodiscard]] Expected<std::filesystem::path> check_trusted_path(const std::filesystem::path& path,
                                                                 std::string_view noun = "it");

/// The plugin search list: the folders of `env_value` (WHEELFIT_PLUGIN_PATH: ':'-separated, like
/// PATH, ';' on Windows; empty entries are ignored, there is no "current folder" entry), in order, then
/// `builtin`. A folder listed again (the same path after lexical normalisation, or the same
/// existing folder by fs::equivalent) is searched once, at its first place, so naming the
/// built-in folder in the variable changes nothing. Pure but for fs::equivalent.
[[nodiscard]] std::vector<PluginDir> plugin_dirs(std::optional<std::string_view> env_value,
                                                 const std::filesystem::path& builtin);

/// plugin_dirs(WHEELFIT_PLUGIN_PATH when set, builtin_plugin_dir()): what the executables load.
[[nodiscard]] std::vector<PluginDir> plugin_dirs();

/// The built-in plugin folder, relative to the running executable, in this order:
///  1. the installed layout: `<prefix>/lib/wheelfit/plugins` for an executable in `<prefix>/bin`
///     (taken when that folder exists);
///  2. the build tree: `<build>/plugins`, where `<build>` is the executable's folder or the one or
///     two above it that holds CMakeCache.txt (`<build>/apps/wheelfit/wheelfit`, `<build>/tests/x`);
///  3. otherwise the installed-layout path (so the error names where plugins were expected).
/// The executable is found with boost::dll::program_location() (/proc/self/exe); when that
/// fails (no /proc), the installed folder under the configured install prefix,
/// `<CMAKE_INSTALL_PREFIX>/lib/wheelfit/plugins`: never a path relative to the current folder.
[[nodiscard]] std::filesystem::path builtin_plugin_dir();
/// builtin_plugin_dir() for an executable at `program` ("" = unknown).
[[nodiscard]] std::filesystem::path builtin_plugin_dir(const std::filesystem::path& program);

/// Which index a resolve reads for `backend`: `cli_index` (--index) if given, else the backend's
/// env var if set and not blank, else the backend's default. A trailing '/' is added.
/// Errc::unsupported when the backend publishes no index and none was given.
struct IndexChoice {
  std::string url;
  std::string origin;  ///< "--index", "env COMFY_ENV_CUDA_WHEELS_INDEX", "default for cuda"
};
Expected<IndexChoice> choose_index(const BackendInfo& backend, const std::optional<std::string>& cli_index,
                                   const std::optional<std::string>& env_value);

}  // namespace wheelfit::registry
