#include "support/cli_support.hpp"

#ifdef _WIN32
#include <windows.h>
#else
#include <sys/wait.h>
#endif

#include <cstdlib>
#include <cwchar>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "support/test_support.hpp"

namespace wheelfit::test {

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

#ifdef _WIN32
std::filesystem::path built_wheelfit() { return binary_dir() / "apps" / "wheelfit" / "wheelfit.exe"; }
#else
std::filesystem::path built_wheelfit() { return binary_dir() / "apps" / "wheelfit" / "wheelfit"; }
#endif

std::string clean_network_env() {
  return "env -u COMFY_ENV_CUDA_WHEELS_INDEX -u WHEELFIT_POLICY -u CONDA_OVERRIDE_CUDA -u CONDA_OVERRIDE_GLIBC "
         "-u WHEELFIT_PLUGIN_PATH -u http_proxy -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy -u GITHUB_TOKEN "
         "-u WHEELFIT_GITHUB_API -u WHEELFIT_RELEASES_REPO -u PIP_CERT -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE "
         "-u SSL_CERT_FILE -u SSL_CERT_DIR -u SSL_CLIENT_CERT WHEELFIT_RETRY_BACKOFF_MS=5";
}

#ifdef _WIN32
namespace {

std::wstring widen(std::string_view text) {
  if (text.empty()) return {};
  const int n = ::MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  ::MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), n);
  return out;
}

// One argument as the C runtime's command-line parser reads it back (backslashes double only
// before a quote).
std::wstring quote_argument(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
  std::wstring q = L"\"";
  std::size_t slashes = 0;
  for (wchar_t c : arg) {
    if (c == L'\\') {
      ++slashes;
      continue;
    }
    q.append(c == L'"' ? slashes * 2 + 1 : slashes, L'\\');
    slashes = 0;
    q += c;
  }
  q.append(slashes * 2, L'\\');
  return q + L"\"";
}

// The environment block of the child: this process's, changed as `env_prefix` says. It takes the
// subset of env(1) the tests use: "env", "-u NAME" (removed) and "NAME=VALUE" (set).
std::wstring environment_for(const std::string& env_prefix) {
  std::vector<std::pair<std::wstring, std::optional<std::wstring>>> changes;
  std::istringstream words(env_prefix);
  for (std::string word; words >> word;) {
    if (word == "env") continue;
    if (word == "-u") {
      words >> word;
      changes.emplace_back(widen(word), std::nullopt);
    } else if (const auto eq = word.find('='); eq != std::string::npos) {
      changes.emplace_back(widen(word.substr(0, eq)), widen(word.substr(eq + 1)));
    } else {
      throw std::runtime_error("test: run_program cannot read the environment prefix word '" + word + "'");
    }
  }
  std::vector<std::wstring> vars;
  if (wchar_t* block = ::GetEnvironmentStringsW()) {
    for (const wchar_t* p = block; *p; p += std::wcslen(p) + 1) vars.emplace_back(p);
    ::FreeEnvironmentStringsW(block);
  }
  auto name_of = [](const std::wstring& var) { return var.substr(0, var.find(L'=', 1)); };
  for (const auto& [name, value] : changes) {
    std::erase_if(vars, [&](const std::wstring& var) { return _wcsicmp(name_of(var).c_str(), name.c_str()) == 0; });
    if (value) vars.push_back(name + L"=" + *value);
  }
  std::wstring out;
  for (const auto& var : vars) out += var + L'\0';
  return out + L'\0';
}

}  // namespace

// Windows: CreateProcessW with the arguments quoted for the C runtime and stdout / stderr in two
// files; no shell.
CliRun run_program(const std::string& env_prefix, const std::filesystem::path& exe, const std::vector<std::string>& args) {
  TempDir io;
  std::wstring cmd = quote_argument(exe.wstring());
  for (const auto& a : args) cmd += L" " + quote_argument(widen(a));
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  auto open_out = [&](const char* name) {
    return ::CreateFileW((io / name).wstring().c_str(), GENERIC_WRITE, FILE_SHARE_READ, &inherit, CREATE_ALWAYS,
                         FILE_ATTRIBUTE_NORMAL, nullptr);
  };
  HANDLE out = open_out("out"), err = open_out("err");
  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = INVALID_HANDLE_VALUE;
  si.hStdOutput = out;
  si.hStdError = err;
  PROCESS_INFORMATION pi{};
  std::wstring env = environment_for(env_prefix);
  const BOOL started = ::CreateProcessW(nullptr, cmd.data(), nullptr, nullptr, TRUE, CREATE_UNICODE_ENVIRONMENT,
                                        env.data(), nullptr, &si, &pi);
  ::CloseHandle(out);
  ::CloseHandle(err);
  if (!started) throw std::runtime_error("test: cannot start " + exe.string() + " (error " + std::to_string(::GetLastError()) + ")");
  ::WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD code = 0;
  ::GetExitCodeProcess(pi.hProcess, &code);
  ::CloseHandle(pi.hThread);
  ::CloseHandle(pi.hProcess);
  return {static_cast<int>(code), read_file(io / "out"), read_file(io / "err")};
}
#else
CliRun run_program(const std::string& env_prefix, const std::filesystem::path& exe, const std::vector<std::string>& args) {
  TempDir io;
  std::string cmd = env_prefix + " " + shell_quote(exe.string());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote((io / "out").string()) + " 2>" + shell_quote((io / "err").string());
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(io / "out"), read_file(io / "err")};
}
#endif

void write_one_wheel_index(const std::filesystem::path& index) {
  const std::string file = "pkg-1.0+cu128torch2.8-cp312-cp312-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl";
  const std::string href = "https://example.test/dl/pkg-1.0%2Bcu128torch2.8-cp312-cp312-manylinux_2_24_x86_64."
                           "manylinux_2_28_x86_64.whl#sha256=" + std::string(64, 'a');
  write_file(index / "pkg" / "index.html", "<html><body><a href=\"" + href + "\">" + file + "</a></body></html>");
}

}  // namespace wheelfit::test
