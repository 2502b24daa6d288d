// The file layer on Windows (issue 33; docs/decisions/0032-windows-files.md): atomic writes and
// reads in a non-ASCII folder and over 260 characters, replace of an existing target, what is not
// a regular file refused (reparse points, folders, devices, pipes), and the crash and concurrency
// guarantees across processes: two writers of one target, a writer killed mid-write, a folder lock.
// The other processes are this test executable again, running the hidden test case
// "[files_win_child]" with what to do in WHEELFIT_FILES_CHILD_* variables.
#include <catch2/catch.hpp>

#include <windows.h>
#include <winioctl.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/test_support.hpp"
#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/own_file.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/util/win_file.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;
namespace win = util::win;

namespace {

constexpr std::uintmax_t kLimit = 8u << 20;

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(win::u8(e.path().filename()));
  return out;
}

std::string read_whole(const fs::path& p) {
  auto text = util::read_file(win::u8(p), kLimit, "a test file");
  REQUIRE(text);
  return *text;
}

// ---- the other processes ----

struct Child {
  HANDLE process = nullptr;
  DWORD pid = 0;
  fs::path log;
};

void set_var(const wchar_t* name, const std::wstring& value) { ::SetEnvironmentVariableW(name, value.empty() ? nullptr : value.c_str()); }

// This executable again, running the hidden child test case: `mode` on `target` with `arg`.
Child spawn(const std::string& mode, const fs::path& target, const std::string& arg, const fs::path& log, DWORD flags = 0) {
  set_var(L"WHEELFIT_FILES_CHILD_MODE", win::from_utf8(mode).native());
  set_var(L"WHEELFIT_FILES_CHILD_TARGET", target.native());
  set_var(L"WHEELFIT_FILES_CHILD_ARG", win::from_utf8(arg).native());
  std::wstring exe(32768, L'\0');
  exe.resize(::GetModuleFileNameW(nullptr, exe.data(), static_cast<DWORD>(exe.size())));
  std::wstring cmd = L"\"" + exe + L"\" \"[files_win_child]\" -o \"" + log.native() + L"\"";
  STARTUPINFOW si{};
  si.cb = sizeof si;
  PROCESS_INFORMATION pi{};
  const BOOL ok = ::CreateProcessW(exe.c_str(), cmd.data(), nullptr, nullptr, FALSE, flags, nullptr, nullptr, &si, &pi);
  const std::string why = ok ? "" : win::last_error_text();
  for (const wchar_t* v : {L"WHEELFIT_FILES_CHILD_MODE", L"WHEELFIT_FILES_CHILD_TARGET", L"WHEELFIT_FILES_CHILD_ARG"}) set_var(v, L"");
  INFO("CreateProcessW: " << why);
  REQUIRE(ok);
  ::CloseHandle(pi.hThread);
  return Child{pi.hProcess, pi.dwProcessId, log};
}

// Its exit code, once it has ended (at most two minutes: a hang fails the test, it does not block).
DWORD finish(Child& child) {
  const DWORD waited = ::WaitForSingleObject(child.process, 120000);
  if (waited != WAIT_OBJECT_0) ::TerminateProcess(child.process, 99);
  DWORD code = 0;
  ::GetExitCodeProcess(child.process, &code);
  ::CloseHandle(child.process);
  child.process = nullptr;
  std::error_code ec;
  if (code != 0 && fs::exists(child.log, ec)) UNSCOPED_INFO("child output:\n" << test::read_file(child.log));
  return waited == WAIT_OBJECT_0 ? code : 99;
}

void kill(Child& child) {
  ::TerminateProcess(child.process, 137);
  (void)finish(child);
}

// Waits until `marker` exists (the child is ready) or the child has ended (false).
bool wait_ready(const Child& child, const fs::path& marker) {
  for (int i = 0; i < 6000; ++i) {
    std::error_code ec;
    if (fs::exists(marker, ec)) return true;
    if (::WaitForSingleObject(child.process, 20) == WAIT_OBJECT_0) return false;
  }
  return false;
}

bool is_reparse_point(const fs::path& p) {
  const DWORD a = ::GetFileAttributesW(p.c_str());
  return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_REPARSE_POINT);
}

// A junction at `link` to the folder `to` (FSCTL_SET_REPARSE_POINT); false when the system cannot.
bool make_junction(const fs::path& link, const fs::path& to) {
  fs::create_directory(link);
  const HANDLE h = ::CreateFileW(link.c_str(), GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                                 FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE) return false;
  const std::wstring sub = L"\\??\\" + to.native(), print = to.native();
  std::vector<unsigned char> buf(16 + (sub.size() + print.size() + 2) * sizeof(wchar_t), 0);
  const auto put16 = [&](std::size_t at, std::size_t v) { buf[at] = v & 0xff, buf[at + 1] = (v >> 8) & 0xff; };
  const std::size_t sub_bytes = sub.size() * 2, print_bytes = print.size() * 2;
  std::memcpy(buf.data(), "\x03\x00\x00\xa0", 4);  // IO_REPARSE_TAG_MOUNT_POINT
  put16(4, buf.size() - 8);
  put16(8, 0), put16(10, sub_bytes), put16(12, sub_bytes + 2), put16(14, print_bytes);
  std::memcpy(buf.data() + 16, sub.c_str(), sub_bytes);
  std::memcpy(buf.data() + 16 + sub_bytes + 2, print.c_str(), print_bytes);
  DWORD got = 0;
  const BOOL ok = ::DeviceIoControl(h, FSCTL_SET_REPARSE_POINT, buf.data(), static_cast<DWORD>(buf.size()), nullptr, 0, &got, nullptr);
  ::CloseHandle(h);
  return ok && is_reparse_point(link);
}

}  // namespace

TEST_CASE("files_win: the child process the tests below start", "[.][files_win_child]") {
  const std::string mode = util::env_utf8("WHEELFIT_FILES_CHILD_MODE").value_or("");
  const fs::path target = win::from_utf8(util::env_utf8("WHEELFIT_FILES_CHILD_TARGET").value_or(""));
  const std::string arg = util::env_utf8("WHEELFIT_FILES_CHILD_ARG").value_or("");
  const fs::path ready = target.parent_path() / "ready";
  if (mode == "write") {  // arg: the letter; 30 whole writes of 256 KiB of it
    const std::string content(256 << 10, arg.at(0));
    for (int i = 0; i < 30; ++i) REQUIRE(util::write_file_atomic(target, {content}, {.durable = i % 2 == 0}));
  } else if (mode == "hold") {  // half a write, then wait to be killed
    auto file = util::AtomicFile::create(target);
    REQUIRE(file);
    REQUIRE(file->write(std::string(1 << 20, 'n')));
    test::write_file(ready, "");
    ::Sleep(INFINITE);
  } else if (mode == "ctrl") {  // half a write with the Ctrl-C cleanup installed, then wait for Ctrl-Break
    util::remove_temp_files_on_signal();
    auto file = util::AtomicFile::create(target);
    REQUIRE(file);
    REQUIRE(file->write(std::string(1 << 20, 'n')));
    test::write_file(ready, "");
    ::Sleep(INFINITE);
  } else if (mode == "lock") {  // hold the folder lock, then wait to be killed
    auto lock = util::FolderLock::take(target, {.wait = false, .deadline = std::nullopt, .purpose = "holding it for a test"});
    REQUIRE(lock);
    test::write_file(ready, "");
    ::Sleep(INFINITE);
  } else {
    SUCCEED("not started as a child (a run of the whole file): nothing to do");
  }
}

TEST_CASE("files_win: a non-ASCII folder round trip through atomic write, read_file, own files and a lock",
          "[windows][files]") {
  test::TempDir tmp;
  const fs::path dir = tmp.path() / fs::path(u8"Jürgen-测试") / "wheelfit";
  REQUIRE(util::create_private_directories(dir));
  const fs::path target = dir / fs::path(u8"pixi-ü.toml");
  const std::string content = "[project]\nname = \"J\xc3\xbcrgen\"\n";
  REQUIRE(util::write_file_atomic(target, {content.substr(0, 10), content.substr(10)}));
  CHECK(read_whole(target) == content);
  CHECK(names_in(dir) == std::vector<std::string>{"pixi-\xc3\xbc.toml"});

  SECTION("errors name the folder in UTF-8") {
    const auto missing = util::read_file(win::u8(dir / "nope.toml"), kLimit, "a config file");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().is(Errc::not_found));
    CHECK_THAT(missing.error().message, Catch::Contains("J\xc3\xbcrgen-\xe6\xb5\x8b\xe8\xaf\x95") && Catch::Contains("no such config file"));
    const auto failed = util::write_file_atomic(dir / "gone" / "x.toml", {"x"});
    REQUIRE_FALSE(failed);
    CHECK_THAT(failed.error().message, Catch::Contains("J\xc3\xbcrgen") && Catch::Contains("cannot create a temporary file"));
    test::write_file(dir / "file", "x");
    const auto blocked = util::create_private_directories(dir / "file" / "sub");
    REQUIRE_FALSE(blocked);
    CHECK(blocked.error().is(Errc::io_error));
    CHECK_THAT(blocked.error().message, Catch::Contains(win::u8(dir / "file")) && Catch::Contains("cannot be created"));
  }
  SECTION("an own file and a folder lock there") {
    auto fd = util::open_own_file(dir / fs::path(u8"pkg-ü.whl.part"), true);
    REQUIRE(fd);
    CHECK(win::pwrite_all(*fd, "part", 0));
    util::OpenFile closer(*fd);
    auto lock = util::FolderLock::take(dir / ".wheelfit.lock", {});
    REQUIRE(lock);
    CHECK(lock->path() == dir / ".wheelfit.lock");
  }
}

TEST_CASE("files_win: a write replaces an existing target whole and leaves no temporary file", "[windows][files]") {
  struct Row {
    const char* what;
    std::string before, after;
    bool durable;
  };
  const std::vector<Row> rows = {
      {"a longer file shrinks", std::string(100000, 'o'), "short", true},
      {"a short file grows", "o", std::string(3 << 20, 'n'), true},
      {"an empty file, not durable", "", "content", false},
      {"to nothing", "old", "", false},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    test::TempDir dir;
    const auto target = dir / "lock.json";
    test::write_file(target, r.before);
    REQUIRE(util::write_file_atomic(target, {r.after}, {.durable = r.durable}));
    CHECK(read_whole(target) == r.after);
    CHECK(names_in(dir.path()) == std::vector<std::string>{"lock.json"});
  }
  SECTION("a read-only target is replaced, as on Linux, where the folder decides") {
    test::TempDir dir;
    const auto target = dir / "ro.txt";
    test::write_file(target, "old");
    REQUIRE(::SetFileAttributesW(target.c_str(), FILE_ATTRIBUTE_READONLY));
    REQUIRE(util::write_file_atomic(target, {"new"}, {.durable = false}));
    CHECK(read_whole(target) == "new");
    CHECK(names_in(dir.path()) == std::vector<std::string>{"ro.txt"});
  }
  SECTION("a folder at the target is not replaced: the error names it and the step, the folder stays") {
    test::TempDir dir;
    const auto target = dir / "taken";
    fs::create_directory(target);
    const auto w = util::write_file_atomic(target, {"new"}, {.durable = false});
    REQUIRE_FALSE(w);
    CHECK_THAT(w.error().message, Catch::Contains(win::u8(target)) && Catch::Contains("rename failed") && Catch::Contains("(error "));
    CHECK(fs::is_directory(target));
    CHECK(names_in(dir.path()) == std::vector<std::string>{"taken"});
  }
}

TEST_CASE("files_win: what is not a regular file is refused, never followed or read", "[windows][files]") {
  test::TempDir dir;
  SECTION("a folder where an own file goes") {
    fs::create_directory(dir / "taken");
    const auto fd = util::open_own_file(dir / "taken", true);
    REQUIRE_FALSE(fd);
    CHECK(fd.error().is(Errc::invalid_input));
    CHECK_THAT(fd.error().message, Catch::Contains("is a directory, not a regular file"));
    CHECK(util::not_regular_file(dir / "taken") == "is a directory, not a regular file");
    CHECK(util::not_regular_file(dir / "missing").empty());
  }
  SECTION("a device and a pipe given as input") {
    const auto nul = util::read_file("NUL", kLimit, "a policy file");
    REQUIRE_FALSE(nul);
    CHECK(nul.error().message == "NUL: is a character device, not a regular file");
    const std::wstring pipe_name = L"\\\\.\\pipe\\wheelfit-test-" + std::to_wstring(::GetCurrentProcessId());
    const HANDLE server = ::CreateNamedPipeW(pipe_name.c_str(), PIPE_ACCESS_DUPLEX, PIPE_TYPE_BYTE, 4, 4096, 4096, 0, nullptr);
    REQUIRE(server != INVALID_HANDLE_VALUE);
    const auto piped = util::read_file(win::u8(pipe_name), kLimit, "a policy file");
    ::CloseHandle(server);
    REQUIRE_FALSE(piped);
    CHECK_THAT(piped.error().message, Catch::EndsWith("is a FIFO, not a regular file"));
  }
  SECTION("a reparse point (symbolic link or junction) where Linux refuses a symlink") {
    test::write_file(dir / "real.txt", "kept");
    fs::create_directory(dir / "real-folder");
    const fs::path link = dir / "link.txt", junction = dir / "junction";
    const bool have_link = ::CreateSymbolicLinkW(link.c_str(), (dir / "real.txt").c_str(), 0x2 /*unprivileged*/) &&
                           is_reparse_point(link);
    const bool have_junction = make_junction(junction, dir / "real-folder");
    if (!have_link && !have_junction) {
      WARN("this system makes no symbolic link or junction (wine 8.0: CreateSymbolicLinkW reports success but makes "
           "nothing, FSCTL_SET_REPARSE_POINT fails): the refusal of reparse points is untested here");
      return;
    }
    if (have_link) {
      const auto fd = util::open_own_file(link, true);
      REQUIRE_FALSE(fd);
      CHECK_THAT(fd.error().message, Catch::Contains("is a symlink, not a regular file"));
      CHECK(util::not_regular_file(link) == "is a symlink, not a regular file");
      CHECK(read_whole(dir / "real.txt") == "kept");
    }
    if (have_junction) {
      CHECK(util::not_regular_file(junction) == "is a symlink, not a regular file");
      CHECK_FALSE(util::open_own_file(junction, true));
    }
  }
}

TEST_CASE("files_win: two processes writing one target at once leave one whole file", "[windows][files]") {
  test::TempDir dir;
  const auto target = dir / "shared.bin";
  auto a = spawn("write", target, "A", dir / "a.log");
  auto b = spawn("write", target, "B", dir / "b.log");
  // Meanwhile every read sees one writer's whole file, never a mix or a part.
  int reads = 0;
  while (::WaitForSingleObject(a.process, 0) == WAIT_TIMEOUT || ::WaitForSingleObject(b.process, 0) == WAIT_TIMEOUT) {
    ::Sleep(5);  // a reader holding the file keeps a writer's MoveFileExW waiting (it retries)
    auto text = util::read_file(win::u8(target), kLimit, "a test file");
    if (!text) continue;  // not there yet
    ++reads;
    REQUIRE(text->size() == 256u << 10);
    REQUIRE(text->find_first_not_of(text->front()) == std::string::npos);
  }
  INFO("whole reads while they wrote: " << reads);
  CHECK(finish(a) == 0);
  CHECK(finish(b) == 0);
  const std::string end = read_whole(target);
  REQUIRE(end.size() == 256u << 10);
  CHECK((end.front() == 'A' || end.front() == 'B'));
  CHECK(end.find_first_not_of(end.front()) == std::string::npos);
  std::vector<std::string> left = names_in(dir.path());
  std::erase_if(left, [](const std::string& n) { return n.ends_with(".log"); });
  CHECK(left == std::vector<std::string>{"shared.bin"});
}

TEST_CASE("files_win: a writer killed mid-write leaves the old target; its temp file goes later", "[windows][files]") {
  test::TempDir dir;
  const auto target = dir / "pixi.toml";
  test::write_file(target, "old content");
  auto child = spawn("hold", target, "", dir / "hold.log");
  REQUIRE(wait_ready(child, dir / "ready"));
  const DWORD pid = child.pid;
  kill(child);
  CHECK(read_whole(target) == "old content");
  std::vector<std::string> temps;
  for (const auto& name : names_in(dir.path())) {
    if (util::temp_file_writer(name, "pixi.toml")) temps.push_back(name);
  }
  REQUIRE(temps.size() == 1);
  CHECK(util::temp_file_writer(temps[0], "pixi.toml") == static_cast<long>(pid));
  CHECK_FALSE(win::process_running(static_cast<long>(pid)));
  CHECK(win::process_running(static_cast<long>(::GetCurrentProcessId())));
  // Its writer is gone: the next run's sweep removes it (a young file of a live writer stays).
  CHECK(util::remove_stale_temp_files(dir.path(), std::string_view("pixi.toml")) == 1);
  CHECK_FALSE(fs::exists(dir / temps[0]));
  CHECK(read_whole(target) == "old content");
}

TEST_CASE("files_win: a folder lock held by another process; released when it dies", "[windows][files]") {
  test::TempDir dir;
  const auto lock_file = dir / ".wheelfit.lock";
  auto child = spawn("lock", lock_file, "", dir / "lock.log");
  REQUIRE(wait_ready(child, dir / "ready"));
  {
    const auto busy = util::FolderLock::take(lock_file, {.wait = false, .deadline = std::nullopt, .purpose = "writing into DIR"});
    REQUIRE_FALSE(busy);
    CHECK(busy.error().is(Errc::usage));
    CHECK_THAT(busy.error().message, Catch::Contains("(process " + std::to_string(child.pid) + ")") &&
                                         Catch::Contains("is writing into DIR"));
    const auto gave_up = util::FolderLock::take(lock_file, {.wait = true, .deadline = std::chrono::steady_clock::now(), .purpose = "x"});
    REQUIRE_FALSE(gave_up);
    CHECK_THAT(gave_up.error().message, Catch::Contains("gave up waiting"));
  }
  kill(child);
  auto mine = util::FolderLock::take(lock_file, {.wait = false, .deadline = std::nullopt, .purpose = "writing"});
  REQUIRE(mine);
  CHECK(read_whole(lock_file) == std::to_string(::GetCurrentProcessId()) + "\n");  // readable while locked
}

TEST_CASE("files_win: paths over 260 characters work (the \\\\?\\ form)", "[windows][files]") {
  test::TempDir tmp;
  fs::path dir = tmp.path();
  for (int i = 0; i < 6; ++i) dir /= fs::path(u8"ü-long-folder-name-" + std::u8string(40, static_cast<char8_t>('a' + i)));
  REQUIRE(dir.native().size() > 300);
  REQUIRE(util::create_private_directories(dir));
  const auto target = dir / "wheel.metadata";
  REQUIRE(win::u8(target).size() > 260);
  REQUIRE(util::write_file_atomic(target, {"one"}));
  REQUIRE(util::write_file_atomic(target, {"two"}));
  CHECK(read_whole(target) == "two");
  auto fd = util::open_own_file(dir / "x.part", true);
  REQUIRE(fd);
  util::OpenFile closer(*fd);
  CHECK(util::FolderLock::take(dir / ".lock", {}));
  CHECK(win::os_path(target).starts_with(LR"(\\?\)"));
  CHECK(win::os_path(tmp.path() / "short") == (tmp.path() / "short").native());
}

TEST_CASE("files_win: the default folders: the cache under LocalAppData, the netrc as curl finds it", "[windows][files]") {
  const auto env = [](std::map<std::string, std::string> vars) {
    return [vars](std::string_view name) -> std::optional<std::string> {
      const auto it = vars.find(std::string(name));
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  };
  const auto local = win::local_app_data();
  REQUIRE(local);
  CHECK(util::user_cache_root(env({})) == *local / "wheelfit");
  CHECK(util::user_cache_root(env({{"XDG_CACHE_HOME", "relative"}})) == *local / "wheelfit");
  CHECK(util::user_cache_root(env({{"XDG_CACHE_HOME", "C:\\caches"}})) == fs::path("C:\\caches") / "wheelfit");

  test::TempDir tmp;
  const fs::path home = tmp.path() / fs::path(u8"Jürgen");
  fs::create_directories(home);
  const std::string home8 = win::u8(home);
  CHECK(util::default_netrc(env({{"USERPROFILE", home8}})) == home / ".netrc");  // neither there
  test::write_file(home / "_netrc", "machine a login b password c\n");
  CHECK(util::default_netrc(env({{"USERPROFILE", home8}})) == home / "_netrc");  // only _netrc
  CHECK(util::default_netrc(env({{"HOME", home8}, {"USERPROFILE", "C:\\elsewhere"}})) == home / "_netrc");  // HOME first
  test::write_file(home / ".netrc", "machine a login b password c\n");
  CHECK(util::default_netrc(env({{"USERPROFILE", home8}})) == home / ".netrc");  // both: .netrc
  CHECK_FALSE(util::default_netrc(env({})));
}

TEST_CASE("files_win: Ctrl-Break mid-write removes the temporary file; the target stays whole", "[windows][files]") {
  test::TempDir dir;
  const auto target = dir / "pixi.toml";
  test::write_file(target, "old content");
  // A console to send it through (a test run under ctest has none; the CRT's stdout stays where it
  // was), and the child in a process group of its own: the Ctrl-Break reaches it, not this test.
  if (!::GetConsoleWindow()) (void)::AllocConsole();
  auto child = spawn("ctrl", target, "", dir / "ctrl.log", CREATE_NEW_PROCESS_GROUP);
  REQUIRE(wait_ready(child, dir / "ready"));
  CHECK(names_in(dir.path()).size() == 4);  // the target, the temporary file, the log, the marker
  if (!::GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, child.pid)) {
    const std::string why = win::last_error_text();
    kill(child);
    WARN("no console to send Ctrl-Break through (" << why << "): the console cleanup is untested in this run");
    return;
  }
  const DWORD code = finish(child);
  CHECK(code == 0xC000013A);  // STATUS_CONTROL_C_EXIT: the default handler still ended it
  std::vector<std::string> left = names_in(dir.path());
  std::erase_if(left, [](const std::string& n) { return n == "ctrl.log" || n == "ready"; });
  CHECK(left == std::vector<std::string>{"pixi.toml"});
  CHECK(read_whole(target) == "old content");
}
