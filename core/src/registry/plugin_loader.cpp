// load_plugins: a list of folders, each sorted, on one thread; every folder not used and every file
// not loaded says why.
#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#include <algorithm>
#include <array>
#include <fstream>
#include <type_traits>

#include "entry.hpp"
#ifdef _WIN32
#include "wheelfit/util/win_file.hpp"
#endif
#include "wheelfit/registry/registry.hpp"

namespace wheelfit::registry {

namespace fs = std::filesystem;

namespace {

enum class Elf { yes, no, unreadable };

#ifdef _WIN32
// A DLL: the DOS header's "MZ", and at its e_lfanew (offset 0x3c) the "PE\0\0" signature.
Elf has_pe_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Elf::unreadable;
  std::array<unsigned char, 64> dos{};
  in.read(reinterpret_cast<char*>(dos.data()), dos.size());
  if (in.gcount() != static_cast<std::streamsize>(dos.size()) || dos[0] != 'M' || dos[1] != 'Z') return Elf::no;
  const std::uint32_t at = dos[0x3c] | (dos[0x3d] << 8) | (dos[0x3e] << 16) | (static_cast<std::uint32_t>(dos[0x3f]) << 24);
  std::array<char, 4> sig{};
  in.seekg(at);
  in.read(sig.data(), sig.size());
  if (in.gcount() != static_cast<std::streamsize>(sig.size())) return Elf::no;
  return sig == std::array<char, 4>{'P', 'E', '\0', '\0'} ? Elf::yes : Elf::no;
}

// "*.dll" in any case (Windows names are case-insensitive), not hidden.
bool plugin_name(const std::string& name) {
  if (name.size() <= 4 || name.starts_with(".")) return false;
  std::string ext = name.substr(name.size() - 4);
  for (char& c : ext) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return ext == ".dll";
}
constexpr const char* kNameRule = "not a plugin file name (plugins are named *.dll)";

// Dependencies are searched only in the plugin's own folder and System32: never the current
// folder or PATH (LoadLibraryExW's LOAD_LIBRARY_SEARCH_* flags; Boost.DLL passes them through).
const auto kLoadMode =
    static_cast<boost::dll::load_mode::type>(LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32);

// Loads `file` without Windows' "bad image" / "missing DLL" dialog boxes (the thread's error
// mode, restored after), then pins it: GET_MODULE_HANDLE_EX_FLAG_PIN keeps it mapped until the
// process ends whatever FreeLibrary is called (RTLD_NODELETE's Windows form). "" or why not.
std::string load_pinned(boost::dll::shared_library& library, const fs::path& file) {
  DWORD old_mode = 0;
  const bool set = ::SetThreadErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX, &old_mode) != 0;
  boost::dll::fs::error_code lec;
  library.load(file, kLoadMode, lec);
  if (set) ::SetThreadErrorMode(old_mode, nullptr);
  if (lec || !library.is_loaded()) {
    return "failed to load: " + (lec ? util::win::error_text(static_cast<DWORD>(lec.value())) : std::string("not loaded"));
  }
  HMODULE pinned = nullptr;
  if (!::GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
                            reinterpret_cast<LPCWSTR>(library.native()), &pinned)) {
    return "failed to load: cannot pin it in memory: " + util::win::error_text(::GetLastError());
  }
  return {};
}
#else
bool plugin_name(const std::string& name) { return !(name.size() <= 3 || !name.ends_with(".so") || name.starts_with(".")); }
constexpr const char* kNameRule = "not a plugin file name (plugins are named *.so)";

Elf has_elf_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Elf::unreadable;
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  if (in.gcount() != static_cast<std::streamsize>(magic.size())) return Elf::no;
  return magic == std::array<char, 4>{'\x7f', 'E', 'L', 'F'} ? Elf::yes : Elf::no;
}

// RTLD_NOW: a plugin with an unresolved symbol fails here, with dlerror's text, not later.
// RTLD_LOCAL: plugins do not see each other's symbols. RTLD_NODELETE: never unloaded (lesson 5);
// Boost.DLL passes native flags through (the value lies within load_mode::type's range).
const auto kLoadMode = static_cast<boost::dll::load_mode::type>(
    static_cast<unsigned>(boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local) | RTLD_NODELETE);
#endif

// A file not loaded: the kind of reason and, for a human, the reason.
struct Skip {
  SkipReason kind;
  std::string reason;
};

// The plugin folder's entries sorted by name, once the folder is trusted: absolute, and nobody
// but root and us can change it or any folder above it (a missing one is named here).
Expected<std::vector<fs::directory_entry>> plugin_folder(const fs::path& dir) {
  if (auto trusted = check_trusted_path(dir, "the plugin folder"); !trusted && !trusted.error().is(Errc::not_found)) {
    return Error(trusted.error().code, trusted.error().message + "; refusing to load from it");
  }
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (!fs::exists(st)) return Error(Errc::not_found, dir.string() + ": no such plugin folder");
  if (!fs::is_directory(st)) return Error(Errc::io_error, dir.string() + ": not a folder (expected the plugin folder)");

  std::vector<fs::directory_entry> entries;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) entries.push_back(*it);
  if (ec) return Error(Errc::io_error, dir.string() + ": cannot list the plugin folder: " + ec.message());
  std::sort(entries.begin(), entries.end(), [](const fs::directory_entry& a, const fs::directory_entry& b) {
    return a.path().filename().native() < b.path().filename().native();
  });
  return entries;
}

// Why `file` is not even opened: its name, its type (a symbolic link's target is judged), who
// can change it. nullopt: it may be loaded.
std::optional<Skip> refuse_file(const fs::path& file) {
  if (!plugin_name(file.filename().string())) return Skip{SkipReason::not_plugin_name, kNameRule};
  std::error_code ec;
  const auto fst = fs::status(file, ec);
  if (ec || !fs::is_regular_file(fst)) return Skip{SkipReason::not_regular_file, "not a regular file"};
  if (auto trusted = check_trusted_path(file, "the file"); !trusted) {
#ifdef _WIN32
    const bool world = false;  // modes mean nothing there: the ACL check says who can write
#else
    const bool world = (fst.permissions() & fs::perms::others_write) != fs::perms::none;
#endif
    std::string why = trusted.error().message;
    if (why.starts_with(file.string() + ": ")) why.erase(0, file.string().size() + 2);
    return Skip{world ? SkipReason::world_writable : SkipReason::untrusted, why + "; not loaded"};
  }
  return std::nullopt;
}

// Loads `file` into `library` once its header says it is a shared library; nullopt when loaded.
std::optional<Skip> open_library(boost::dll::shared_library& library, const fs::path& file) {
#ifdef _WIN32
  switch (has_pe_header(file)) {
    case Elf::yes: break;
    case Elf::no: return Skip{SkipReason::not_shared_library, "not a shared library (no PE header: not a DLL)"};
    case Elf::unreadable: return Skip{SkipReason::load_failed, "cannot be opened for reading"};
  }
  if (auto why = load_pinned(library, file); !why.empty()) return Skip{SkipReason::load_failed, why};
#else
  switch (has_elf_header(file)) {
    case Elf::yes: break;
    case Elf::no: return Skip{SkipReason::not_shared_library, "not a shared library (no ELF header)"};
    case Elf::unreadable: return Skip{SkipReason::load_failed, "cannot be opened for reading"};
  }
  boost::dll::fs::error_code lec;
  (void)::dlerror();  // clear any earlier message
  library.load(file, kLoadMode, lec);
  if (lec || !library.is_loaded()) {
    const char* why = ::dlerror();
    return Skip{SkipReason::load_failed, std::string("failed to load: ") + (why ? why : lec.message())};
  }
#endif
  return std::nullopt;
}

// The loaded library's backend: its entry point called, the descriptor it returns checked into
// `descriptor` and `info`; nullopt when both are set.
std::optional<Skip> read_backend(const boost::dll::shared_library& library, const wheelfit_backend_v2*& descriptor,
                                 std::optional<BackendInfo>& info) {
  if (!library.has(WHEELFIT_BACKEND_ENTRY)) {
    return Skip{SkipReason::no_entry, std::string("no ") + WHEELFIT_BACKEND_ENTRY + " entry point: not a wheelfit backend plugin"};
  }
  // has() succeeded, so get() cannot throw.
  const wheelfit_backend_entry_fn entry_fn =
      &library.get<std::remove_pointer_t<wheelfit_backend_entry_fn>>(WHEELFIT_BACKEND_ENTRY);
  try {
    descriptor = entry_fn();
  } catch (...) {
    return Skip{SkipReason::entry_failed, std::string("its ") + WHEELFIT_BACKEND_ENTRY + " threw an exception (a plugin bug)"};
  }
  if (descriptor == nullptr) return Skip{SkipReason::entry_failed, std::string("its ") + WHEELFIT_BACKEND_ENTRY + " returned NULL"};
  auto checked = detail::check_descriptor(descriptor);
  if (!checked) {
    return Skip{checked.error().is(Errc::unsupported) ? SkipReason::abi_mismatch : SkipReason::bad_descriptor,
                checked.error().message};
  }
  info = std::move(*checked);
  return std::nullopt;
}

// The report's error when no folder could be used (each failed, or there was none).
std::optional<Error> no_folder_error(const std::vector<SearchedDir>& searched) {
  std::vector<const SearchedDir*> failed;
  for (const auto& d : searched) {
    if (d.error) failed.push_back(&d);
  }
  if (searched.empty()) return Error(Errc::not_found, "no plugin folder to search");
  if (failed.size() != searched.size()) return std::nullopt;
  if (failed.size() == 1) return *failed.front()->error;
  std::string why;
  for (const auto* d : failed) why += (why.empty() ? "" : "; ") + d->error->message;
  return Error(failed.front()->error->code, "no plugin folder could be used: " + why);
}

}  // namespace

PluginLoadReport load_plugins(Registry& registry, const std::vector<PluginDir>& dirs) {
  PluginLoadReport report;
  // One file: registered, or its reason in the report.
  auto load_file = [&registry, &report](const fs::path& file) {
    boost::dll::shared_library library;
    const wheelfit_backend_v2* descriptor = nullptr;
    std::optional<BackendInfo> info;
    std::optional<Skip> skip = refuse_file(file);
    if (!skip) skip = open_library(library, file);
    if (!skip) skip = read_backend(library, descriptor, info);
    if (auto dup = skip ? registry.entries_.end() : registry.entries_.find(info->name); dup != registry.entries_.end()) {
      skip = Skip{SkipReason::duplicate_name, "backend '" + info->name + "' is supplied by both " + dup->second->info.origin +
                                                  " (loaded) and " + file.string() + " (skipped)"};
    }
    if (skip) {
      report.skipped.push_back(SkippedFile{file, skip->kind, std::move(skip->reason)});
      return;
    }
    info->origin = file.string();
    auto registered = std::make_unique<Registry::Entry>();
    registered->library = std::move(library);
    registered->descriptor = descriptor;
    registered->info = std::move(*info);
    report.loaded.push_back(LoadedPlugin{registered->info.name, file});
    std::string key = registered->info.name;
    registry.entries_.emplace(std::move(key), std::move(registered));
  };
  // One folder: its refusal is recorded in `searched`, and its files in the report.
  auto load_folder = [&load_file](const fs::path& dir, SearchedDir& searched) {
    try {
      auto entries = plugin_folder(dir);
      if (!entries) {
        searched.error = entries.error();
        return;
      }
      for (const auto& entry : *entries) load_file(entry.path());
    } catch (const std::exception& e) {  // only allocation failures can get here
      searched.error = Error(Errc::io_error, dir.string() + ": loading plugins failed: " + e.what());
    }
  };

  try {
    report.dirs.reserve(dirs.size());
    for (const auto& d : dirs) {
      report.dirs.push_back(SearchedDir{d.path, d.source, std::nullopt});
      load_folder(d.path, report.dirs.back());
    }
    if (auto error = no_folder_error(report.dirs)) report.error = std::move(*error);
  } catch (const std::exception& e) {  // only allocation failures can get here
    report.error = Error(Errc::io_error, std::string("loading plugins failed: ") + e.what());
  }
  return report;
}

PluginLoadReport load_plugins(Registry& registry, const fs::path& dir) {
  return load_plugins(registry, std::vector<PluginDir>{PluginDir{dir, DirSource::given}});
}

}  // namespace wheelfit::registry
