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

}  // namespace

PluginLoadReport load_plugins(Registry& registry, const std::vector<PluginDir>& dirs) {
  PluginLoadReport report;
  // One folder: its refusal is recorded in `searched`, and its files in the report.
  auto load_folder = [&registry, &report](const fs::path& dir, SearchedDir& searched) {
    try {
      // Absolute, and nobody but root and us can change it or any folder above it (a missing
      // one is named below).
      if (auto trusted = check_trusted_path(dir, "the plugin folder"); !trusted && !trusted.error().is(Errc::not_found)) {
        searched.error = Error(trusted.error().code, trusted.error().message + "; refusing to load from it");
        return;
      }
      std::error_code ec;
      const auto st = fs::status(dir, ec);
      if (!fs::exists(st)) {
        searched.error = Error(Errc::not_found, dir.string() + ": no such plugin folder");
        return;
      }
      if (!fs::is_directory(st)) {
        searched.error = Error(Errc::io_error, dir.string() + ": not a folder (expected the plugin folder)");
        return;
      }

      std::vector<fs::directory_entry> entries;
      fs::directory_iterator it(dir, ec), end;
      for (; !ec && it != end; it.increment(ec)) entries.push_back(*it);
      if (ec) {
        searched.error = Error(Errc::io_error, dir.string() + ": cannot list the plugin folder: " + ec.message());
        return;
      }
      std::sort(entries.begin(), entries.end(), [](const fs::directory_entry& a, const fs::directory_entry& b) {
        return a.path().filename().native() < b.path().filename().native();
      });

      for (const auto& entry : entries) {
        const fs::path& file = entry.path();
        auto skip = [&](SkipReason kind, std::string reason) {
          report.skipped.push_back(SkippedFile{file, kind, std::move(reason)});
        };
        const std::string name = file.filename().string();
        if (!plugin_name(name)) {
          skip(SkipReason::not_plugin_name, kNameRule);
          continue;
        }
        const auto fst = fs::status(file, ec);  // follows a symbolic link: the target is judged
        if (ec || !fs::is_regular_file(fst)) {
          skip(SkipReason::not_regular_file, "not a regular file");
          continue;
        }
        if (auto trusted = check_trusted_path(file, "the file"); !trusted) {
#ifdef _WIN32
          const bool world = false;  // modes mean nothing there: the ACL check says who can write
#else
          const bool world = (fst.permissions() & fs::perms::others_write) != fs::perms::none;
#endif
          std::string why = trusted.error().message;
          if (why.starts_with(file.string() + ": ")) why.erase(0, file.string().size() + 2);
          skip(world ? SkipReason::world_writable : SkipReason::untrusted, why + "; not loaded");
          continue;
        }
#ifdef _WIN32
        switch (has_pe_header(file)) {
          case Elf::yes: break;
          case Elf::no: skip(SkipReason::not_shared_library, "not a shared library (no PE header: not a DLL)"); continue;
          case Elf::unreadable: skip(SkipReason::load_failed, "cannot be opened for reading"); continue;
        }

        boost::dll::shared_library library;
        if (auto why = load_pinned(library, file); !why.empty()) {
          skip(SkipReason::load_failed, why);
          continue;
        }
#else
        switch (has_elf_header(file)) {
          case Elf::yes: break;
          case Elf::no: skip(SkipReason::not_shared_library, "not a shared library (no ELF header)"); continue;
          case Elf::unreadable: skip(SkipReason::load_failed, "cannot be opened for reading"); continue;
        }

        boost::dll::shared_library library;
        boost::dll::fs::error_code lec;
        (void)::dlerror();  // clear any earlier message
        library.load(file, kLoadMode, lec);
        if (lec || !library.is_loaded()) {
          const char* why = ::dlerror();
          skip(SkipReason::load_failed, std::string("failed to load: ") + (why ? why : lec.message()));
          continue;
        }
#endif
        if (!library.has(WHEELFIT_BACKEND_ENTRY)) {
          skip(SkipReason::no_entry, std::string("no ") + WHEELFIT_BACKEND_ENTRY +
                                         " entry point: not a wheelfit backend plugin");
          continue;
        }
        // has() succeeded, so get() cannot throw.
        const wheelfit_backend_entry_fn entry_fn =
            &library.get<std::remove_pointer_t<wheelfit_backend_entry_fn>>(WHEELFIT_BACKEND_ENTRY);
        const wheelfit_backend_v2* descriptor = nullptr;
        try {
          descriptor = entry_fn();
        } catch (...) {
          skip(SkipReason::entry_failed, std::string("its ") + WHEELFIT_BACKEND_ENTRY + " threw an exception (a plugin bug)");
          continue;
        }
        if (descriptor == nullptr) {
          skip(SkipReason::entry_failed, std::string("its ") + WHEELFIT_BACKEND_ENTRY + " returned NULL");
          continue;
        }
        auto info = detail::check_descriptor(descriptor);
        if (!info) {
          if (info.error().is(Errc::unsupported)) skip(SkipReason::abi_mismatch, info.error().message);
          else skip(SkipReason::bad_descriptor, info.error().message);
          continue;
        }
        if (auto dup = registry.entries_.find(info->name); dup != registry.entries_.end()) {
          skip(SkipReason::duplicate_name, "backend '" + info->name + "' is supplied by both " +
                                               dup->second->info.origin + " (loaded) and " + file.string() +
                                               " (skipped)");
          continue;
        }
        info->origin = file.string();
        auto registered = std::make_unique<Registry::Entry>();
        registered->library = std::move(library);
        registered->descriptor = descriptor;
        registered->info = std::move(*info);
        report.loaded.push_back(LoadedPlugin{registered->info.name, file});
        std::string key = registered->info.name;
        registry.entries_.emplace(std::move(key), std::move(registered));
      }
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
    std::vector<const SearchedDir*> failed;
    for (const auto& d : report.dirs) {
      if (d.error) failed.push_back(&d);
    }
    if (report.dirs.empty()) {
      report.error = Error(Errc::not_found, "no plugin folder to search");
    } else if (failed.size() == report.dirs.size() && failed.size() == 1) {
      report.error = *failed.front()->error;
    } else if (failed.size() == report.dirs.size()) {
      std::string why;
      for (const auto* d : failed) why += (why.empty() ? "" : "; ") + d->error->message;
      report.error = Error(failed.front()->error->code, "no plugin folder could be used: " + why);
    }
  } catch (const std::exception& e) {  // only allocation failures can get here
    report.error = Error(Errc::io_error, std::string("loading plugins failed: ") + e.what());
  }
  return report;
}

PluginLoadReport load_plugins(Registry& registry, const fs::path& dir) {
  return load_plugins(registry, std::vector<PluginDir>{PluginDir{dir, DirSource::given}});
}

}  // namespace wheelfit::registry
