// requirements.txt and pylock.toml from the picks (output/locks.hpp).
#include "wheelfit/output/locks.hpp"

#include <sstream>

#include <toml++/toml.h>


namespace wheelfit::output {

namespace {

std::string comment_block(const std::vector<std::string>& comments) {
  std::string out;
  for (const auto& c : comments) out += "# " + c + "\n";
  return out;
}

std::string unlocked_note(const LockedWheel& w) {
  return "not locked: " + w.filename + " (its index publishes no sha256; install it yourself, knowingly)";
}

}  // namespace

std::string requirements_txt(const std::vector<LockedWheel>& wheels, bool by_index, const std::vector<std::string>& comments) {
  std::string out = comment_block(comments);
  std::string missing;
  for (const auto& w : wheels) {
    if (!w.sha256) {
      missing += "# " + unlocked_note(w) + "\n";
      continue;
    }
    out += by_index ? w.name + "==" + w.version : w.name + " @ " + w.location;
    out += " --hash=sha256:" + *w.sha256 + "\n";
  }
  return out + missing;
}

std::string pylock_toml(const std::vector<LockedWheel>& wheels, const std::optional<std::string>& requires_python,
                        const std::vector<std::string>& comments) {
  toml::table doc;
  doc.insert("lock-version", "1.0");
  if (requires_python) doc.insert("requires-python", *requires_python);
  doc.insert("created-by", "wheelfit");
  toml::array packages;
  std::string missing;
  for (const auto& w : wheels) {
    if (!w.sha256) {
      missing += "# " + unlocked_note(w) + "\n";
      continue;
    }
    toml::table wheel;
    wheel.insert("name", w.filename);
    wheel.insert(w.relative ? "path" : "url", w.location);
    if (w.size) wheel.insert("size", static_cast<std::int64_t>(*w.size));
    toml::table hashes;
    hashes.insert("sha256", *w.sha256);
    hashes.is_inline(true);
    wheel.insert("hashes", std::move(hashes));
    wheel.is_inline(true);
    toml::array list;
    list.push_back(std::move(wheel));
    toml::table package;
    package.insert("name", w.name);
    package.insert("version", w.version);
    package.insert("wheels", std::move(list));
    if (w.variants_location) {  // PEP 825's [packages.variants-json]
      toml::table variants;
      variants.insert(w.relative ? "path" : "url", *w.variants_location);
      if (w.variants_sha256) {
        toml::table vh;
        vh.insert("sha256", *w.variants_sha256);
        vh.is_inline(true);
        variants.insert("hashes", std::move(vh));
      }
      package.insert("variants-json", std::move(variants));
    }
    packages.push_back(std::move(package));
  }
  doc.insert("packages", std::move(packages));
  std::ostringstream os;
  const auto flags = toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings;
  os << comment_block(comments) << missing << toml::toml_formatter(doc, flags) << "\n";
  return os.str();
}

}  // namespace wheelfit::output
