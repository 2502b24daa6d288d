#pragma once
// Text from the network held to what the files wheelfit writes can carry: UTF-8 (JSON, TOML,
// pip's reader), one token (a URL on a requirements line), one line (a comment that pip reads
// with Python's str.splitlines(), which breaks at more than '\n').
//
// Thread safety: pure functions.

#include <cstddef>
#include <string>
#include <string_view>

namespace wheelfit::util {

/// The length of the longest prefix of `s` that is well-formed UTF-8 (RFC 3629: no overlong form,
/// no surrogate, nothing past U+10FFFF, no sequence cut short); `s.size()` when all of it is.
[[nodiscard]] std::size_t utf8_valid_prefix(std::string_view s) noexcept;

/// Whether `s` is well-formed UTF-8 (utf8_valid_prefix(s) == s.size()).
[[nodiscard]] bool is_utf8(std::string_view s) noexcept;

/// `s` with each byte that is not part of a well-formed UTF-8 sequence replaced by `replacement`
/// (U+FFFD by default); `s` unchanged when it is UTF-8.
[[nodiscard]] std::string utf8_or_replaced(std::string_view s, std::string_view replacement = "\xef\xbf\xbd");

/// Why `url` is not one token that every reader of a URL takes as written: "" when each byte is
/// printable ASCII (0x21-0x7e); else what the first other byte is and where, such as
/// "holds whitespace (0x20 at byte 14)", "holds a control character (0x0c at byte 3)" or
/// "holds a byte that is not ASCII and not percent-encoded (0xe2 at byte 9)".
[[nodiscard]] std::string url_token_problem(std::string_view url);

/// Why `text` is not one line as Python's str.splitlines() (pip's requirements reader) and TOML
/// read it: "" when it is UTF-8 and holds no line break ('\n', '\r', '\v', '\f', U+001C-U+001E,
/// U+0085, U+2028, U+2029) and no other control character (C0 but '\t', DEL, C1); else "is not
/// UTF-8 (at byte N)", "holds a line break (U+2028 at byte N)" or "holds a control character (...)".
[[nodiscard]] std::string one_line_problem(std::string_view text);

/// `text` as one line for a message quoting it: each byte that is not UTF-8 and each code point
/// one_line_problem refuses (a line break, a control character but '\t') becomes `replacement`.
[[nodiscard]] std::string one_line(std::string_view text, std::string_view replacement);

}  // namespace wheelfit::util
