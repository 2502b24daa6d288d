// sha256 for deliver: the incremental hasher the sinks feed while bytes arrive, and a file's
// digest read in large blocks (a file already in place).
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "wheelfit/deliver/download.hpp"
#include "wheelfit/util/read_file.hpp"

namespace wheelfit::deliver {

namespace {

/// The SHA-256 implementation, fetched once: EVP_sha256() would look it up again at every init.
const EVP_MD* sha256_md() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
  }();
  return md;
}

EVP_MD_CTX* ctx_of(void* p) { return static_cast<EVP_MD_CTX*>(p); }

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_of(ctx_), sha256_md(), nullptr) != 1) throw std::bad_alloc();
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_of(ctx_)); }

void Sha256::update(std::string_view bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(ctx_of(ctx_), bytes.data(), bytes.size());
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_of(ctx_), digest, &n);
  EVP_DigestInit_ex(ctx_of(ctx_), sha256_md(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

Expected<std::string> sha256_file(const std::filesystem::path& path) {
  // A regular file only: a FIFO under a wheel's name in the download folder must not block.
  auto file = util::open_regular_file(path.string(), "a file");
  if (!file) return unexpected(Errc::io_error, file.error().message);
  Sha256 sha;
  std::vector<char> block(1u << 20);
  for (;;) {
    const ssize_t got = ::read(file->fd(), block.data(), block.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return unexpected(Errc::io_error, path.string() + ": cannot read: " + std::strerror(errno));
    if (got == 0) break;
    sha.update(std::string_view(block.data(), static_cast<std::size_t>(got)));
  }
  return sha.hex();
}

}  // namespace wheelfit::deliver
