// wheelfit_test_child.exe: the child the Windows process tests start (tests/windows.cmake). Its
// first argument picks what it does:
//   args ...       prints each further argument, UTF-8, one per line ("<" and ">" around each)
//   bytes N        writes N bytes to stdout and N to stderr, interleaved in 4 KiB pieces
//   env NAME       prints NAME's value, or "<unset>"
//   exit N         exits with status N
//   crash          an access violation (0xC0000005)
//   hang           sleeps forever
//   tree FILE      starts "hang" as a grandchild, writes its process id to FILE, then sleeps forever
// Copied under another name (a fake python.exe or py.exe) it is a fake interpreter whatever its
// arguments: it appends "run" to <itself>.calls and prints the contents of <itself>.answer, as
// tests/machine/fake_python.hpp's scripts do.
#include <windows.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

std::string narrow(const wchar_t* w) {
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, w, -1, nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n > 0 ? n - 1 : 0), '\0');
  if (n > 1) ::WideCharToMultiByte(CP_UTF8, 0, w, -1, out.data(), n, nullptr, nullptr);
  return out;
}

void write(HANDLE h, const std::string& s) {
  DWORD done = 0;
  std::size_t at = 0;
  while (at < s.size() && ::WriteFile(h, s.data() + at, static_cast<DWORD>(s.size() - at), &done, nullptr)) at += done;
}

std::wstring self_path() {
  std::wstring buf(32768, L'\0');
  buf.resize(::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size())));
  return buf;
}

int fake_python() {
  const std::wstring self = self_path();
  std::ofstream(std::filesystem::path(self + L".calls"), std::ios::app) << "run\n";
  std::ifstream in(std::filesystem::path(self + L".answer"), std::ios::binary);
  const std::string answer((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write(::GetStdHandle(STD_OUTPUT_HANDLE), answer + "\n");
  return in ? 0 : 3;
}

}  // namespace

// As wheelfit-probe.exe does: a crash ends the process with the exception's code, no debugger.
LONG WINAPI end_with_the_exception(EXCEPTION_POINTERS* e) {
  ::TerminateProcess(::GetCurrentProcess(), e->ExceptionRecord->ExceptionCode);
  return EXCEPTION_EXECUTE_HANDLER;
}

int wmain(int argc, wchar_t** argv) {
  ::SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
  ::SetUnhandledExceptionFilter(&end_with_the_exception);
  HANDLE out = ::GetStdHandle(STD_OUTPUT_HANDLE), err = ::GetStdHandle(STD_ERROR_HANDLE);
  if (std::filesystem::path(self_path()).filename() != L"wheelfit_test_child.exe") return fake_python();
  if (argc < 2) return 2;
  const std::string mode = narrow(argv[1]);
  if (mode == "args") {
    std::string text;
    for (int i = 2; i < argc; ++i) text += "<" + narrow(argv[i]) + ">\n";
    write(out, text);
    return 0;
  }
  if (mode == "bytes" && argc == 3) {
    const long long n = std::atoll(narrow(argv[2]).c_str());
    const std::string piece(4096, 'x');
    for (long long left = n; left > 0; left -= 4096) {
      const std::string part = piece.substr(0, static_cast<std::size_t>(left < 4096 ? left : 4096));
      write(out, part);
      write(err, part);
    }
    return 0;
  }
  if (mode == "env" && argc == 3) {
    wchar_t buf[4096];
    const DWORD n = ::GetEnvironmentVariableW(argv[2], buf, 4096);
    write(out, n == 0 ? std::string("<unset>") : narrow(buf));
    return 0;
  }
  if (mode == "exit" && argc == 3) return std::atoi(narrow(argv[2]).c_str());
  if (mode == "crash") {
    *static_cast<volatile int*>(nullptr) = 1;
    return 0;
  }
  if (mode == "hang") {
    for (;;) ::Sleep(INFINITE);
  }
  if (mode == "tree" && argc == 3) {
    std::wstring command = L"\"" + self_path() + L"\" hang";
    STARTUPINFOW si{};
    si.cb = sizeof si;
    PROCESS_INFORMATION pi{};
    if (!::CreateProcessW(self_path().c_str(), command.data(), nullptr, nullptr, FALSE, CREATE_NO_WINDOW, nullptr, nullptr,
                          &si, &pi)) {
      return 4;
    }
    std::ofstream(std::filesystem::path(argv[2])) << pi.dwProcessId;
    write(out, "started\n");
    for (;;) ::Sleep(INFINITE);
  }
  write(err, "wheelfit_test_child: unknown mode " + mode + "\n");
  return 2;
}
