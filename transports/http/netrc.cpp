// The .netrc parser (netrc.hpp): a tokenizer that knows lines (for messages, comments and macro
// bodies) and a small state machine over its tokens. Fuzzed by tests/fuzz/fuzz_netrc.cpp.
#include "wheelfit/transports/netrc.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "wheelfit/util/text.hpp"

namespace wheelfit::transports {
namespace {

constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

struct Token {
  std::string text;
  std::size_t line = 0;
  bool quoted = false;
};

class Lexer {
 public:
  Lexer(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  /// The next token; nullopt at the end of the text.
  Expected<std::optional<Token>> next() {
    for (;;) {
      skip_space();
      if (pos_ >= text_.size()) return std::optional<Token>();
      const bool first = line_start_;
      line_start_ = false;
      if (first && text_[pos_] == '#') {  // a comment line
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
        continue;
      }
      Token t;
      t.line = line_;
      if (text_[pos_] == '"') {
        t.quoted = true;
        if (auto ok = quoted(t.text); !ok) return ok.error();
      } else {
        while (pos_ < text_.size() && !is_space(text_[pos_])) t.text += text_[pos_++];
      }
      return std::optional<Token>(std::move(t));
    }
  }

  /// After `macdef NAME`: the rest of that line and the macro body, up to and including the next
  /// empty (or blank) line.
  void skip_macro() {
    skip_line();
    while (pos_ < text_.size()) {
      const std::size_t nl = std::min(text_.find('\n', pos_), text_.size());
      const std::string_view body = text_.substr(pos_, nl - pos_);
      const bool blank = util::trim(body).empty();
      pos_ = nl;
      skip_line();
      if (blank) break;
    }
  }

  [[nodiscard]] Unexpected error(std::size_t line, const std::string& problem) const {
    return unexpected(Errc::invalid_input, std::string(source_) + ":" + std::to_string(line) + ": " + problem);
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) {
      if (text_[pos_] == '\n') {
        ++line_;
        line_start_ = true;
      }
      ++pos_;
    }
  }
  void skip_line() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    if (pos_ < text_.size()) {
      ++pos_;
      ++line_;
    }
    line_start_ = true;
  }
  Expected<void> quoted(std::string& out) {
    ++pos_;  // the opening quote
    while (pos_ < text_.size() && text_[pos_] != '\n') {
      const char c = text_[pos_++];
      if (c == '"') return {};
      if (c != '\\' || pos_ >= text_.size() || text_[pos_] == '\n') {
        out += c;
        continue;
      }
      const char e = text_[pos_++];
      out += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
    }
    return error(line_, "a quoted token is not closed on its line");
  }

  std::string_view text_, source_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  bool line_start_ = true;
};

enum class Field { login, password, account };
constexpr std::array<std::string_view, 3> kFieldNames = {"login", "password", "account"};

std::optional<Field> field_of(std::string_view word) {
  for (std::size_t i = 0; i < kFieldNames.size(); ++i) {
    if (util::iequals(word, kFieldNames[i])) return static_cast<Field>(i);
  }
  return std::nullopt;
}

}  // namespace

Expected<Netrc> parse_netrc(std::string_view text, std::string_view source) {
  Lexer lex(text, source);
  if (text.size() > kMaxNetrcBytes) {
    return lex.error(1, "larger than " + std::to_string(kMaxNetrcBytes) + " bytes (" + std::to_string(text.size()) + ")");
  }
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n')) + 1;
    return lex.error(line, "a NUL byte (this is not a text file)");
  }
  Netrc out;
  bool in_entry = false;
  std::array<bool, 3> seen{};
  // The value after keyword `what` (the next token, whatever it says).
  const auto value_of = [&](const Token& keyword, std::string_view what) -> Expected<Token> {
    auto v = lex.next();
    if (!v) return v.error();
    if (!*v) return lex.error(keyword.line, "'" + std::string(what) + "' has no value (the file ends)");
    return std::move(**v);
  };
  for (;;) {
    auto next = lex.next();
    if (!next) return next.error();
    if (!*next) break;
    const Token tok = std::move(**next);
    const bool keyword = !tok.quoted;
    if (keyword && util::iequals(tok.text, "machine")) {
      auto name = value_of(tok, "machine");
      if (!name) return name.error();
      if (name->text.empty()) return lex.error(name->line, "'machine' with an empty host name");
      out.entries.push_back(NetrcEntry{util::ascii_lower(name->text), false, {}, {}, {}, tok.line});
      in_entry = true;
      seen = {};
    } else if (keyword && util::iequals(tok.text, "default")) {
      out.entries.push_back(NetrcEntry{{}, true, {}, {}, {}, tok.line});
      in_entry = true;
      seen = {};
    } else if (const auto field = keyword ? field_of(tok.text) : std::nullopt) {
      const std::string_view name = kFieldNames[static_cast<std::size_t>(*field)];
      if (!in_entry) return lex.error(tok.line, "'" + std::string(name) + "' before any 'machine' or 'default'");
      if (seen[static_cast<std::size_t>(*field)]) {
        return lex.error(tok.line, "'" + std::string(name) + "' given twice for one machine");
      }
      seen[static_cast<std::size_t>(*field)] = true;
      auto v = value_of(tok, name);
      if (!v) return v.error();
      NetrcEntry& e = out.entries.back();
      (*field == Field::login ? e.login : *field == Field::password ? e.password : e.account) = std::move(v->text);
    } else if (keyword && util::iequals(tok.text, "macdef")) {
      auto name = value_of(tok, "macdef");
      if (!name) return name.error();
      lex.skip_macro();
      in_entry = false;
    } else {
      return lex.error(tok.line, "unexpected token where a keyword belongs (machine, default, login, password, "
                                 "account or macdef); the token is not shown, as it may be a password");
    }
  }
  return out;
}

}  // namespace wheelfit::transports
