#include "wheelfit/model/numeric_version.hpp"

#include <algorithm>

namespace wheelfit::model {

NumericVersion::NumericVersion(std::vector<std::uint32_t> parts) : parts_(std::move(parts)) {}

Expected<NumericVersion> NumericVersion::parse(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return unexpected(Errc::invalid_input, "'" + std::string(text) + "' is not a dotted number: " + std::string(why));
  };
  if (text.empty()) return bad("it is empty");
  std::vector<std::uint32_t> parts;
  std::size_t i = 0;
  while (true) {
    std::size_t start = i;
    std::uint64_t n = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (i - start >= 9) return bad("a component has more than 9 digits");
      n = n * 10 + static_cast<std::uint64_t>(text[i] - '0');
      ++i;
    }
    if (i == start) return bad(i == text.size() ? "it ends with a dot" : "expected a digit");
    parts.push_back(static_cast<std::uint32_t>(n));
    if (parts.size() > 8) return bad("more than 8 components");
    if (i == text.size()) break;
    if (text[i] != '.') return bad("unexpected character '" + std::string(1, text[i]) + "'");
    ++i;
  }
  NumericVersion out(std::move(parts));
  out.text_ = std::string(text);
  return out;
}

NumericVersion NumericVersion::truncated(std::size_t n) const {
  std::vector<std::uint32_t> out(n, 0);
  for (std::size_t i = 0; i < n && i < parts_.size(); ++i) out[i] = parts_[i];
  return NumericVersion(std::move(out));
}

std::string NumericVersion::str() const {
  if (!text_.empty()) return text_;
  std::string out;
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(parts_[i]);
  }
  return out;
}

std::string NumericVersion::nodot() const {
  std::string out;
  for (auto p : parts_) out += std::to_string(p);
  return out;
}

std::strong_ordering operator<=>(const NumericVersion& a, const NumericVersion& b) noexcept {
  const std::size_t n = std::max(a.parts_.size(), b.parts_.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = a.at(i) <=> b.at(i); c != 0) return c;
  }
  return std::strong_ordering::equal;
}

}  // namespace wheelfit::model
