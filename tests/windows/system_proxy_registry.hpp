#pragma once
// The current user's proxy settings in the registry, for the Windows tests of system_proxy.hpp:
// Internet Settings\Connections\DefaultConnectionSettings, the binary value WinHTTP's
// WinHttpGetIEProxyConfigForCurrentUser reads (wine 8.0 reads only it, not ProxyEnable /
// ProxyServer / ProxyOverride), written in WinINet's layout; and a guard that puts the user's
// own value back.
#include <windows.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace wheelfit::test {

inline constexpr wchar_t kConnectionsKey[] = L"Software\\Microsoft\\Windows\\CurrentVersion\\Internet Settings\\Connections";
inline constexpr wchar_t kConnectionSettings[] = L"DefaultConnectionSettings";

/// Writes the settings: `flags` 1 direct, 2 manual proxy, 4 PAC URL, 8 auto-detect (WPAD).
inline void write_system_proxy(std::uint32_t flags, const std::string& proxy, const std::string& bypass,
                               const std::string& pac_url) {
  std::vector<BYTE> blob;
  const auto u32 = [&blob](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) blob.push_back(static_cast<BYTE>(v >> (8 * i)));
  };
  const auto text = [&](const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    blob.insert(blob.end(), s.begin(), s.end());
  };
  u32(0x46);  // the layout's version
  u32(0);     // a change counter
  u32(flags);
  text(proxy);
  text(bypass);
  text(pac_url);
  blob.resize(blob.size() + 32, 0);
  HKEY key = nullptr;
  REQUIRE(RegCreateKeyExW(HKEY_CURRENT_USER, kConnectionsKey, 0, nullptr, 0, KEY_SET_VALUE, nullptr, &key, nullptr) ==
          ERROR_SUCCESS);
  const LSTATUS s = RegSetValueExW(key, kConnectionSettings, 0, REG_BINARY, blob.data(), static_cast<DWORD>(blob.size()));
  RegCloseKey(key);
  REQUIRE(s == ERROR_SUCCESS);
}

/// Saves the user's value and puts it back (or removes the one written) when it ends.
class SystemProxyRegistry {
 public:
  SystemProxyRegistry() {
    DWORD size = 0;
    if (RegGetValueW(HKEY_CURRENT_USER, kConnectionsKey, kConnectionSettings, RRF_RT_REG_BINARY, nullptr, nullptr, &size) ==
        ERROR_SUCCESS) {
      std::vector<BYTE> v(size);
      if (RegGetValueW(HKEY_CURRENT_USER, kConnectionsKey, kConnectionSettings, RRF_RT_REG_BINARY, nullptr, v.data(), &size) ==
          ERROR_SUCCESS) {
        v.resize(size);
        saved_ = std::move(v);
      }
    }
  }
  ~SystemProxyRegistry() {
    HKEY key = nullptr;
    if (RegOpenKeyExW(HKEY_CURRENT_USER, kConnectionsKey, 0, KEY_SET_VALUE, &key) != ERROR_SUCCESS) return;
    if (saved_) RegSetValueExW(key, kConnectionSettings, 0, REG_BINARY, saved_->data(), static_cast<DWORD>(saved_->size()));
    else RegDeleteValueW(key, kConnectionSettings);
    RegCloseKey(key);
  }
  SystemProxyRegistry(const SystemProxyRegistry&) = delete;
  SystemProxyRegistry& operator=(const SystemProxyRegistry&) = delete;

 private:
  std::optional<std::vector<BYTE>> saved_;
};

}  // namespace wheelfit::test
