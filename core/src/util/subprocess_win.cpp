// Windows: util/subprocess over CreateProcessW (subprocess.cpp is the POSIX one). The child
// starts suspended, joins a Job object (KILL_ON_JOB_CLOSE, DIE_ON_UNHANDLED_EXCEPTION: a crash
// ends it with its exception code instead of a dialog) and only then runs, so everything it
// starts is in the job too; TerminateJobObject at the deadline ends the whole tree. Its stdout
// and stderr are named pipes read with overlapped I/O in one wait loop (no reader threads, no
// deadlock on large output); stdin is NUL; CREATE_NO_WINDOW.
#ifdef _WIN32
#include <windows.h>

#include <algorithm>
#include <atomic>
#include <cwctype>
#include <memory>
#include <mutex>
#include <utility>

#include "wheelfit/util/subprocess.hpp"
#include "wheelfit/util/windows_text.hpp"

namespace wheelfit::util {
namespace {

using Clock = std::chrono::steady_clock;

// A HANDLE closed once, on destruction or on request; INVALID_HANDLE_VALUE is kept as null.
struct HandleCloser {
  void operator()(HANDLE h) const noexcept { ::CloseHandle(h); }
};
using Handle = std::unique_ptr<void, HandleCloser>;
HANDLE valid(HANDLE h) noexcept { return h == INVALID_HANDLE_VALUE ? nullptr : h; }

void close_handle(void*& h) noexcept {
  if (h) ::CloseHandle(static_cast<HANDLE>(h));
  h = nullptr;
}

// A pipe whose read end (ours) is overlapped and whose write end (the child's) is inheritable.
// Anonymous pipes cannot do overlapped I/O, so it is a one-instance named pipe with a unique name.
bool make_pipe(Handle& read, Handle& write) {
  static std::atomic<unsigned> counter{0};
  const std::wstring name = L"\\\\.\\pipe\\wheelfit-" + std::to_wstring(::GetCurrentProcessId()) + L"-" +
                            std::to_wstring(counter.fetch_add(1)) + L"-" + std::to_wstring(::GetTickCount64());
  read.reset(valid(::CreateNamedPipeW(name.c_str(), PIPE_ACCESS_INBOUND | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
                                PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT, 1, 0, 64 * 1024, 0, nullptr)));
  if (!read.get()) return false;
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  write.reset(valid(::CreateFileW(name.c_str(), GENERIC_WRITE, 0, &sa, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr)));
  return write.get() != nullptr;
}

Error start_error(const std::string& path, DWORD e) {
  switch (e) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_NAME: return Error(Errc::not_found, path + ": no such file");
    case ERROR_ACCESS_DENIED: {
      const DWORD attrs = ::GetFileAttributesW(win::widen(path).c_str());
      if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY)) return Error(Errc::usage, path + ": is a directory");
      return Error(Errc::usage, path + ": not executable (access denied)");
    }
    case ERROR_BAD_EXE_FORMAT:
    case ERROR_EXE_MACHINE_TYPE_MISMATCH:
      return Error(Errc::usage, path + ": not a program this system can run (" + win::error_text(e) + ")");
    default: return Error(Errc::io_error, path + ": cannot start: " + win::error_text(e));
  }
}

DWORD remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<DWORD>(std::clamp<long long>(left, 0, 1'000'000'000));
}

// The environment block: "NAME=value\0...\0\0" in UTF-16, sorted by name without case (as
// Windows keeps it).
std::wstring environment_block(const std::vector<std::string>& env) {
  std::vector<std::wstring> vars;
  vars.reserve(env.size());
  for (const auto& v : env) {
    if (!v.empty() && v.find('\0') == std::string::npos) vars.push_back(win::widen(v));
  }
  auto key = [](const std::wstring& s) {
    std::wstring k = s.substr(0, s.find(L'=', 1));
    for (auto& c : k) c = static_cast<wchar_t>(std::towupper(c));
    return k;
  };
  std::stable_sort(vars.begin(), vars.end(), [&](const std::wstring& a, const std::wstring& b) { return key(a) < key(b); });
  std::wstring block;
  for (const auto& v : vars) {
    block += v;
    block += L'\0';
  }
  if (vars.empty()) block += L'\0';
  block += L'\0';
  return block;
}

// Children abandoned at their deadline (TerminateJobObject did not end them within kKillGrace):
// their process and job handles, closed once they have ended.
struct Abandoned {
  HANDLE process, job;
};
std::mutex g_abandoned_mu;
std::vector<Abandoned> g_abandoned;

// One CreateProcess at a time: the inheritable pipe ends of one start must not leak into a
// child another thread starts, where PROC_THREAD_ATTRIBUTE_HANDLE_LIST is not honoured.
std::mutex g_spawn_mu;

// Ends the job at the deadline and waits kKillGrace for the child; true when it ended.
bool kill_and_collect(HANDLE process, HANDLE job) noexcept {
  if (job) ::TerminateJobObject(job, 137);
  ::TerminateProcess(process, 137);  // in case it is not in the job (assignment failed)
  return ::WaitForSingleObject(process, static_cast<DWORD>(kKillGrace.count())) == WAIT_OBJECT_0;
}

void abandon_handles(HANDLE process, HANDLE job) noexcept {
  try {
    const std::lock_guard lock(g_abandoned_mu);
    g_abandoned.push_back({process, job});
  } catch (...) {  // no memory for the list: leak the handles
  }
}

// One pipe being read with overlapped I/O.
struct Reader {
  HANDLE pipe = nullptr;
  Handle event;
  OVERLAPPED ov{};
  char buf[16 * 1024];
  bool pending = false;
  std::string* sink = nullptr;
};

void take(Reader& r, DWORD got, std::size_t max_output, bool& truncated) {
  const std::size_t room = max_output > r.sink->size() ? max_output - r.sink->size() : 0;
  const std::size_t n = std::min<std::size_t>(room, got);
  r.sink->append(r.buf, n);
  if (n < got) truncated = true;
}

// Starts reads until one is pending; false when the pipe has closed (or failed).
bool issue(Reader& r, std::size_t max_output, bool& truncated) {
  for (;;) {
    r.ov = OVERLAPPED{};
    r.ov.hEvent = r.event.get();
    DWORD got = 0;
    if (::ReadFile(r.pipe, r.buf, sizeof r.buf, &got, &r.ov)) {
      take(r, got, max_output, truncated);
      continue;
    }
    if (::GetLastError() == ERROR_IO_PENDING) {
      r.pending = true;
      return true;
    }
    return false;  // ERROR_BROKEN_PIPE: the child's end closed
  }
}

}  // namespace

std::size_t reap_abandoned() noexcept {
  const std::lock_guard lock(g_abandoned_mu);
  std::erase_if(g_abandoned, [](const Abandoned& a) {
    if (::WaitForSingleObject(a.process, 0) != WAIT_OBJECT_0) return false;
    ::CloseHandle(a.process);
    if (a.job) ::CloseHandle(a.job);
    return true;
  });
  return g_abandoned.size();
}

Expected<RunningProcess> start_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                       std::size_t max_output, const Environment& environment) {
  auto line = detail::windows_command_line(argv);  // refuses an empty argv too
  if (!line) return line.error();
  reap_abandoned();
  const std::string& path = argv[0];
  std::wstring command = win::widen(*line);
  const std::wstring program = win::widen(path);
  const DWORD attrs = ::GetFileAttributesW(program.c_str());
  if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY)) {
    return unexpected(Errc::usage, path + ": is a directory");
  }

  Handle out_read, out_write, err_read, err_write;
  const std::lock_guard spawn_lock(g_spawn_mu);
  if (!make_pipe(out_read, out_write) || !make_pipe(err_read, err_write)) {
    return unexpected(Errc::io_error, path + ": cannot create pipes: " + win::error_text(::GetLastError()));
  }
  SECURITY_ATTRIBUTES sa{sizeof sa, nullptr, TRUE};
  Handle null_in(valid(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, nullptr)));

  Handle job(::CreateJobObjectW(nullptr, nullptr));
  if (!job.get()) return unexpected(Errc::io_error, path + ": cannot create a job object: " + win::error_text(::GetLastError()));
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  ::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits);

  // Only these three handles are inherited (where the system honours the list).
  HANDLE inherit[3] = {null_in.get(), out_write.get(), err_write.get()};
  const DWORD n_inherit = null_in.get() ? 3 : 2;
  HANDLE* inherit_from = null_in.get() ? inherit : inherit + 1;
  SIZE_T attr_size = 0;
  ::InitializeProcThreadAttributeList(nullptr, 1, 0, &attr_size);
  std::vector<unsigned char> attr_buf(attr_size);
  auto* attrs_list = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attr_buf.data());
  const bool have_list = ::InitializeProcThreadAttributeList(attrs_list, 1, 0, &attr_size) &&
                         ::UpdateProcThreadAttribute(attrs_list, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit_from,
                                                     n_inherit * sizeof(HANDLE), nullptr, nullptr);
  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = null_in.get();
  si.StartupInfo.hStdOutput = out_write.get();
  si.StartupInfo.hStdError = err_write.get();
  if (have_list) si.lpAttributeList = attrs_list;

  std::wstring env_block;
  if (environment) env_block = environment_block(*environment);
  const DWORD flags = CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT |
                      (have_list ? EXTENDED_STARTUPINFO_PRESENT : 0);
  PROCESS_INFORMATION pi{};
  const auto started = Clock::now();
  const BOOL ok = ::CreateProcessW(program.c_str(), command.data(), nullptr, nullptr, TRUE, flags,
                                   environment ? env_block.data() : nullptr, nullptr, &si.StartupInfo, &pi);
  const DWORD error = ok ? 0 : ::GetLastError();
  if (have_list) ::DeleteProcThreadAttributeList(attrs_list);
  out_write.reset();
  err_write.reset();
  null_in.reset();
  if (!ok) return unexpected(start_error(path, error));
  Handle process(pi.hProcess), thread(pi.hThread);
  if (!::AssignProcessToJobObject(job.get(), process.get())) {
    const DWORD e = ::GetLastError();
    ::TerminateProcess(process.get(), 1);
    return unexpected(Errc::io_error, path + ": cannot put the child into a job object: " + win::error_text(e));
  }
  ::ResumeThread(thread.get());

  RunningProcess p;
  p.pid_ = static_cast<int>(pi.dwProcessId);
  p.native_ = {process.release(), job.release(), out_read.release(), err_read.release()};
  p.path_ = path;
  p.deadline_ = started + timeout;
  p.max_output_ = max_output;
  return p;
}

void RunningProcess::abandon() noexcept {
  close_handle(native_.out);
  close_handle(native_.err);
  if (native_.process) {
    if (kill_and_collect(native_.process, native_.job)) {
      close_handle(native_.process);
      close_handle(native_.job);
    } else {
      abandon_handles(native_.process, native_.job);
    }
  }
  native_ = {};
  pid_ = -1;
}

Expected<ProcessResult> RunningProcess::wait() {
  if (!native_.process) return unexpected(Errc::usage, path_ + ": this process was already collected");
  const Native native = std::exchange(native_, {});
  Handle process(native.process), job(native.job), out(native.out), err(native.err);
  pid_ = -1;
  ProcessResult result;

  Reader readers[2];
  readers[0].pipe = out.get();
  readers[0].sink = &result.out;
  readers[1].pipe = err.get();
  readers[1].sink = &result.err;
  bool open[2] = {false, false};
  for (int i = 0; i < 2; ++i) {
    readers[i].event.reset(::CreateEventW(nullptr, TRUE, FALSE, nullptr));
    if (!readers[i].event.get()) {
      const DWORD e = ::GetLastError();
      kill_and_collect(process.get(), job.get());
      return unexpected(Errc::io_error, path_ + ": cannot create an event: " + win::error_text(e));
    }
    open[i] = issue(readers[i], max_output_, result.truncated);
  }
  auto cancel_pending = [&] {
    for (auto& r : readers) {
      if (!r.pending) continue;
      ::CancelIoEx(r.pipe, &r.ov);
      DWORD ignored = 0;
      ::GetOverlappedResult(r.pipe, &r.ov, &ignored, TRUE);
      r.pending = false;
    }
  };

  // Read both pipes until they close or the deadline passes.
  while (open[0] || open[1]) {
    const DWORD left = remaining_ms(deadline_);
    if (left == 0) {
      result.timed_out = true;
      break;
    }
    HANDLE events[2];
    int which[2];
    DWORD n = 0;
    for (int i = 0; i < 2; ++i) {
      if (!open[i]) continue;
      events[n] = readers[i].event.get();
      which[n++] = i;
    }
    const DWORD w = ::WaitForMultipleObjects(n, events, FALSE, left);
    if (w == WAIT_TIMEOUT) continue;
    if (w >= WAIT_OBJECT_0 + n) {
      const DWORD e = ::GetLastError();
      cancel_pending();
      kill_and_collect(process.get(), job.get());
      return unexpected(Errc::io_error, path_ + ": waiting for its output failed: " + win::error_text(e));
    }
    Reader& r = readers[which[w - WAIT_OBJECT_0]];
    DWORD got = 0;
    r.pending = false;
    if (!::GetOverlappedResult(r.pipe, &r.ov, &got, FALSE)) {
      open[which[w - WAIT_OBJECT_0]] = false;  // broken pipe: the child's end closed
      continue;
    }
    take(r, got, max_output_, result.truncated);
    open[which[w - WAIT_OBJECT_0]] = issue(r, max_output_, result.truncated);
  }
  cancel_pending();

  // The pipes closed (the child is exiting): collect it, still within the deadline. At the
  // deadline its job is ended; one that does not end within kKillGrace is abandoned.
  const bool ended = !result.timed_out && ::WaitForSingleObject(process.get(), remaining_ms(deadline_)) == WAIT_OBJECT_0;
  if (!ended) {
    result.timed_out = true;
    if (!kill_and_collect(process.get(), job.get())) {
      result.abandoned = true;
      abandon_handles(process.release(), job.release());
    }
    return result;
  }
  DWORD code = 0;
  ::GetExitCodeProcess(process.get(), &code);
  if ((code & 0xC0000000u) == 0xC0000000u || code == 0x80000003u) {
    result.crash_code = code;  // an NTSTATUS error: the process died of an exception
  } else {
    result.exit_status = static_cast<int>(code);
  }
  return result;
}

}  // namespace wheelfit::util
#endif  // _WIN32
