// Private to the http transport on Windows: UTF-16 <-> UTF-8 for the W APIs, and a Windows
// error code (GetLastError, SECURITY_STATUS, HRESULT) as text (FormatMessageW, in UTF-8).
#pragma once
#ifdef _WIN32

#include <windows.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace wheelfit::transports::detail {

inline std::string utf8_of(std::wstring_view w) {
  if (w.empty()) return {};
  const int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n > 0 ? n : 0), '\0');
  if (n > 0) WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), out.data(), n, nullptr, nullptr);
  return out;
}

inline std::string utf8_of(const wchar_t* w) { return w ? utf8_of(std::wstring_view(w)) : std::string(); }

inline std::wstring wide_of(std::string_view s) {
  if (s.empty()) return {};
  const int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n > 0 ? n : 0), L'\0');
  if (n > 0) MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), out.data(), n);
  return out;
}

/// "0x8009030E" for a code.
inline std::string hex_code(unsigned long code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08lX", code);
  return buf;
}

/// Windows' own words for `code` ("The system cannot find the file specified"), trailing dots and
/// line breaks dropped; "" when the system has none (wine lacks many, the SEC_E_ ones among them).
inline std::string system_message(unsigned long code) {
  wchar_t* text = nullptr;
  const DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                                 nullptr, code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n && text ? utf8_of(std::wstring_view(text, n)) : std::string();
  if (text) LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ' || out.back() == '.')) out.pop_back();
  return out;
}

/// system_message(code), or "error 0x...." when the system has no words for it.
inline std::string windows_error_text(unsigned long code) {
  std::string out = system_message(code);
  return out.empty() ? "error " + hex_code(code) : out;
}

}  // namespace wheelfit::transports::detail

#endif  // _WIN32
