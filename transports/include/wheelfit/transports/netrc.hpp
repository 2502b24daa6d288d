#pragma once
// The .netrc file as curl reads it (and pip, uv, requests after it): per-host login and password
// for HTTP Basic authentication. Pure parsing: the caller reads the file (credentials.hpp).
//
// The grammar: tokens separated by white space (space, tab, CR, LF, FF, VT); entries start with
// `machine NAME` or `default` (any host) and hold `login NAME`, `password PW`, `account X` in any
// order; `macdef NAME` starts a macro whose body runs to the next empty line and is skipped (it
// also ends the entry before it). A token may be double-quoted, as curl accepts since 7.84:
// `password "with space \"and\" quotes"`, escapes \" \\ \n \r \t (any other \c is c); a quoted
// token ends on its line. A line whose first token starts with '#' is a comment; elsewhere '#' is
// an ordinary character (a password may start with one).
// Thread safety: pure functions.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/options.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::transports {

/// The parsed file (options.hpp: plain structs of the core).
using net::Netrc;
using net::NetrcEntry;

/// The largest netrc text parse_netrc reads.
inline constexpr std::size_t kMaxNetrcBytes = 1u << 20;

/// Parses netrc text. Errc::invalid_input "<source>:<line>: <problem>" for: a NUL byte, text above
/// kMaxNetrcBytes, `login` / `password` / `account` before any `machine` or `default`, a keyword
/// without its value (`machine`, `login`, `password`, `account`, `macdef` at the end of the
/// text), a keyword given twice in one entry, a token that is not a keyword where one is
/// expected, an unterminated quoted token. Messages never quote a token: it may be a password.
Expected<Netrc> parse_netrc(std::string_view text, std::string_view source);

}  // namespace wheelfit::transports
