// LabelTemplate: the data form of a backend's local-label grammar ("cu{line:nodot}torch{torch}").

#include <algorithm>
#include <cctype>

#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::semantics {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A run of digits (and dots when `dotted`) starting at `pos`.
std::string_view number_run(std::string_view s, std::size_t pos, bool dotted) {
  std::size_t end = pos;
  while (end < s.size() && (is_digit(s[end]) || (dotted && s[end] == '.'))) ++end;
  return s.substr(pos, end - pos);
}

// "12.8" style: exactly major.minor... or more parts (ROCm's "6.2.4"); never a trailing dot.
std::optional<model::NumericVersion> dotted_line(std::string_view s) {
  if (s.empty() || s.back() == '.' || s.find('.') == std::string_view::npos) return std::nullopt;
  auto v = model::NumericVersion::parse(s);
  if (!v) return std::nullopt;
  return *v;
}

// "128" -> 12.8, "92" -> 9.2: the last digit is the minor.
std::optional<model::NumericVersion> nodot_line(std::string_view s) {
  if (s.size() < 2 || s.size() > 3) return std::nullopt;
  return model::NumericVersion({static_cast<std::uint32_t>(std::stoul(std::string(s.substr(0, s.size() - 1)))),
                                static_cast<std::uint32_t>(s.back() - '0')});
}

// "2.8" (exactly major.minor) or legacy dot-less "28" / "210" (the first digit is the major).
std::optional<model::NumericVersion> torch_minor(std::string_view s) {
  if (s.find('.') != std::string_view::npos) {
    auto v = model::NumericVersion::parse(s);
    if (!v || v->parts().size() != 2) return std::nullopt;
    return *v;
  }
  if (s.size() < 2 || s.size() > 3) return std::nullopt;
  return model::NumericVersion({static_cast<std::uint32_t>(s[0] - '0'),
                                static_cast<std::uint32_t>(std::stoul(std::string(s.substr(1))))});
}

}  // namespace

Expected<LabelTemplate> LabelTemplate::parse(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return unexpected(Errc::invalid_input, "label template '" + std::string(text) + "': " + why);
  };
  LabelTemplate t;
  t.text_ = std::string(text);
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{') {
      const auto close = text.find('}', i);
      if (close == std::string_view::npos) return bad("an unclosed '{'");
      const std::string_view name = text.substr(i + 1, close - i - 1);
      Kind kind{};
      if (name == "line") kind = Kind::line;
      else if (name == "line:nodot") kind = Kind::line_nodot;
      else if (name == "torch") kind = Kind::torch;
      else return bad("unknown placeholder {" + std::string(name) + "} (known: {line}, {line:nodot}, {torch})");
      if (!t.pieces_.empty() && t.pieces_.back().kind != Kind::literal) return bad("two placeholders in a row");
      t.pieces_.push_back({kind, {}});
      i = close + 1;
    } else if (text[i] == '*') {
      if (i + 1 != text.size()) return bad("'*' may only end a template");
      t.pieces_.push_back({Kind::rest, {}});
      ++i;
    } else {
      std::size_t end = i;
      while (end < text.size() && text[end] != '{' && text[end] != '*') ++end;
      const std::string lit = util::ascii_lower(text.substr(i, end - i));
      if (lit.find('}') != std::string::npos) return bad("a '}' without '{'");
      t.pieces_.push_back({Kind::literal, lit});
      i = end;
    }
  }
  if (!t.has_line() && !t.has_torch()) return bad("it names neither {line} nor {torch}");
  return t;
}

bool LabelTemplate::has_line() const noexcept {
  return std::any_of(pieces_.begin(), pieces_.end(),
                     [](const Piece& p) { return p.kind == Kind::line || p.kind == Kind::line_nodot; });
}

bool LabelTemplate::has_torch() const noexcept {
  return std::any_of(pieces_.begin(), pieces_.end(), [](const Piece& p) { return p.kind == Kind::torch; });
}

std::string LabelTemplate::render(const model::Combo& combo) const {
  std::string out;
  for (const auto& p : pieces_) {
    switch (p.kind) {
      case Kind::literal: out += p.text; break;
      case Kind::line: out += combo.line.str(); break;
      case Kind::line_nodot: out += combo.line.truncated(2).nodot(); break;
      case Kind::torch: out += combo.torch.truncated(2).str(); break;
      case Kind::rest: break;
    }
  }
  return out;
}

std::optional<LabelTemplate::Parts> LabelTemplate::match(std::string_view label) const {
  const std::string s = util::ascii_lower(label);
  Parts parts;
  std::size_t pos = 0;
  for (const auto& p : pieces_) {
    switch (p.kind) {
      case Kind::literal:
        if (std::string_view(s).substr(pos, p.text.size()) != p.text) return std::nullopt;
        pos += p.text.size();
        break;
      case Kind::rest:
        pos = s.size();
        break;
      case Kind::line:
      case Kind::line_nodot:
      case Kind::torch: {
        const std::string_view run = number_run(s, pos, p.kind != Kind::line_nodot);
        auto v = p.kind == Kind::line ? dotted_line(run) : p.kind == Kind::line_nodot ? nodot_line(run) : torch_minor(run);
        if (!v) return std::nullopt;
        (p.kind == Kind::torch ? parts.torch : parts.line) = std::move(v);
        pos += run.size();
        break;
      }
    }
  }
  if (pos != s.size()) return std::nullopt;
  return parts;
}

}  // namespace wheelfit::semantics
