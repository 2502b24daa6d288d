// libFuzzer target: the .netrc parser (transports/http/netrc.cpp). Besides "no crash", whatever
// parses must survive a round trip: the entries written back as quoted netrc text parse to the
// same entries.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "wheelfit/transports/netrc.hpp"

namespace {

// `s` as a netrc quoted token (curl's escapes).
std::string netrc_quoted(std::string_view s) {
  static constexpr std::pair<char, std::string_view> kEscapes[] = {
      {'\\', "\\\\"}, {'"', "\\\""}, {'\n', "\\n"}, {'\r', "\\r"}, {'\t', "\\t"}};
  std::string out = "\"";
  for (char c : s) {
    const auto* e = std::find_if(std::begin(kEscapes), std::end(kEscapes), [c](const auto& p) { return p.first == c; });
    if (e != std::end(kEscapes)) out += e->second;
    else out += c;
  }
  return out + "\"";
}

std::string write_back(const wheelfit::transports::Netrc& n) {
  std::string out;
  for (const auto& e : n.entries) {
    out += e.is_default ? "default" : "machine " + netrc_quoted(e.machine);
    if (!e.login.empty()) out += "\n  login " + netrc_quoted(e.login);
    if (!e.password.empty()) out += "\n  password " + netrc_quoted(e.password);
    if (!e.account.empty()) out += "\n  account " + netrc_quoted(e.account);
    out += "\n";
  }
  return out;
}

bool same(const wheelfit::transports::NetrcEntry& a, const wheelfit::transports::NetrcEntry& b) {
  return a.machine == b.machine && a.is_default == b.is_default && a.login == b.login && a.password == b.password &&
         a.account == b.account;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = wheelfit::transports::parse_netrc(text, "fuzz");
  if (!parsed) return 0;
  for (const auto& e : parsed->entries) (void)parsed->find(e.machine);
  const std::string again_text = write_back(*parsed);
  auto again = wheelfit::transports::parse_netrc(again_text, "round trip");
  bool ok = again && again->entries.size() == parsed->entries.size();
  for (std::size_t i = 0; ok && i < parsed->entries.size(); ++i) ok = same(parsed->entries[i], again->entries[i]);
  if (!ok) {
    std::fprintf(stderr, "netrc round trip failed:\n%s\n", again_text.c_str());
    std::abort();
  }
  return 0;
}
