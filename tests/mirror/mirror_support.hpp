#pragma once
// What the mirror tests share (test_mirror.cpp, test_mirror_folder.cpp, the CLI's): a wheel in
// OUT/pool, the snapshot publishing it, a folder's entries and bytes.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "support/wheel_builder.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/mirror/mirror.hpp"

namespace wheelfit::test_mirror {

namespace fs = std::filesystem;
using test::write_file;

inline std::string metadata_text(const std::string& name, const std::string& version) {
  return "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\nRequires-Python: >=3.10\n";
}

/// A wheel in OUT/pool with its METADATA; the File describing it.
inline mirror::File pool_wheel(const fs::path& out, const std::string& project, const std::string& filename,
                               const std::string& version, std::vector<std::string> machines) {
  const std::string dist = filename.substr(0, filename.find('-'));
  const std::string zip = test::build_zip({{dist + "/__init__.py", "x = 1\n"},
                                           {dist + "-" + version + ".dist-info/METADATA", metadata_text(dist, version)},
                                           {dist + "-" + version + ".dist-info/WHEEL", "Wheel-Version: 1.0\n"}});
  fs::create_directories(mirror::pool_dir(out));
  write_file(mirror::pool_dir(out) / filename, zip);
  mirror::File f;
  f.project = project;
  f.filename = filename;
  f.sha256 = *deliver::sha256_file(mirror::pool_dir(out) / filename);
  f.size = zip.size();
  f.anchors = {filename};
  f.machines = std::move(machines);
  f.fields = {{"version", version}, {"python", "312"}};
  return f;
}

inline mirror::Machine machine_of(const char* name, const char* combo, const char* tier, const char* status) {
  mirror::Machine m;
  m.name = name;
  m.combo = combo;
  m.tier = tier;
  m.status = status;
  return m;
}

inline mirror::Snapshot snapshot_of(const fs::path& out, std::vector<mirror::File> files) {
  mirror::Snapshot s;
  s.out = out;
  s.upstream = "https://example.invalid/index/";
  s.upstream_time = "2026-12-01T00:00:00Z";
  s.repo = "Owner/farm";
  s.machines = {machine_of("a", "cu12.8/torch2.8", "bootstrap", "resolved"), machine_of("b", "cu12.8/torch2.8", "fallback", "resolved")};
  s.files = std::move(files);
  return s;
}

/// Every entry under `dir`, recursively, with what it holds: a file's bytes, "<folder>", or
/// "-> <target>" for a link; two calls compare a folder byte for byte.
inline std::map<std::string, std::string> tree_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = fs::relative(it->path(), dir).string();
    if (it->is_symlink()) out[rel] = "-> " + fs::read_symlink(it->path()).string();
    else if (it->is_directory()) out[rel] = "<folder>";
    else out[rel] = test::read_file(it->path());
  }
  return out;
}

}  // namespace wheelfit::test_mirror
