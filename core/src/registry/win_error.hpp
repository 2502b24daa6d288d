#pragma once
// Windows only, private to the registry component: a Win32 error code as text for a message.
#ifdef _WIN32

#include <windows.h>

#include <string>

#include "wheelfit/util/native_text.hpp"

namespace wheelfit::registry::win {

/// FormatMessageW's text for `code` (the system's language), UTF-8, without the trailing period
/// and line break, with the code: "Access is denied (Windows error 5)".
inline std::string error_text(DWORD code) {
  wchar_t* buffer = nullptr;
  const DWORD n = ::FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                                   nullptr, code, 0, reinterpret_cast<LPWSTR>(&buffer), 0, nullptr);
  std::string text = n > 0 && buffer ? util::utf8_from_wide(std::wstring_view(buffer, n)) : std::string();
  if (buffer) ::LocalFree(buffer);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '.')) text.pop_back();
  if (text.empty()) text = "unknown error";
  return text + " (Windows error " + std::to_string(code) + ")";
}

}  // namespace wheelfit::registry::win

#endif  // _WIN32
