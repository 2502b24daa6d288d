// `wheelfit doctor`: installed distributions (dist-info RECORD) judged by the explain engine.
#include "wheelfit/inspect/doctor.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine.hpp"
#include "wheelfit/inspect/library.hpp"
#include "wheelfit/machine/interpreter.hpp"
#include "wheelfit/model/name.hpp"

namespace wheelfit::inspect {

namespace fs = std::filesystem;

bool DoctorReport::ok() const {
  return std::all_of(dists.begin(), dists.end(), [](const DistReport& d) { return d.fits(); });
}

namespace {

Expected<std::string> read_text(const fs::path& p, std::uint64_t limit) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) return unexpected(Errc::not_found, p.string() + ": " + ec.message());
  if (size > limit) return unexpected(Errc::too_large, p.string() + ": " + std::to_string(size) + " bytes, above the limit of " + std::to_string(limit));
  std::ifstream in(p, std::ios::binary);
  if (!in) return unexpected(Errc::io_error, p.string() + ": cannot be opened");
  std::string out(static_cast<std::size_t>(size), '\0');
  in.read(out.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in.gcount()) != size) return unexpected(Errc::io_error, p.string() + ": short read");
  return out;
}

// The first field of each RECORD row (CSV: a field may be quoted, "" is a quote).
std::vector<std::string> record_paths(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::string field;
    if (text[i] == '"') {
      ++i;
      while (i < text.size()) {
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') field += text[i++];
    }
    if (!field.empty()) out.push_back(std::move(field));
    while (i < text.size() && text[i] != '\n') ++i;  // the rest of the row
    ++i;
  }
  return out;
}

// A wheel file name rebuilt from the WHEEL file's Tag lines, so the name-side judging applies.
std::optional<model::WheelName> tags_of(const fs::path& wheel_file, const std::string& name, const std::string& version) {
  auto text = read_text(wheel_file, 1u << 20);
  if (!text) return std::nullopt;
  std::vector<std::string> py, abi, plat;
  auto add = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("Tag:", 0) != 0) continue;
    std::string tag = line.substr(4);
    tag.erase(0, tag.find_first_not_of(" \t"));
    tag.erase(tag.find_last_not_of(" \t") + 1);
    auto a = tag.find('-'), b = a == std::string::npos ? a : tag.find('-', a + 1);
    if (b == std::string::npos) continue;
    add(py, tag.substr(0, a));
    add(abi, tag.substr(a + 1, b - a - 1));
    add(plat, tag.substr(b + 1));
  }
  if (py.empty()) return std::nullopt;
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ".") + x;
    return s;
  };
  std::string dist = name;
  std::replace(dist.begin(), dist.end(), '-', '_');
  auto w = model::WheelName::parse(dist + "-" + version + "-" + joined(py) + "-" + joined(abi) + "-" + joined(plat) + ".whl");
  if (!w) return std::nullopt;
  return std::move(*w);
}

// A file above the whole-read limit (torch's own kernels: gigabytes): its headers and device
// code, read by offset (library.hpp), with a note saying what was not read.
void read_large(const std::string& path, FileReport& f, const semantics::Policy& policy, const std::string& what,
                std::vector<std::string>& notes) {
  auto lib = read_library(path, policy);
  if (!lib) {
    f.error = lib.error().message;
    return;
  }
  notes.push_back(what + ": " + std::to_string(lib->file_size) + " bytes, above the whole-read limit: its headers and device code read (" +
                  std::to_string(lib->bytes_read) + " bytes), not its libraries, symbols or glibc floor");
  f.info = std::move(lib->info);
  f.device = std::move(lib->device);
}

// The *.dist-info folders of the site folder `dir`, sorted; a listing error goes to `notes`.
std::vector<fs::path> dist_infos(const std::string& dir, std::vector<std::string>& notes) {
  std::error_code ec;
  std::vector<fs::path> infos;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.size() > 10 && name.compare(name.size() - 10, 10, ".dist-info") == 0) infos.push_back(it->path());
  }
  if (ec) notes.push_back(dir + ": cannot be listed: " + ec.message());
  std::sort(infos.begin(), infos.end());
  return infos;
}

// The compiled module `rel` (a RECORD path) of distribution `normalised` in `dir`, parsed (a large
// one by offset, said in `notes`), or why it could not be.
FileReport read_module(const std::string& dir, const std::string& rel, const semantics::Policy& policy,
                       const DoctorOptions& options, const std::string& normalised, std::vector<std::string>& notes) {
  const fs::path full = (fs::path(dir) / rel).lexically_normal();
  FileReport f;
  f.path = rel;
  f.suffix = extension_suffix(full.filename().string());
  auto bytes = read_text(full, options.max_file);
  if (!bytes && bytes.error().is(Errc::too_large)) {
    read_large(full.string(), f, policy, normalised + ": " + rel, notes);
  } else if (!bytes) {
    f.error = bytes.error().message;
  } else if (auto parsed = parse_binary(*bytes, full.string(), policy.code_sections())) {
    f.info = std::move(*parsed);
  } else {
    f.error = parsed.error().message;
  }
  return f;
}

}  // namespace

Expected<DoctorReport> doctor(const std::vector<std::string>& site_dirs, const machine::Machine& machine,
                              const semantics::Policy& policy, const DoctorOptions& options) {
  DoctorReport report;
  report.site_dirs = site_dirs;
  std::set<std::string> seen;  // normalised names: an earlier site folder shadows a later one
  bool any_dir = false;
  for (const auto& dir : site_dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      report.notes.push_back(dir + ": no such folder");
      continue;
    }
    any_dir = true;
    for (const auto& info : dist_infos(dir, report.notes)) {
      ++report.distributions;
      // Name and version: METADATA, else the folder name.
      std::string stem = info.filename().string();
      stem.resize(stem.size() - 10);
      std::string name = stem.substr(0, stem.find('-'));
      std::string version = stem.find('-') == std::string::npos ? std::string() : stem.substr(stem.find('-') + 1);
      if (auto meta = read_text(info / "METADATA", 16u << 20)) {
        if (auto n = machine::metadata_field(*meta, "Name")) name = *n;
        if (auto v = machine::metadata_field(*meta, "Version")) version = *v;
      }
      const std::string normalised = model::normalize_name(name);
      if (!seen.insert(normalised).second) {
        report.notes.push_back(info.string() + ": shadowed by " + normalised + " in an earlier site folder; not judged");
        continue;
      }
      auto record = read_text(info / "RECORD", 64u << 20);
      if (!record) {
        report.notes.push_back(normalised + " " + version + ": no RECORD (" + record.error().message + "); its files are unknown");
        continue;
      }
      detail::Subject s;
      s.display = normalised + " " + version;
      s.package = normalised;
      s.binaries_read = true;
      if (auto v = model::Version::parse(version)) {
        s.combo = policy.parse_combo_label(v->local());
        if (!s.combo && !v->local().empty()) s.label_line = policy.parse_torch_label(v->local());
      }
      s.wheel = tags_of(info / "WHEEL", normalised, version);
      DistReport dist;
      dist.name = normalised;
      dist.version = version;
      dist.dist_info = info.string();
      dist.site_dir = dir;
      for (const auto& rel : record_paths(*record)) {
        if (!detail::is_binary_member(rel)) continue;
        dist.modules.push_back(rel);
        s.files.push_back(read_module(dir, rel, policy, options, normalised, report.notes));
      }
      if (s.files.empty()) continue;  // pure Python: nothing compiled to judge
      dist.explanation = detail::judge(std::move(s), machine, policy);
      report.dists.push_back(std::move(dist));
    }
  }
  if (!any_dir) {
    std::string list;
    for (const auto& d : site_dirs) list += (list.empty() ? "" : ", ") + d;
    return unexpected(Errc::not_found, "no site folder to walk: " + (list.empty() ? std::string("none given") : list));
  }
  return report;
}

}  // namespace wheelfit::inspect
