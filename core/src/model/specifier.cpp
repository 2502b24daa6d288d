#include "wheelfit/model/specifier.hpp"

#include <algorithm>

namespace wheelfit::model {
namespace {

std::string strip_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out += c;
  return out;
}

// The release padded to at least n parts.
std::vector<std::uint64_t> padded(const std::vector<std::uint64_t>& r, std::size_t n) {
  std::vector<std::uint64_t> out = r;
  if (out.size() < n) out.resize(n, 0);
  return out;
}

bool prefix_match(const Version& v, const Version& prefix) {
  if (v.epoch() != prefix.epoch()) return false;
  const auto& p = prefix.release();
  const auto r = padded(v.release(), p.size());
  return std::equal(p.begin(), p.end(), r.begin());
}

}  // namespace

Expected<SpecifierSet> SpecifierSet::parse(std::string_view text) {
  SpecifierSet out;
  out.text_ = std::string(text);
  const std::string s = strip_spaces(text);
  auto bad = [&](const std::string& why) {
    return unexpected(Errc::invalid_input, "'" + std::string(text) + "' is not a version specifier: " + why);
  };
  std::size_t start = 0;
  while (start <= s.size() && !s.empty()) {
    const auto end = std::min(s.find(',', start), s.size());
    const std::string clause = s.substr(start, end - start);
    if (clause.empty()) return bad("an empty clause");
    static const char* ops[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
    std::string op;
    for (const char* o : ops) {
      if (clause.rfind(o, 0) == 0) {
        op = o;
        break;
      }
    }
    if (op.empty()) return bad("clause '" + clause + "' has no operator");
    std::string ver = clause.substr(op.size());
    Clause c;
    c.op = op;
    c.raw = ver;
    if (op == "===") {
      if (ver.empty()) return bad("'===' needs a value");
      out.clauses_.push_back(std::move(c));
    } else {
      if (ver.size() >= 2 && ver.compare(ver.size() - 2, 2, ".*") == 0) {
        if (op != "==" && op != "!=") return bad("'.*' is only allowed after == and !=");
        c.wildcard = true;
        ver.resize(ver.size() - 2);
      }
      auto v = Version::parse(ver);
      if (!v) return bad("clause '" + clause + "': " + v.error().message);
      if (op == "~=" && v->release().size() < 2) return bad("'~=' needs at least two release parts");
      if (c.wildcard && (!v->local().empty() || v->pre() || v->post() || v->dev())) return bad("'.*' after a non-release version");
      c.version = std::move(*v);
      out.clauses_.push_back(std::move(c));
    }
    start = end + 1;
    if (end == s.size()) break;
  }
  return out;
}

bool SpecifierSet::contains(const Version& candidate) const {
  const Version v = candidate.public_version();
  for (const auto& c : clauses_) {
    bool ok = true;
    if (c.op == "===") {
      ok = candidate.str() == c.raw;
    } else if (c.op == "==") {
      if (c.wildcard) ok = prefix_match(v, c.version);
      else ok = (c.version.local().empty() ? v : candidate) == c.version;
    } else if (c.op == "!=") {
      ok = c.wildcard ? !prefix_match(v, c.version) : !(v == c.version);
    } else if (c.op == "~=") {
      // ~=X.Y.Z means >=X.Y.Z, ==X.Y.*
      std::vector<std::uint64_t> prefix(c.version.release().begin(), c.version.release().end() - 1);
      std::string p;
      for (std::size_t i = 0; i < prefix.size(); ++i) p += (i ? "." : "") + std::to_string(prefix[i]);
      if (c.version.epoch()) p = std::to_string(c.version.epoch()) + "!" + p;
      ok = v >= c.version && prefix_match(v, *Version::parse(p));
    } else if (c.op == "<=") {
      ok = v <= c.version;
    } else if (c.op == ">=") {
      ok = v >= c.version;
    } else if (c.op == "<") {
      // "<V" excludes pre-releases of V unless V is itself a pre-release.
      ok = v < c.version && !(v.is_prerelease() && !c.version.is_prerelease() && prefix_match(v, c.version.public_version()) &&
                              v.release() == padded(c.version.release(), v.release().size()));
    } else if (c.op == ">") {
      // ">V" excludes post-releases of V unless V is itself a post-release.
      ok = v > c.version && !(v.post() && !c.version.post() && padded(v.release(), c.version.release().size()) ==
                                                                     padded(c.version.release(), v.release().size()));
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace wheelfit::model
