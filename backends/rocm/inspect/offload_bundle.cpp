// Clang offload bundles in a `.hip_fatbin` section: their entry ids and gfx targets.
#include "wheelfit/backends/rocm_offload.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "wheelfit/backends/rocm_targets.hpp"

namespace wheelfit::backends::rocm {
namespace {

constexpr std::string_view kMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::string_view kCompressedMagic = "CCOB";
constexpr std::string_view kHipTriple = "amdgcn-amd-amdhsa-";
constexpr std::size_t kField = 8;                 // every integer field is a uint64
constexpr std::size_t kEntryFields = 3 * kField;  // offset, size, id length
// Far above any real bundle (one entry per offload arch, plus the host), low enough that a
// corrupt header cannot make the reader allocate much.
constexpr std::uint64_t kMaxEntries = 4096;
constexpr std::uint64_t kMaxIdLength = 1024;

// The section's bytes; every read is checked with has() first.
struct Section {
  const unsigned char* data;
  std::size_t size;

  bool has(std::size_t at, std::uint64_t n) const { return at <= size && n <= size - at; }
  bool starts_with(std::size_t at, std::string_view s) const {
    return has(at, s.size()) && std::equal(s.begin(), s.end(), data + at, [](char a, unsigned char b) {
             return static_cast<unsigned char>(a) == b;
           });
  }
  std::uint64_t le(std::size_t at, std::size_t width) const {
    std::uint64_t v = 0;
    for (std::size_t i = width; i-- > 0;) v = (v << 8) | data[at + i];
    return v;
  }
};

struct Entry {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::string id;
  std::size_t header_at = 0;  // where its offset field is, for errors
  std::size_t id_at = 0;
};

struct Found {
  std::vector<std::string> targets;
  std::vector<std::string> ids;
};

std::string n(std::uint64_t v) { return std::to_string(v); }

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// The target id of a HIP device entry, nullopt for any other entry. Ids are
// "<hip|hipv4>-amdgcn-amd-amdhsa-<environment>-<target id>" (clang 12 on; the environment is
// empty) or, from older clang, "hip-amdgcn-amd-amdhsa-<processor>". "" when the entry is a HIP
// amdgcn one that names no target.
std::optional<std::string_view> hip_target(std::string_view id) {
  const auto dash = id.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const auto kind = id.substr(0, dash);
  auto rest = id.substr(dash + 1);
  if ((kind != "hip" && kind != "hipv4") || !rest.starts_with(kHipTriple)) return std::nullopt;
  rest.remove_prefix(kHipTriple.size());
  if (rest.starts_with("gfx")) return rest;
  const auto env_end = rest.find('-');
  return env_end == std::string_view::npos ? std::string_view{} : rest.substr(env_end + 1);
}

// Reads the bundle at `start` (its magic already checked) into `found`; `end` is one past its
// last byte (header or code object). False with `error` set when the bundle is malformed.
bool read_bundle(const Section& s, std::size_t start, Found& found, std::size_t& end, std::string& error) {
  const auto fail = [&error](std::size_t at, const std::string& what) {
    error = "byte " + n(at) + ": " + what;
    return false;
  };
  std::size_t at = start + kMagic.size();
  if (!s.has(at, kField))
    return fail(at, "truncated bundle: the entry count needs 8 bytes, " + n(s.size - at) + " left");
  const std::uint64_t count = s.le(at, kField);
  if (count == 0) return fail(at, "the bundle has no entries");
  if (count > kMaxEntries) return fail(at, "entry count " + n(count) + " is over the limit of " + n(kMaxEntries));
  at += kField;
  if (count > (s.size - at) / kEntryFields)
    return fail(at - kField, "truncated bundle: " + n(count) + " entries need " + n(count * kEntryFields) +
                                 " header bytes at least, " + n(s.size - at) + " left");

  std::vector<Entry> entries;
  for (std::uint64_t i = 1; i <= count; ++i) {
    Entry e;
    e.header_at = at;
    if (!s.has(at, kEntryFields))
      return fail(at, "truncated bundle: entry " + n(i) + " needs 24 header bytes, " + n(s.size - at) + " left");
    e.offset = s.le(at, kField);
    e.size = s.le(at + kField, kField);
    const std::uint64_t length = s.le(at + 2 * kField, kField);
    at += kEntryFields;
    if (length == 0) return fail(at - kField, "entry " + n(i) + " has an empty id");
    if (length > kMaxIdLength)
      return fail(at - kField,
                  "entry " + n(i) + ": id length " + n(length) + " is over the limit of " + n(kMaxIdLength));
    if (!s.has(at, length))
      return fail(at - kField, "truncated bundle: entry " + n(i) + "'s id needs " + n(length) + " bytes, " +
                                   n(s.size - at) + " left");
    e.id_at = at;
    e.id.assign(reinterpret_cast<const char*>(s.data + at), static_cast<std::size_t>(length));
    if (!printable(e.id)) return fail(at, "entry " + n(i) + "'s id is not printable text");
    at += static_cast<std::size_t>(length);
    entries.push_back(std::move(e));
  }

  // Code objects lie after the header and inside the section; offsets count from `start`.
  const std::uint64_t header = at - start;
  const std::uint64_t room = s.size - start;
  std::uint64_t extent = header;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.offset < header || e.offset > room || e.size > room - e.offset)
      return fail(e.header_at, "entry " + n(i + 1) + " (" + e.id + "): code object at offset " + n(e.offset) +
                                   ", size " + n(e.size) + " is not between the end of the header (" + n(header) +
                                   ") and the end of the section (" + n(room) + ")");
    extent = std::max(extent, e.offset + e.size);
  }

  for (const Entry& e : entries) {
    found.ids.push_back(e.id);
    const auto target = hip_target(e.id);
    if (!target) continue;
    auto parsed = parse_target(*target);
    if (!parsed.ok) return fail(e.id_at, "entry id \"" + e.id + "\": " + parsed.error);
    if (std::find(found.targets.begin(), found.targets.end(), parsed.canonical) == found.targets.end())
      found.targets.push_back(std::move(parsed.canonical));
  }
  end = start + static_cast<std::size_t>(extent);
  return true;
}

}  // namespace

OffloadScan scan_offload_bundles(const unsigned char* data, std::size_t size) {
  OffloadScan result;
  if (data == nullptr || size == 0) {
    result.error = "the section is empty: no offload bundle";
    return result;
  }
  const Section s{data, size};
  Found found;
  std::size_t at = 0;
  while (at < size) {
    if (s.starts_with(at, kCompressedMagic)) {
      const std::string version = s.has(at + 4, 2) ? " version " + n(s.le(at + 4, 2)) : "";
      result.error = "byte " + n(at) + ": a compressed offload bundle (\"CCOB\"" + version + ") is not supported";
      return result;
    }
    if (!s.starts_with(at, kMagic)) {
      result.error = "byte " + n(at) + ": not an offload bundle (no \"" + std::string(kMagic) + "\" magic)";
      return result;
    }
    std::size_t end = 0;
    if (!read_bundle(s, at, found, end, result.error)) return result;
    at = end;
    while (at < size && data[at] == 0) ++at;  // the zero padding up to the next bundle
  }
  result.ok = true;
  result.targets = std::move(found.targets);
  result.ids = std::move(found.ids);
  return result;
}

}  // namespace wheelfit::backends::rocm
