#include "support/test_support.hpp"

#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace wheelfit::test {
namespace fs = std::filesystem;

fs::path fixtures_dir() { return fs::path(WHEELFIT_SHARED_FIXTURES); }
fs::path farm_index_dir() { return fixtures_dir() / "cuda-wheels" / "index"; }
fs::path source_dir() { return fs::path(WHEELFIT_SOURCE_DIR); }
fs::path binary_dir() { return fs::path(WHEELFIT_BINARY_DIR); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("test: cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& p, std::string_view content) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("test: cannot write " + p.string());
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = fs::temp_directory_path() / ("wheelfit-test-" + std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  throw std::runtime_error("test: cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

#ifdef _WIN32
// Windows has no mode bits and no FIFOs: the tests that need them are Linux-only. _putenv_s with an
// empty value removes the variable (msvcrt's rule).
unsigned file_mode(const fs::path& p) { throw std::runtime_error("test: file modes are POSIX-only: " + p.string()); }

Fifo::Fifo(fs::path path) : path_(std::move(path)) {
  throw std::runtime_error("test: FIFOs are POSIX-only: " + path_.string());
}

static void set_env(const std::string& name, const std::optional<std::string>& value) {
  if (value) ::_putenv_s(name.c_str(), value->c_str());
  else ::_putenv_s(name.c_str(), "");
}

ScopedEnv::ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
  if (const char* v = std::getenv(name_.c_str())) old_ = v;
  set_env(name_, value);
}

ScopedEnv::~ScopedEnv() { set_env(name_, old_); }
#else
unsigned file_mode(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) throw std::runtime_error("test: cannot stat " + p.string());
  return st.st_mode & 07777;
}

Fifo::Fifo(fs::path path) : path_(std::move(path)) {
  if (path_.has_parent_path()) fs::create_directories(path_.parent_path());
  if (::mkfifo(path_.c_str(), 0600) != 0) throw std::runtime_error("test: cannot make the FIFO " + path_.string());
  releaser_ = std::jthread([p = path_](std::stop_token stop) {
    while (!stop.stop_requested()) {
      // ENXIO while no reader has it open; once one is blocked there, this lets it go (EOF).
      if (const int fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC); fd >= 0) ::close(fd);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
}

ScopedEnv::ScopedEnv(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
  if (const char* v = std::getenv(name_.c_str())) old_ = v;
  if (value) ::setenv(name_.c_str(), value->c_str(), 1);
  else ::unsetenv(name_.c_str());
}

ScopedEnv::~ScopedEnv() {
  if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
  else ::unsetenv(name_.c_str());
}
#endif

}  // namespace wheelfit::test
