// parse_simple_html: a hand-written, single-pass scanner for PEP 503 pages.
//
// It jumps from '<' to '<' with memchr and looks closely only at <a> and <base> start tags and
// </a> end tags; every other tag is stepped over (quotes respected), comments and raw-text
// elements (script, style, title, textarea) are skipped whole. Each byte is looked at a bounded
// number of times, so the cost is linear in the page size whatever the page holds: an
// unterminated tag, quote or comment ends the scan instead of being re-scanned.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "page_text.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/safe_text.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::index {
namespace {

using util::iequals;
using detail::is_ascii_space;

using util::ascii::is_alnum;
using util::ascii::is_alpha;
using util::ascii::is_digit;

// ---------------------------------------------------------------------------------------------
// Character references (HTML 13.2.5.72 onwards, the subset index pages use).

struct NamedEntity {
  std::string_view name;
  std::string_view utf8;
};

// Sorted by name (byte order) for binary search.
constexpr std::array<NamedEntity, 83> kEntities{{
    {"AMP", "&"},
    {"COPY", "\xc2\xa9"},
    {"GT", ">"},
    {"LT", "<"},
    {"NewLine", "\n"},
    {"QUOT", "\""},
    {"REG", "\xc2\xae"},
    {"Tab", "\t"},
    {"amp", "&"},
    {"apos", "'"},
    {"ast", "*"},
    {"bsol", "\\"},
    {"bull", "\xe2\x80\xa2"},
    {"cent", "\xc2\xa2"},
    {"colon", ":"},
    {"comma", ","},
    {"commat", "@"},
    {"copy", "\xc2\xa9"},
    {"darr", "\xe2\x86\x93"},
    {"dash", "\xe2\x80\x90"},
    {"deg", "\xc2\xb0"},
    {"divide", "\xc3\xb7"},
    {"dollar", "$"},
    {"emsp", "\xe2\x80\x83"},
    {"ensp", "\xe2\x80\x82"},
    {"equals", "="},
    {"euro", "\xe2\x82\xac"},
    {"excl", "!"},
    {"ge", "\xe2\x89\xa5"},
    {"grave", "`"},
    {"gt", ">"},
    {"hellip", "\xe2\x80\xa6"},
    {"hyphen", "\xe2\x80\x90"},
    {"iexcl", "\xc2\xa1"},
    {"iquest", "\xc2\xbf"},
    {"laquo", "\xc2\xab"},
    {"larr", "\xe2\x86\x90"},
    {"lbrack", "["},
    {"lcub", "{"},
    {"ldquo", "\xe2\x80\x9c"},
    {"le", "\xe2\x89\xa4"},
    {"lowbar", "_"},
    {"lpar", "("},
    {"lsqb", "["},
    {"lsquo", "\xe2\x80\x98"},
    {"lt", "<"},
    {"mdash", "\xe2\x80\x94"},
    {"micro", "\xc2\xb5"},
    {"middot", "\xc2\xb7"},
    {"nbsp", "\xc2\xa0"},
    {"ndash", "\xe2\x80\x93"},
    {"ne", "\xe2\x89\xa0"},
    {"num", "#"},
    {"para", "\xc2\xb6"},
    {"percnt", "%"},
    {"period", "."},
    {"plus", "+"},
    {"plusmn", "\xc2\xb1"},
    {"pound", "\xc2\xa3"},
    {"quest", "?"},
    {"quot", "\""},
    {"raquo", "\xc2\xbb"},
    {"rarr", "\xe2\x86\x92"},
    {"rbrack", "]"},
    {"rcub", "}"},
    {"rdquo", "\xe2\x80\x9d"},
    {"reg", "\xc2\xae"},
    {"rpar", ")"},
    {"rsqb", "]"},
    {"rsquo", "\xe2\x80\x99"},
    {"sect", "\xc2\xa7"},
    {"semi", ";"},
    {"shy", "\xc2\xad"},
    {"sol", "/"},
    {"thinsp", "\xe2\x80\x89"},
    {"times", "\xc3\x97"},
    {"trade", "\xe2\x84\xa2"},
    {"uarr", "\xe2\x86\x91"},
    {"verbar", "|"},
    {"vert", "|"},
    {"yen", "\xc2\xa5"},
    {"zwj", "\xe2\x80\x8d"},
    {"zwnj", "\xe2\x80\x8c"},
}};
static_assert(std::is_sorted(kEntities.begin(), kEntities.end(),
                             [](const NamedEntity& a, const NamedEntity& b) { return a.name < b.name; }));

// The legacy references HTML still decodes without a ';' ("&amp" in old generators' hrefs).
constexpr std::array<NamedEntity, 14> kLegacyEntities{{
    {"AMP", "&"}, {"COPY", "\xc2\xa9"}, {"GT", ">"}, {"LT", "<"}, {"QUOT", "\""}, {"REG", "\xc2\xae"},
    {"amp", "&"}, {"copy", "\xc2\xa9"}, {"gt", ">"}, {"lt", "<"}, {"nbsp", "\xc2\xa0"}, {"quot", "\""},
    {"reg", "\xc2\xae"}, {"shy", "\xc2\xad"},
}};

constexpr std::size_t kMaxEntityName = 32;

std::optional<std::string_view> find_entity(std::string_view name) {
  const auto it = std::lower_bound(kEntities.begin(), kEntities.end(), name,
                                   [](const NamedEntity& e, std::string_view n) { return e.name < n; });
  if (it != kEntities.end() && it->name == name) return it->utf8;
  return std::nullopt;
}

// HTML's remapping of numeric references 0x80..0x9F to Windows-1252 characters.
constexpr std::array<char32_t, 32> kWindows1252{
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void append_utf8(std::string& out, char32_t cp) {
  if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp >= 0x80 && cp <= 0x9F) cp = kWindows1252[cp - 0x80];
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes the character reference at in[i] == '&' into out; returns the index after it, or
// std::nullopt when the '&' starts no reference (the caller then keeps it literally).
std::optional<std::size_t> decode_reference(std::string& out, std::string_view in, std::size_t i,
                                            bool in_attribute) {
  std::size_t j = i + 1;
  if (j < in.size() && in[j] == '#') {
    ++j;
    const bool hex = j < in.size() && (in[j] == 'x' || in[j] == 'X');
    if (hex) ++j;
    const std::size_t digits_start = j;
    char32_t value = 0;
    for (; j < in.size() && (hex ? detail::is_hex_digit(in[j]) : is_digit(in[j])); ++j) {
      const char c = in[j];
      const unsigned digit = is_digit(c) ? unsigned(c - '0') : unsigned(detail::to_lower_ascii(c) - 'a' + 10);
      if (value <= 0x10FFFF) value = value * (hex ? 16u : 10u) + digit;  // saturates past the range
    }
    if (j == digits_start) return std::nullopt;  // "&#" or "&#x" without digits
    if (j < in.size() && in[j] == ';') ++j;
    append_utf8(out, value);
    return j;
  }
  while (j < in.size() && j - (i + 1) < kMaxEntityName && is_alnum(in[j])) ++j;
  const std::string_view name = in.substr(i + 1, j - (i + 1));
  if (name.empty()) return std::nullopt;
  if (j < in.size() && in[j] == ';') {
    if (auto utf8 = find_entity(name)) {
      out.append(*utf8);
      return j + 1;
    }
  }
  // Legacy references without ';': the longest one that prefixes the name. In an attribute
  // value HTML leaves "&ampx" and "&amp=" alone (they are query strings, not references).
  const NamedEntity* best = nullptr;
  for (const NamedEntity& e : kLegacyEntities) {
    if (name.starts_with(e.name) && (!best || e.name.size() > best->name.size())) best = &e;
  }
  if (!best) return std::nullopt;
  const std::size_t after = i + 1 + best->name.size();
  if (in_attribute && after < in.size() && (is_alnum(in[after]) || in[after] == '=')) return std::nullopt;
  out.append(best->utf8);
  return after;
}

// Appends `in` to `out` with character references decoded; unknown ones stay as written.
void append_decoded(std::string& out, std::string_view in, bool in_attribute) {
  std::size_t i = 0;
  while (i < in.size()) {
    const std::size_t amp = in.find('&', i);
    if (amp == std::string_view::npos) {
      out.append(in.substr(i));
      return;
    }
    out.append(in.substr(i, amp - i));
    if (auto next = decode_reference(out, in, amp, in_attribute)) {
      i = *next;
    } else {
      out += '&';
      i = amp + 1;
    }
  }
}

// A value with its character references decoded: a view of `raw` itself when it holds no '&'
// (the common case, no allocation), else a view of `storage`.
std::string_view decoded(std::string_view raw, std::string& storage, bool in_attribute) {
  if (raw.find('&') == std::string_view::npos) return raw;
  storage.clear();
  storage.reserve(raw.size());
  append_decoded(storage, raw, in_attribute);
  return storage;
}

// ---------------------------------------------------------------------------------------------
// Tokenizer pieces. Each returns where scanning continues; `end` when the input ran out.

const char* find_char(const char* p, const char* end, char c) noexcept {
  if (p >= end) return nullptr;
  return static_cast<const char*>(std::memchr(p, c, static_cast<std::size_t>(end - p)));
}

// Steps over a tag's attributes up to and including its '>', calling on_attr(name, value) for
// each. Returns nullptr when the input ends inside the tag (the tag is then dropped, as HTML
// drops a tag cut off by the end of the file).
template <class OnAttr>
const char* scan_attributes(const char* p, const char* end, OnAttr&& on_attr) {
  for (;;) {
    while (p < end && (is_ascii_space(*p) || *p == '/')) ++p;
    if (p >= end) return nullptr;
    if (*p == '>') return p + 1;
    const char* name_start = p++;  // a leading '=' belongs to the name (HTML 13.2.5.32)
    while (p < end && !is_ascii_space(*p) && *p != '/' && *p != '>' && *p != '=') ++p;
    const std::string_view name(name_start, static_cast<std::size_t>(p - name_start));
    while (p < end && is_ascii_space(*p)) ++p;
    std::string_view value;
    if (p < end && *p == '=') {
      ++p;
      while (p < end && is_ascii_space(*p)) ++p;
      if (p >= end) return nullptr;
      if (*p == '"' || *p == '\'') {
        const char* close = find_char(p + 1, end, *p);
        if (!close) return nullptr;
        value = std::string_view(p + 1, static_cast<std::size_t>(close - p - 1));
        p = close + 1;
      } else {
        const char* v = p;
        while (p < end && !is_ascii_space(*p) && *p != '>') ++p;
        value = std::string_view(v, static_cast<std::size_t>(p - v));
      }
    }
    on_attr(name, value);
  }
}

// After "<!": a comment "<!-- ... -->" (also "<!-->", "<!--->" and "--!>" endings) or a
// declaration / bogus comment up to the next '>'.
const char* skip_markup_declaration(const char* lt, const char* end) {
  if (end - lt >= 4 && std::memcmp(lt, "<!--", 4) == 0) {
    const char* p = lt + 4;
    if (p < end && *p == '>') return p + 1;
    if (end - p >= 2 && p[0] == '-' && p[1] == '>') return p + 2;
    while ((p = find_char(p, end, '-')) != nullptr) {
      if (end - p >= 3 && p[1] == '-' && p[2] == '>') return p + 3;
      if (end - p >= 4 && p[1] == '-' && p[2] == '!' && p[3] == '>') return p + 4;
      ++p;
    }
    return end;
  }
  const char* gt = find_char(lt + 2, end, '>');
  return gt ? gt + 1 : end;
}

// The '<' of the end tag "</name" closing a raw-text element, or end.
const char* find_raw_text_end(const char* p, const char* end, std::string_view name) {
  while ((p = find_char(p, end, '<')) != nullptr) {
    const char* n = p + 2;
    if (end - p >= 2 && p[1] == '/' && static_cast<std::size_t>(end - n) >= name.size() &&
        iequals(std::string_view(n, name.size()), name)) {
      const char* after = n + name.size();
      if (after == end || is_ascii_space(*after) || *after == '/' || *after == '>') return p;
    }
    ++p;
  }
  return end;
}

bool is_raw_text_element(std::string_view name) {
  return iequals(name, "script") || iequals(name, "style") || iequals(name, "title") || iequals(name, "textarea");
}

// ---------------------------------------------------------------------------------------------

// An anchor as the scanner saw it: views into the page, decoded only when it is emitted.
struct RawAnchor {
  std::string_view href, requires_python, yanked;  // raw attribute values
  bool has_href = false, has_requires_python = false, has_yanked = false;
  std::string_view text;   // the anchor's only text run so far, raw
  std::string text_buf;    // the decoded text once it spans several runs (nested tags, comments)
  bool text_in_buf = false;

  void add_text(std::string_view run) {
    if (run.empty()) return;
    if (!text_in_buf && text.empty()) {
      text = run;
      return;
    }
    if (!text_in_buf) {
      append_decoded(text_buf, text, false);
      text_in_buf = true;
    }
    append_decoded(text_buf, run, false);
  }
  [[nodiscard]] std::string decoded_text() const {
    if (text_in_buf) return std::string(detail::trim_ascii(text_buf));
    std::string storage;
    return std::string(detail::trim_ascii(decoded(text, storage, false)));
  }
};

constexpr bool is_c0_or_space(char c) noexcept { return static_cast<unsigned char>(c) <= 0x20; }

// The href as a browser reads it: leading and trailing C0 controls and spaces stripped, tabs and
// newlines inside removed (WHATWG URL parsing). Nothing else changes. A view of `href` unless a
// tab or newline had to go.
std::string_view clean_href(std::string_view href, std::string& storage) {
  std::size_t b = 0;
  std::size_t e = href.size();
  while (b < e && is_c0_or_space(href[b])) ++b;
  while (e > b && is_c0_or_space(href[e - 1])) --e;
  href = href.substr(b, e - b);
  // '\t', '\n' and '\r' are all below 0x0e: one word test, and the exact work only when it hits.
  if (!detail::any_byte(
          href, [](std::uint64_t w) { return detail::below_bits(w, 0x0e); },
          [](unsigned char c) { return c < 0x0e; })) {
    return href;
  }
  std::string out;
  out.reserve(href.size());
  for (char c : href) {
    if (c != '\t' && c != '\n' && c != '\r') out += c;
  }
  storage = std::move(out);
  return storage;
}

// The position of the last '/' in s, or npos.
std::size_t last_slash(std::string_view s) noexcept {
#if defined(__GLIBC__)
  const void* p = ::memrchr(s.data(), '/', s.size());
  return p ? static_cast<std::size_t>(static_cast<const char*>(p) - s.data()) : std::string_view::npos;
#else
  return s.rfind('/');
#endif
}

std::string skip_reason(std::string_view href, std::string_view why) {
  std::string out;
  out.reserve(href.size() + why.size() + 16);
  out += "href ";
  detail::append_quoted(out, href);
  out += ": ";
  out += why;
  return out;
}

// True for the farm's every anchor: an absolute http(s) href with a path, and no character
// reference, whitespace, control character or byte that is not ASCII, query, fragment or dot segment, not ending in
// '/'. Such an href is already its own resolved URL, so emit() skips decoding, cleaning,
// splitting and resolving it. One word-at-a-time pass; anything else takes the general path.
bool is_plain_absolute(std::string_view href) noexcept {
  std::size_t start = 0;
  if (href.starts_with("https://")) start = 8;
  else if (href.starts_with("http://")) start = 7;
  else return false;
  if (href.size() <= start || href.back() == '/') return false;
  const char* p = href.data();
  std::size_t i = 0;
  std::uint64_t carry = 0;  // as in has_dot_segment: a '/' ending the previous word
  auto bad = [](std::uint64_t w) {
    using namespace detail;
    return byte_bits(w, '&') | byte_bits(w, '#') | byte_bits(w, '?') | below_bits(w, 0x21) | byte_bits(w, 0x7f) | (w & kHighs);
  };
  for (; std::endian::native == std::endian::little && i + 8 <= href.size(); i += 8) {
    const std::uint64_t w = detail::load_word(p + i);
    const std::uint64_t slashes = detail::byte_bits(w, '/');
    if (bad(w) != 0 || (((slashes << 8) | carry) & detail::byte_bits(w, '.')) != 0) return false;
    carry = slashes >> 56;
  }
  for (; i < href.size(); ++i) {
    const auto c = static_cast<unsigned char>(href[i]);
    if (c == '&' || c == '#' || c == '?' || c <= 0x20 || c >= 0x7f) return false;
    if (c == '.' && i > 0 && href[i - 1] == '/') return false;
  }
  return last_slash(href) >= start;  // a '/' after the authority: there is a path
}

// The end of emit(): the Link from its resolved URL (the file name is the decoded last segment).
void emit_link(Page& page, detail::PageNotes& notes, const RawAnchor& a, std::string_view href, std::string url,
               std::size_t segment_begin, std::size_t segment_end, std::optional<std::string> sha256) {
  Link link;
  link.sha256 = std::move(sha256);
  link.filename = percent_decode(std::string_view(url).substr(segment_begin, segment_end - segment_begin));
  if (const std::string_view why = detail::filename_problem(link.filename); !why.empty()) {
    page.skipped.push_back(skip_reason(href, "file name " + detail::quote_for_message(link.filename) + " " + std::string(why)));
    return;
  }
  link.url = std::move(url);
  // Text that is not UTF-8 would make every JSON that carries it unreadable (decision 0021).
  const auto utf8 = [&](std::string text, const char* what) {
    if (util::is_utf8(text)) return text;
    notes.text_not_utf8(std::string(what) + " of href " + detail::quote_for_message(href));
    return util::utf8_or_replaced(text);
  };
  link.text = utf8(a.decoded_text(), "the text");
  if (a.has_requires_python && !a.requires_python.empty()) {
    std::string storage;
    const std::string_view value = decoded(a.requires_python, storage, true);
    if (util::is_utf8(value)) link.requires_python = std::string(value);
    else notes.text_not_utf8("data-requires-python of href " + detail::quote_for_message(href));
  }
  if (a.has_yanked) {
    link.yanked = true;
    std::string storage;
    link.yank_reason = utf8(std::string(decoded(a.yanked, storage, true)), "data-yanked");
  }
  page.links.push_back(std::move(link));
}

// Turns one anchor into a Link, or into a skip reason.
void emit(Page& page, detail::PageNotes& notes, const RawAnchor& a, const detail::UriParts& base) {
  if (a.has_href && is_plain_absolute(a.href)) {
    const std::size_t slash = last_slash(a.href);
    emit_link(page, notes, a, a.href, std::string(a.href), slash + 1, a.href.size(), std::nullopt);
    return;
  }
  if (!a.has_href) {
    page.skipped.push_back("anchor " + detail::quote_for_message(a.decoded_text()) + ": no href");
    return;
  }
  std::string decode_storage, clean_storage;
  const std::string_view href = clean_href(decoded(a.href, decode_storage, true), clean_storage);
  if (href.empty()) {
    page.skipped.push_back(skip_reason(href, "empty href"));
    return;
  }
  if (href.front() == '#') {
    page.skipped.push_back(skip_reason(href, "in-page link"));
    return;
  }
  // A form feed, a VT, a NEL or U+2028 left in the URL is a line break to pip's reader; a space
  // starts another token (decision 0021).
  if (const std::string why = util::url_token_problem(href); !why.empty()) {
    page.skipped.push_back(skip_reason(href, "the URL " + why));
    notes.unsafe_url(page.skipped.back());
    return;
  }
  const std::size_t hash = href.find('#');
  const std::string_view target = href.substr(0, hash);
  if (target.substr(0, target.find('?')).ends_with('/')) {  // resolves to a directory wherever it points
    page.skipped.push_back(skip_reason(href, "directory link"));
    return;
  }
  std::string url;
  const detail::PathRange path = detail::resolve_into(url, base, target);
  const std::string_view path_text = std::string_view(url).substr(path.begin, path.end - path.begin);
  const std::string_view segment = path_text.substr(last_slash(path_text) + 1);  // npos + 1 == 0
  if (segment.empty()) {
    page.skipped.push_back(skip_reason(href, "directory link"));
    return;
  }
  std::optional<std::string> sha256;
  if (hash != std::string_view::npos) {
    detail::FragmentHash fragment = detail::parse_hash_fragment(href.substr(hash + 1));
    if (fragment.bad_sha256) {
      page.skipped.push_back(skip_reason(href, "sha256 fragment is not 64 hex digits"));
      return;
    }
    sha256 = std::move(fragment.sha256);
  }
  const auto segment_begin = static_cast<std::size_t>(segment.data() - url.data());
  emit_link(page, notes, a, href, std::move(url), segment_begin, segment_begin + segment.size(), std::move(sha256));
}

// Compares two runs of ASCII digits as the numbers they write, however long: <0, 0 or >0.
int compare_version_numbers(std::string_view a, std::string_view b) noexcept {
  a.remove_prefix(std::min(a.find_first_not_of('0'), a.size()));
  b.remove_prefix(std::min(b.find_first_not_of('0'), b.size()));
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b);
}

// PEP 629: the page's <meta name="pypi:repository-version" content="X.Y"> (`raw`, as written)
// against the version this reader follows. A newer major version may change what the page's
// markup means: an error naming the page. A newer minor version only adds: read, with a warning
// in `warnings`; so is a content that is no version 1.0 or later.
std::optional<Error> check_repository_version(std::string_view raw, std::string_view page_url,
                                              std::vector<std::string>& warnings) {
  std::string storage;
  const std::string_view v = detail::trim_ascii(decoded(raw, storage, true));
  const std::string major(std::to_string(kRepositoryVersionMajor));
  const std::string ours = major + "." + std::to_string(kRepositoryVersionMinor);
  const std::string where = std::string(page_url) + ": repository version " + detail::quote_for_message(v) +
                            " (PEP 629, <meta name=\"pypi:repository-version\">)";
  const std::size_t dot = v.find('.');
  const std::string_view x = v.substr(0, dot);
  const std::string_view y = dot == std::string_view::npos ? std::string_view() : v.substr(dot + 1);
  if (util::ascii::all_digits(x) && compare_version_numbers(x, major) > 0) {  // "2.0", also "2" or "2.0.1"
    return Error(Errc::unsupported, where + " is newer than " + major + ".x, the versions this wheelfit reads: the page is "
                                        "not read (its markup may mean something else)");
  }
  if (!util::ascii::all_digits(x) || !util::ascii::all_digits(y) || compare_version_numbers(x, "1") < 0) {
    warnings.push_back(where + " is no PEP 629 version (<major>.<minor>, 1.0 or later); the page is read as " + ours);
    return std::nullopt;
  }
  if (compare_version_numbers(x, major) == 0 && compare_version_numbers(y, std::to_string(kRepositoryVersionMinor)) > 0) {
    warnings.push_back(where + " is newer than " + ours + ", the version this wheelfit reads; the page is read as " + ours +
                       " (what the newer version adds is not used)");
  }
  return std::nullopt;
}

// What the tokenizer keeps of a page: its anchors, and the first <base href> and the first
// <meta name="pypi:repository-version"> (PEP 629), raw.
struct Markup {
  std::vector<RawAnchor> anchors;
  std::optional<std::string_view> base_href;
  std::optional<std::string_view> repository_version;
  bool in_anchor = false;  ///< text goes to anchors.back()
};

// A start tag named `name`, its attributes from `name_end` read into `m`: the position after the
// tag (and after a raw text element's content), or nullptr when the tag never ends.
const char* start_tag(std::string_view name, const char* name_end, const char* end, Markup& m) {
  const char* next = nullptr;
  if (iequals(name, "a")) {
    RawAnchor anchor;  // of a duplicate attribute, the first wins
    next = scan_attributes(name_end, end, [&](std::string_view n, std::string_view v) {
      if (!anchor.has_href && iequals(n, "href")) {
        anchor.has_href = true;
        anchor.href = v;
      } else if (!anchor.has_requires_python && iequals(n, "data-requires-python")) {
        anchor.has_requires_python = true;
        anchor.requires_python = v;
      } else if (!anchor.has_yanked && iequals(n, "data-yanked")) {
        anchor.has_yanked = true;
        anchor.yanked = v;
      }
    });
    if (!next) return nullptr;
    m.anchors.push_back(std::move(anchor));  // an open <a> is closed by the next one
    m.in_anchor = true;
  } else if (iequals(name, "base")) {
    std::optional<std::string_view> href;
    next = scan_attributes(name_end, end, [&](std::string_view n, std::string_view v) {
      if (!href && iequals(n, "href")) href = v;
    });
    if (next && !m.base_href && href) m.base_href = *href;
  } else if (iequals(name, "meta")) {
    std::optional<std::string_view> meta_name, content;
    next = scan_attributes(name_end, end, [&](std::string_view n, std::string_view v) {
      if (!meta_name && iequals(n, "name")) meta_name = v;
      else if (!content && iequals(n, "content")) content = v;
    });
    if (next && !m.repository_version && content && meta_name &&
        iequals(detail::trim_ascii(*meta_name), "pypi:repository-version")) {
      m.repository_version = *content;
    }
  } else {
    next = scan_attributes(name_end, end, [](std::string_view, std::string_view) {});
    if (next && is_raw_text_element(name)) next = find_raw_text_end(next, end, name);
  }
  return next;
}

// The page's markup as the HTML tokenizer reads it: declarations, processing instructions and
// bogus comments skipped, end tags closing an anchor, a '<' that starts no tag kept as text.
Markup read_markup(std::string_view body) {
  Markup m;
  const char* p = body.data();
  const char* const end = p + body.size();
  m.anchors.reserve(body.size() / 256);  // about one anchor per 270 bytes on index pages
  while (p < end) {
    const char* lt = find_char(p, end, '<');
    if (!lt) {
      if (m.in_anchor) m.anchors.back().add_text(std::string_view(p, static_cast<std::size_t>(end - p)));
      break;
    }
    if (m.in_anchor && lt > p) m.anchors.back().add_text(std::string_view(p, static_cast<std::size_t>(lt - p)));
    const char* after = lt + 1;
    const char c = after < end ? *after : '\0';
    if (c == '!') {
      p = skip_markup_declaration(lt, end);
    } else if (c == '?') {
      const char* gt = find_char(after, end, '>');
      p = gt ? gt + 1 : end;
    } else if ((c == '/' && after + 1 < end && is_alpha(after[1])) || is_alpha(c)) {  // an end or a start tag
      const char* name_begin = c == '/' ? after + 1 : after;
      const char* name_end = name_begin + 1;
      while (name_end < end && !is_ascii_space(*name_end) && *name_end != '/' && *name_end != '>') ++name_end;
      const std::string_view name(name_begin, static_cast<std::size_t>(name_end - name_begin));
      const char* next = c == '/' ? scan_attributes(name_end, end, [](std::string_view, std::string_view) {})
                                  : start_tag(name, name_end, end, m);
      if (!next) break;
      if (c == '/' && m.in_anchor && iequals(name, "a")) m.in_anchor = false;
      p = next;
    } else if (c == '/' && after + 1 < end) {  // "</>" is dropped, "</ ..." is a bogus comment
      const char* gt = after[1] == '>' ? after + 1 : find_char(after, end, '>');
      p = gt ? gt + 1 : end;
    } else {  // a '<' that starts no tag is text
      if (m.in_anchor) m.anchors.back().add_text(std::string_view(lt, 1));
      p = after;
    }
  }
  return m;
}

}  // namespace

Expected<Page> parse_simple_html(std::string_view body, std::string_view page_url) {
  if (const std::size_t nul = body.find('\0'); nul != std::string_view::npos) {
    return unexpected(Errc::invalid_input, std::string(page_url) + ": not an HTML page (NUL byte at offset " +
                                               std::to_string(nul) + ")");
  }
  const Markup markup = read_markup(body);
  Page page;
  if (markup.repository_version) {
    if (auto refused = check_repository_version(*markup.repository_version, page_url, page.warnings)) return std::move(*refused);
  }
  std::string base_url(page_url);
  if (markup.base_href) {
    std::string decode_storage, clean_storage;
    const std::string_view href = clean_href(decoded(*markup.base_href, decode_storage, true), clean_storage);
    if (const std::string why = util::url_token_problem(href); why.empty()) {
      base_url = resolve_url(page_url, href);
    } else {
      page.warnings.push_back(std::string(page_url) + ": <base href=" + detail::quote_for_message(href) + "> " + why +
                              "; ignored: the links resolve against the page's own URL");
    }
  }
  const detail::UriParts base = detail::split_uri(base_url);
  detail::PageNotes notes;
  page.links.reserve(markup.anchors.size());
  for (const RawAnchor& a : markup.anchors) emit(page, notes, a, base);
  notes.flush(page, page_url);
  return page;
}

}  // namespace wheelfit::index
