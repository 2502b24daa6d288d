// Downloads on Windows (under wine here): from file:// URLs into a folder whose name is not ASCII,
// two processes downloading into one folder at once, a process killed (TerminateProcess) while
// it writes a part, and `mirror`'s Linux-only publish refused with exit 2. The other processes are
// this executable again, running the hidden case "[.deliver_helper]" with its settings in the
// environment variable WHEELFIT_DELIVER_HELPER ("<mode>\n<source>\n<folder>\n<sha256>\n<mark>").
#include <windows.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "deliver/download_files.hpp"
#include "wheelfit/index/file_url.hpp"
#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/transports/file_transport.hpp"
#include "wheelfit/api.hpp"

// All in a namespace of its own: tests/windows/ is compiled as one unity batch.
namespace wheelfit::test_deliver_win {

using namespace wheelfit::test_deliver;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr const wchar_t* kHelperVar = L"WHEELFIT_DELIVER_HELPER";
/// The bytes a "stall" helper receives before it stops, holding its part open mid-file.
constexpr std::uint64_t kStallAfter = 4u << 20;

/// A folder name no ANSI code page holds whole.
const fs::path kFolder = fs::path(u8"Räder Jürgen 下载 ĳ");

std::string utf8(const fs::path& p) {
  const auto s = p.u8string();
  return {s.begin(), s.end()};
}

/// What a helper is told: the file to fetch (its file:// URL made from `source`), where, its digest.
struct HelperJob {
  std::wstring mode;  ///< "fetch" (writes what became of the file into `mark`), or "stall" (stops
                      ///< after kStallAfter bytes, writes `mark`, and waits to be killed)
  fs::path source, dir;
  std::string sha256;
  fs::path mark;

  [[nodiscard]] std::wstring text() const {
    return mode + L"\n" + source.wstring() + L"\n" + dir.wstring() + L"\n" + fs::path(sha256).wstring() + L"\n" +
           mark.wstring();
  }
  static std::optional<HelperJob> from_environment() {
    std::wstring text(32768, L'\0');
    const DWORD n = ::GetEnvironmentVariableW(kHelperVar, text.data(), static_cast<DWORD>(text.size()));
    if (n == 0 || n >= text.size()) return std::nullopt;
    text.resize(n);
    std::vector<std::wstring> f;
    for (std::size_t at = 0;;) {
      const auto nl = text.find(L'\n', at);
      f.push_back(text.substr(at, nl - at));
      if (nl == std::wstring::npos) break;
      at = nl + 1;
    }
    if (f.size() != 5) return std::nullopt;
    return HelperJob{f[0], f[1], f[2], fs::path(f[3]).string(), f[4]};
  }
};

/// This executable running the helper case for `job`, its output in `log`.
class Helper {
 public:
  Helper(const HelperJob& job, const fs::path& log) {
    wchar_t self[32768];
    const DWORD n = ::GetModuleFileNameW(nullptr, self, 32768);
    REQUIRE((n > 0 && n < 32768));
    // No argument needs quoting but the paths, which hold no quote.
    std::wstring cmd = L"\"" + std::wstring(self, n) + L"\" \"[.deliver_helper]\" -o \"" + log.wstring() + L"\"";
    REQUIRE(::SetEnvironmentVariableW(kHelperVar, job.text().c_str()));
    STARTUPINFOW si{};
    si.cb = sizeof si;
    const BOOL started = ::CreateProcessW(nullptr, cmd.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi_);
    ::SetEnvironmentVariableW(kHelperVar, nullptr);
    REQUIRE(started);
  }
  ~Helper() {
    if (pi_.hProcess && !ended()) kill();
    if (pi_.hThread) ::CloseHandle(pi_.hThread);
    if (pi_.hProcess) ::CloseHandle(pi_.hProcess);
  }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  [[nodiscard]] bool ended() const { return ::WaitForSingleObject(pi_.hProcess, 0) == WAIT_OBJECT_0; }
  /// Waits for it to end: its exit code (Catch2's count of failed checks).
  int wait() const {
    ::WaitForSingleObject(pi_.hProcess, INFINITE);
    DWORD code = 0;
    ::GetExitCodeProcess(pi_.hProcess, &code);
    return static_cast<int>(code);
  }
  /// TerminateProcess, as Task Manager's "End task" or a CI timeout does, and waits until it is gone.
  void kill() const {
    ::TerminateProcess(pi_.hProcess, 137);
    ::WaitForSingleObject(pi_.hProcess, INFINITE);
  }

 private:
  PROCESS_INFORMATION pi_{};
};

/// A source file of `size` random bytes under `root`, and its digest.
struct Source {
  fs::path path;
  std::string body;
  Source(const fs::path& root, std::size_t size, unsigned seed) : path(root / "src" / kName), body(random_bytes(size, seed)) {
    test::write_file(path, body);
  }
  [[nodiscard]] deliver::Wanted wanted() const { return test_deliver::wanted(index::to_url(utf8(path), false), kName, body); }
};

/// Every file at a final name in `dir` (not a dot file) has the digest of `body`.
void check_no_bad_file(const fs::path& dir, const std::string& body) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = utf8(e.path().filename());
    if (name.starts_with(".")) continue;
    INFO(name);
    CHECK(sha(slurp(e.path())) == sha(body));
  }
}

}  // namespace

TEST_CASE("deliver helper: the other process of the Windows download tests", "[.deliver_helper]") {
  const auto job = HelperJob::from_environment();
  if (!job) return;  // run without a job (a listing, a run of every case of the file): nothing to do
  auto t = transports::make_file_transport();
  deliver::Wanted w;
  w.url = index::to_url(utf8(job->source), false);
  w.filename = kName;
  w.sha256 = job->sha256;
  auto o = options_for(job->dir);
  if (job->mode == L"stall") {
    o.progress = [&](const deliver::Progress& p) {
      if (p.kind != deliver::Progress::Kind::bytes || p.done < kStallAfter) return;
      test::write_file(job->mark, "mid-write\n");
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until TerminateProcess
    };
  }
  const auto got = deliver::download(*t, {w}, o);
  REQUIRE(got.size() == 1);
  INFO((got[0].error ? got[0].error->message : std::string("ok")));
  CHECK(got[0].status != deliver::Delivered::Status::failed);
  CHECK(got[0].verified);
  CHECK(got[0].sha256 == job->sha256);
  if (job->mode == L"fetch") test::write_file(job->mark, got[0].status == deliver::Delivered::Status::fetched ? "fetched" : "present");
}

TEST_CASE("file URLs of Windows paths: file:///C:/..., read back as the path", "[windows][deliver][file]") {
  struct Row {
    const char* path;
    const char* url;
    const char* back;  ///< what to_path reads the URL back as
  };
  for (const Row& r : {Row{"C:\\Users\\x\\index", "file:///C:/Users/x/index", "C:/Users/x/index"},
                       Row{"D:/w h/pkg.whl", "file:///D:/w%20h/pkg.whl", "D:/w h/pkg.whl"},
                       Row{"C:\\Users\\J\xc3\xbcrgen\\i", "file:///C:/Users/J%C3%BCrgen/i", "C:/Users/J\xc3\xbcrgen/i"}}) {
    INFO(r.path);
    CHECK(index::to_url(r.path, false) == r.url);
    const auto back = index::to_path(r.url);
    REQUIRE(back);
    CHECK(*back == r.back);
  }
  // A host is still not local.
  CHECK_FALSE(index::to_path("file://server/share/x.whl"));
}

TEST_CASE("download from file:// into a non-ASCII folder: verified by sha256, renamed into place",
          "[windows][deliver][download]") {
  TempDir tmp;
  const Source src(tmp.path() / kFolder, 3u << 20, 21);
  const fs::path dir = tmp.path() / kFolder / "wheels";
  auto t = transports::make_file_transport();
  SECTION("whole, then present on a re-run (its recorded digest)") {
    auto got = deliver::download(*t, {src.wanted()}, options_for(dir));
    check_delivered(got.at(0), dir, src.body);
    CHECK(fs::exists(deliver::digest_record_path(dir / kName)));
    got = deliver::download(*t, {src.wanted()}, options_for(dir));
    check_delivered(got.at(0), dir, src.body, Delivered::Status::present);
  }
  SECTION("a part left before is continued") {
    leave_part(dir, kName, std::string_view(src.body).substr(0, 1000001), "");
    auto got = deliver::download(*t, {src.wanted()}, options_for(dir));
    check_delivered(got.at(0), dir, src.body);
    CHECK(got[0].resumed);
  }
  SECTION("a wrong digest leaves nothing under the final name") {
    auto w = src.wanted();
    w.sha256 = std::string(64, '0');
    auto got = deliver::download(*t, {w}, options_for(dir));
    REQUIRE(got.at(0).status == Delivered::Status::failed);
    CHECK_THAT(got[0].error->message, Catch::Contains("sha256 mismatch"));
    CHECK_FALSE(fs::exists(dir / kName));
    CHECK_FALSE(fs::exists(dir / ("." + kName + ".part")));
  }
  SECTION("a file in place with another digest is replaced (MoveFileExW over it)") {
    test::write_file(dir / kName, "stale");
    auto got = deliver::download(*t, {src.wanted()}, options_for(dir));
    check_delivered(got.at(0), dir, src.body);
  }
}

TEST_CASE("a part another handle holds locked (LockFileEx) is left to it", "[windows][deliver][concurrency]") {
  TempDir tmp;
  const Source src(tmp.path() / kFolder, 1u << 20, 22);
  const fs::path dir = tmp.path() / kFolder / "wheels";
  leave_part(dir, kName, "held", "");
  const HANDLE held = ::CreateFileW((dir / ("." + kName + ".part")).c_str(), GENERIC_READ | GENERIC_WRITE,
                                    FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr, OPEN_EXISTING, 0, nullptr);
  REQUIRE(held != INVALID_HANDLE_VALUE);
  OVERLAPPED ov{};
  REQUIRE(::LockFileEx(held, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, MAXDWORD, MAXDWORD, &ov));
  auto t = transports::make_file_transport();
  const auto got = deliver::download(*t, {src.wanted()}, options_for(dir));
  ::CloseHandle(held);
  REQUIRE(got.at(0).status == Delivered::Status::failed);
  CHECK_THAT(got[0].error->message, Catch::Contains("another process is writing it"));
  CHECK_FALSE(fs::exists(dir / kName));
  // Once the other handle is gone, the part is ours: its bytes are not the file's, so the digest
  // fails and it is fetched again from zero.
  check_delivered(deliver::download(*t, {src.wanted()}, options_for(dir)).at(0), dir, src.body);
}

TEST_CASE("two processes downloading into one folder at once end with one whole verified file",
          "[windows][deliver][concurrency]") {
  TempDir tmp;
  const Source src(tmp.path() / kFolder, 24u << 20, 23);
  const fs::path dir = tmp.path() / kFolder / "wheels";
  HelperJob job{L"fetch", src.path, dir, sha(src.body), tmp.path() / "a.status"};
  Helper a(job, tmp.path() / "a.log");
  job.mark = tmp.path() / "b.status";
  Helper b(job, tmp.path() / "b.log");
  const int code_a = a.wait(), code_b = b.wait();
  INFO(test::read_file(tmp.path() / "a.log") << test::read_file(tmp.path() / "b.log"));
  CHECK(code_a == 0);
  CHECK(code_b == 0);
  // One fetched it; the other (waiting for the folder's lock, or later) found it in place.
  std::vector<std::string> outcomes = {test::read_file(tmp.path() / "a.status"), test::read_file(tmp.path() / "b.status")};
  std::sort(outcomes.begin(), outcomes.end());
  CHECK(outcomes == std::vector<std::string>{"fetched", "present"});
  CHECK(slurp(dir / kName) == src.body);
  CHECK_FALSE(fs::exists(dir / ("." + kName + ".part")));
  check_no_bad_file(dir, src.body);
}

TEST_CASE("a process killed mid-write leaves no file that fails its digest; a re-run completes",
          "[windows][deliver][kill]") {
  TempDir tmp;
  const Source src(tmp.path() / kFolder, 24u << 20, 24);
  const fs::path dir = tmp.path() / kFolder / "wheels", mark = tmp.path() / "mid-write";
  {
    Helper stalled({L"stall", src.path, dir, sha(src.body), mark}, tmp.path() / "stall.log");
    // Until it says it is mid-write (no deadline: a helper that ends instead fails the test).
    while (!fs::exists(mark)) {
      if (stalled.ended()) FAIL("the helper ended before it was mid-write: " << test::read_file(tmp.path() / "stall.log"));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    stalled.kill();
  }
  CHECK_FALSE(fs::exists(dir / kName));
  const fs::path part = dir / ("." + kName + ".part");
  REQUIRE(fs::exists(part));
  const auto left = fs::file_size(part);
  CHECK(left < src.body.size());
  CHECK(slurp(part) == src.body.substr(0, left));  // a prefix of the file: what was written is whole
  // The re-run takes the folder's lock and the part's (the killed process's went with it) and
  // continues the part.
  auto t = transports::make_file_transport();
  const auto got = deliver::download(*t, {src.wanted()}, options_for(dir));
  check_delivered(got.at(0), dir, src.body);
  CHECK(got[0].resumed == (left > 0));
  check_no_bad_file(dir, src.body);
}

TEST_CASE("mirror on Windows: the publish step is Linux-only, exit 2, nothing written", "[windows][mirror]") {
  TempDir tmp;
  api::MirrorRequest req;
  req.out = utf8(tmp.path() / kFolder / "mirror");
  req.fleet.push_back(api::FleetMachine{"m", {}});
  const auto r = api::mirror(req);
  CHECK(r.exit_code == 2);
  REQUIRE(r.error);
  CHECK_THAT(r.error->message, Catch::Contains("Linux-only") && Catch::Contains("syncfs") && Catch::Contains("symbolic link"));
  CHECK_THAT(r.report(), Catch::StartsWith("wheelfit: mirror: publishing a mirror is Linux-only"));
  CHECK_FALSE(fs::exists(tmp.path() / kFolder / "mirror"));
  // publish() itself says the same, as Errc::unsupported.
  mirror::Snapshot s;
  s.out = tmp.path() / "m2";
  const auto published = mirror::publish(s);
  REQUIRE_FALSE(published);
  CHECK(published.error().is(Errc::unsupported));
  CHECK(published.error().message == mirror::publish_unavailable());
}

}  // namespace wheelfit::test_deliver_win
