// A library's device code read by its headers (library.hpp): the ELF / PE headers through
// image_headers.hpp, read with pread by a file ByteSource, then each device-code section walked
// by the backend through DeviceRules::read_code_at.
#include "wheelfit/inspect/library.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>

#include "engine.hpp"
#include "image_headers.hpp"
#include "wheelfit/inspect/source.hpp"
#include "wheelfit/resolve/demands.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::inspect {

namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kReadChunk = 64ull << 20;  // a whole-section read (a backend without read_code_at), per read

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The headers of the file behind `source`, read by offset.
Expected<detail::ImageLayout> read_layout(ByteSource& source) {
  const std::string name = source.name();
  const detail::ImageReader reader{source.size(),
                                   [&source](std::uint64_t offset, std::uint64_t length) { return source.read(offset, length); },
                                   name};
  const std::uint64_t magic_size = std::min<std::uint64_t>(source.size(), 4);
  auto magic = source.read(0, magic_size);
  if (!magic) return magic.error();
  if (*magic == "\x7f" "ELF") return detail::read_elf_layout(reader);
  if (magic->substr(0, 2) == "MZ") return detail::read_pe_layout(reader, true);
  return unexpected(Errc::unsupported, name + ": neither an ELF nor a PE file (" + std::to_string(source.size()) +
                                           " bytes, no \\x7fELF or MZ magic)");
}

// Whether section `s` of a library of `format` is one the policy names. A PE section name holds
// at most 8 bytes: ".nv_fatb" is what the linker keeps of ".nv_fatbin".
bool is_code_section(const detail::ImageSection& s, BinaryInfo::Format format, const std::vector<std::string>& wanted) {
  return std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
    return s.name == w || (format == BinaryInfo::Format::pe && s.name.size() == 8 && w.substr(0, 8) == s.name);
  });
}

// A library opened and its device-code sections located by its headers, each checked to lie
// inside the file.
struct Located {
  std::unique_ptr<ByteSource> source;
  detail::ImageLayout layout;
  std::vector<std::size_t> code;  // indices into layout.sections
};

Expected<Located> locate(const std::string& path, const semantics::Policy& policy) {
  auto source = open_file_source(path);
  if (!source) return source.error();
  auto layout = read_layout(**source);
  if (!layout) return layout.error();
  Located out{std::move(*source), std::move(*layout), {}};
  const detail::ImageErrors err{path, out.source->size(), out.layout.info.format == BinaryInfo::Format::elf ? "ELF" : "PE"};
  for (std::size_t i = 0; i < out.layout.sections.size(); ++i) {
    const auto& s = out.layout.sections[i];
    if (!s.has_bytes || s.size == 0 || !is_code_section(s, out.layout.info.format, policy.code_sections())) continue;
    if (!err.fits(s.offset, s.size)) return err.past_end(s.label + " (its offset, size)", s.offset, s.size);
    out.code.push_back(i);
  }
  return out;
}

// One section walked by the backend, every read inside the section and counted by the source.
Expected<semantics::DeviceRules::DeviceCode> walk_section(ByteSource& source, const detail::ImageSection& s,
                                                       const semantics::DeviceRules& rules) {
  const semantics::DeviceRules::SectionRead read = [&](std::uint64_t offset, std::size_t length, unsigned char* out) -> Expected<void> {
    if (offset > s.size || length > s.size - offset) {
      return unexpected(Errc::invalid_input, source.name() + ": " + s.label + ": a read of " + std::to_string(length) +
                                                 " bytes at offset " + std::to_string(offset) + " passes the section's " +
                                                 std::to_string(s.size) + " bytes");
    }
    for (std::uint64_t done = 0; done < length;) {
      const std::uint64_t n = std::min<std::uint64_t>(length - done, kReadChunk);
      auto bytes = source.read(s.offset + offset + done, n);
      if (!bytes) return bytes.error();
      std::memcpy(out + done, bytes->data(), bytes->size());
      done += n;
    }
    return {};
  };
  auto code = rules.read_code_at(s.name, s.size, read);
  if (!code) {
    return Error(code.error().code, source.name() + " (" + s.label + " at file offset " + std::to_string(s.offset) +
                                        "): " + code.error().message);
  }
  return code;
}

// "40 SASS, 1 PTX entries".
std::string entries_count(const semantics::DeviceRules::DeviceCode& code) {
  std::vector<std::string> parts;
  for (const auto& [kind, items] : code.entries) {
    std::string name = kind;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    parts.push_back(std::to_string(items.size()) + " " + name);
  }
  return (parts.empty() ? std::string("no") : util::join(parts, ", ")) + " entries";
}

// The size of a library's device-code sections (headers read only); 0 when it has none.
Expected<std::uint64_t> code_bytes(const std::string& path, const semantics::Policy& policy) {
  auto found = locate(path, policy);
  if (!found) return found.error();
  std::uint64_t total = 0;
  for (const std::size_t i : found->code) total += found->layout.sections[i].size;
  return total;
}

// A library's device code as torch's targets (read_library_archs).
Expected<resolve::TorchArchs> archs_of(const LibraryCode& lib, const semantics::Policy& policy) {
  const std::string& path = lib.path;
  if (lib.sections.empty() || lib.device.list.empty()) {
    return unexpected(Errc::not_found, path + ": no device code (no " + util::join(policy.code_sections(), " or ") +
                                           " section with entries): not a " + policy.notation().name + " build?");
  }
  resolve::TorchArchs archs;
  archs.list = lib.device.list;
  archs.entries = lib.device.entries;
  archs.source = "read from " + path + ": " + entries_count(lib.device);
  if (const auto* rules = policy.rules()) {
    // The canonical form of the list, as the policy's rows are (several sections: one list).
    if (auto canonical = rules->parse_list(archs.list)) archs.list = std::move(*canonical);
  }
  return archs;
}

}  // namespace

bool is_library_name(std::string_view filename) {
  const std::string base = lower(detail::basename(filename));
  return detail::is_binary_member(base) || (base.size() > 4 && base.ends_with(".dll"));
}

Expected<LibraryCode> read_library(const std::string& path, const semantics::Policy& policy) {
  auto found = locate(path, policy);
  if (!found) return found.error();
  LibraryCode out;
  out.path = path;
  out.info = found->layout.info;
  out.file_size = found->source->size();
  for (const std::size_t i : found->code) {
    const auto& s = found->layout.sections[i];
    if (!policy.rules()) return unexpected(Errc::unsupported, path + ": the policy was read without its backend's device rules");
    auto code = walk_section(*found->source, s, *policy.rules());
    if (!code) return code.error();
    out.sections.push_back(s.name);
    detail::add_device_code(out.device, std::move(*code));
  }
  out.bytes_read = found->source->bytes_fetched();
  return out;
}

Expected<resolve::TorchArchs> read_library_archs(const std::string& path, const semantics::Policy& policy) {
  auto lib = read_library(path, policy);
  if (!lib) return lib.error();
  return archs_of(*lib, policy);
}

Expected<std::string> find_torch_library(const std::string& lib_dir, const semantics::Policy& policy) {
  std::error_code ec;
  if (!fs::is_directory(lib_dir, ec)) return unexpected(Errc::not_found, lib_dir + ": no such folder (torch's libraries)");
  std::string best;
  std::uint64_t best_size = 0;
  std::vector<std::string> unreadable;  // candidates whose headers could not be read, and why
  std::vector<fs::path> files;
  for (fs::directory_iterator it(lib_dir, ec), end; !ec && it != end; it.increment(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    const std::string name = lower(p.filename().string());
    const bool candidate = (name.starts_with("libtorch") && name.find(".so") != std::string::npos) ||
                           (name.starts_with("torch") && name.ends_with(".dll"));
    if (!candidate) continue;
    auto size = code_bytes(p.string(), policy);
    if (!size) {
      unreadable.push_back(size.error().message);
    } else if (*size > best_size) {
      best = p.string();
      best_size = *size;
    }
  }
  if (best.empty()) {
    return unexpected(Errc::not_found, lib_dir + ": no libtorch*.so or torch*.dll with a " + util::join(policy.code_sections(), " or ") +
                                           " section (a CPU build of torch?)" +
                                           (unreadable.empty() ? std::string() : "; not read: " + util::join(unreadable, "; ")));
  }
  return best;
}

Expected<LibraryExplanation> explain_library(const std::string& path, const machine::Machine& machine, const semantics::Policy& policy) {
  auto lib = read_library(path, policy);
  if (!lib) return lib.error();
  auto archs = archs_of(*lib, policy);
  if (!archs) return archs.error();
  LibraryExplanation out;
  out.library = std::move(*lib);
  std::optional<std::vector<std::string>> targets;
  if (auto t = resolve::device_targets(machine, policy)) targets = std::move(*t);
  else out.warnings.push_back(t.error().message);
  out.machine = resolve::gpus_text(policy.device_prefix(), targets);
  out.verdict = resolve::judge_torch(policy, *archs, targets);
  if (targets && out.verdict.status != resolve::TorchVerdict::Status::unknown) {
    for (const auto& [g, hit] : resolve::cover(policy, archs->list, *targets).served) out.served.push_back(resolve::runs_text(policy, g, hit));
  }
  const std::string& no_kernel = policy.errors().no_kernel;
  switch (out.verdict.status) {
    case resolve::TorchVerdict::Status::runs: out.summary = "it runs here"; break;
    case resolve::TorchVerdict::Status::cannot_run:
      out.summary = "it will not run here: nothing in it runs on " + resolve::targets_text(policy.device_prefix(), out.verdict.uncovered) +
                    (no_kernel.empty() ? std::string() : " (" + no_kernel + ")");
      break;
    case resolve::TorchVerdict::Status::unknown: out.summary = "not checked: " + out.verdict.why_unknown; break;
  }
  return out;
}

}  // namespace wheelfit::inspect
