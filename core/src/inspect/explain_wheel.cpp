// The entry points of `explain`: a wheel judged by its name alone, or by its name and the
// extension modules read from its bytes (the zip's directory, then each binary member). A source
// whose bytes were replaced while they were read (a remote wheel changed on the server) is read
// again from the start, so one explanation never mixes two files.
#include <algorithm>

#include "engine.hpp"
#include "wheelfit/inspect/explain.hpp"

namespace wheelfit::inspect {

namespace detail {

bool is_binary_member(std::string_view path) {
  if (path.empty() || path.back() == '/') return false;
  // Data installed outside the package tree (headers, scripts, data files) is not loaded.
  for (std::string_view skip : {".data/data/", ".data/headers/", ".data/scripts/"})
    if (path.find(skip) != std::string_view::npos) return false;
  const std::string base = basename(path);
  auto ends = [&](std::string_view s) { return base.size() > s.size() && base.compare(base.size() - s.size(), s.size(), s) == 0; };
  if (ends(".so") || ends(".pyd")) return true;
  // libfoo.so.1, libfoo.so.1.2 (vendored libraries)
  auto so = base.find(".so.");
  if (so == std::string::npos || so == 0) return false;
  return std::all_of(base.begin() + static_cast<std::ptrdiff_t>(so + 4), base.end(), [](char ch) { return (ch >= '0' && ch <= '9') || ch == '.'; });
}

Subject subject_from_name(model::WheelName w, const semantics::Policy& policy) {
  Subject s;
  s.display = w.filename;
  s.package = w.name;
  s.combo = policy.parse_combo_label(w.version.local());
  if (!s.combo && !w.version.local().empty()) s.label_line = policy.parse_torch_label(w.version.local());
  if (w.variant_label) s.variants_problem = "only the name was judged: its *.dist-info/variant.json was not read";
  s.wheel = std::move(w);
  return s;
}

namespace {

/// One pass over the source: the directory, every binary member, the judgement.
Expected<Explanation> read_and_judge(ByteSource& source, const model::WheelName& w, const machine::Machine& machine,
                                     const semantics::Policy& policy, const ZipLimits& limits) {
  auto dir = read_zip_directory(source, limits);
  if (!dir) return dir.error();
  Subject s = subject_from_name(w, policy);
  s.binaries_read = true;
  if (w.variant_label) {
    // PEP 825: a variant wheel carries its properties in *.dist-info/variant.json.
    s.variants_problem = source.name() + " has no *.dist-info/variant.json";
    for (const auto& entry : dir->entries) {
      const auto slash = entry.name.find('/');
      if (slash == std::string::npos || entry.name.substr(slash) != "/variant.json" ||
          !entry.name.substr(0, slash).ends_with(".dist-info")) {
        continue;
      }
      auto bytes = read_zip_member(source, entry, limits);
      auto file = bytes ? model::parse_variants_json(*bytes, source.name() + "!" + entry.name)
                        : Expected<model::VariantsFile>(bytes.error());
      if (file) s.variants = std::make_shared<const model::VariantsFile>(std::move(*file));
      else s.variants_problem = file.error().message;
      break;
    }
  }
  for (const auto& entry : dir->entries) {
    if (!is_binary_member(entry.name)) continue;
    FileReport f;
    f.path = entry.name;
    f.suffix = extension_suffix(basename(entry.name));
    auto bytes = read_zip_member(source, entry, limits);
    if (!bytes) {
      f.error = bytes.error().message;
    } else if (auto info = parse_binary(*bytes, source.name() + "!" + entry.name, policy.code_sections())) {
      f.info = std::move(*info);
    } else {
      f.error = info.error().message;
    }
    s.files.push_back(std::move(f));
  }
  auto out = judge(std::move(s), machine, policy);
  out.bytes_fetched = source.bytes_fetched();
  out.wheel_size = source.size();
  out.downloaded_whole = source.downloaded_whole();
  return out;
}

}  // namespace
}  // namespace detail

Expected<Explanation> explain_name(std::string_view filename, const machine::Machine& machine, const semantics::Policy& policy) {
  auto w = model::WheelName::parse(filename);
  if (!w) return w.error();
  return detail::judge(detail::subject_from_name(std::move(*w), policy), machine, policy);
}

Expected<Explanation> explain_wheel(ByteSource& source, std::string_view filename, const machine::Machine& machine,
                                    const semantics::Policy& policy, const ZipLimits& limits) {
  auto w = model::WheelName::parse(filename);
  if (!w) return w.error();
  const std::uint64_t generation = source.generation();
  auto out = detail::read_and_judge(source, *w, machine, policy, limits);
  if (source.generation() == generation) return out;
  // The file was replaced while it was read: what was read so far may belong to either file.
  // The source now holds the new file whole (ByteSource::generation), so a second pass reads
  // one file only.
  out = detail::read_and_judge(source, *w, machine, policy, limits);
  if (out) out->warnings.push_back(source.name() + ": the file changed while it was read; it was read again, whole");
  return out;
}

}  // namespace wheelfit::inspect
