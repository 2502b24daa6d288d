// wheelfit-probe.exe (Windows only): the process the NVML / CUDA driver probes run in, since
// Windows has no fork (docs/decisions/0033-windows-probe-isolation.md). Usage:
//   wheelfit-probe.exe nvml|cuda <library>
// Loads the library, asks it, prints one JSON answer on stdout (child_process.hpp) and exits 0;
// a wrong call exits 2 with an error answer. Its parent runs it in a Job object with a deadline:
// a driver DLL that crashes or hangs ends this process, never wheelfit.
#include <windows.h>

#include <cstdio>
#include <string>

#include "child_process.hpp"
#include "wheelfit/util/windows_text.hpp"

namespace {
// A crash in the driver ends this process at once with the exception's code as its exit code
// (0xC0000005 ...), which the parent reports: no error dialog, no Windows Error Reporting, no
// debugger attached (wine starts winedbg otherwise, which can hold the process for a minute).
LONG WINAPI end_with_the_exception(EXCEPTION_POINTERS* e) {
  ::TerminateProcess(::GetCurrentProcess(), e && e->ExceptionRecord ? e->ExceptionRecord->ExceptionCode : 0xC0000001u);
  return EXCEPTION_EXECUTE_HANDLER;
}
}  // namespace

int wmain(int argc, wchar_t** argv) {
  ::SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
  ::SetUnhandledExceptionFilter(&end_with_the_exception);
  std::string answer;
  int rc = 2;
  if (argc != 3) {
    answer = R"({"error": "usage: wheelfit-probe nvml|cuda LIBRARY"})";
  } else {
    namespace win = wheelfit::util::win;
    rc = wheelfit::backends::cuda::detail::probe_program_main(win::narrow(argv[1]), win::narrow(argv[2]), answer);
  }
  std::fwrite(answer.data(), 1, answer.size(), stdout);
  std::fflush(stdout);
  return rc;
}
