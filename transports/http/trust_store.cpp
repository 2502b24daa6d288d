// The trust store and the client certificate: chosen (trust_store.hpp) and loaded into the http
// transport's OpenSSL context, every failure named by file and by the flag or variable it came
// from; and the TLS alerts by which a server refuses a client certificate.
#include "wheelfit/transports/trust_store.hpp"

#ifdef _WIN32
#include <windows.h>
#include <wincrypt.h>  // before OpenSSL's headers, which undefine its clashing names (X509_NAME, ...)

#include "win_text.hpp"
#endif

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#include <boost/asio/ssl/error.hpp>

#include "http_shared.hpp"
#include "wheelfit/util/read_file.hpp"

namespace wheelfit::transports {

namespace fs = std::filesystem;

const std::vector<std::string>& trust_variables() {
  static const std::vector<std::string> names = {"PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE",
                                                 "SSL_CERT_DIR"};
  return names;
}

namespace {

bool is_folder(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

#ifdef _WIN32
constexpr char kListSeparator = ';';  // "C:\\certs;D:\\more": ':' is part of a drive
#else
constexpr char kListSeparator = ':';
#endif

/// `value` split at ':' (';' on Windows; empty items dropped), each a folder from `source`.
void add_folders(std::vector<TrustLocation>& out, std::string_view value, const std::string& source) {
  while (!value.empty()) {
    const auto colon = value.find(kListSeparator);
    const std::string_view item = value.substr(0, colon);
    if (!item.empty()) out.push_back({std::string(item), true, source});
    value = colon == std::string_view::npos ? std::string_view{} : value.substr(colon + 1);
  }
}

}  // namespace

TrustChoice choose_trust(const HttpOptions& options, const std::function<const char*(const char*)>& getenv) {
  const auto get = [&](const char* name) -> std::string {
    const char* v = getenv ? getenv(name) : std::getenv(name);
    return v ? std::string(v) : std::string();
  };
  TrustChoice out;
  if (options.ca_file) out.locations.push_back({*options.ca_file, is_folder(*options.ca_file), options.ca_source});
  if (options.ca_dir) out.locations.push_back({*options.ca_dir, true, options.ca_source});
  if (options.client_cert) out.client_cert = TrustLocation{*options.client_cert, false, options.client_cert_source};
  if (!options.ca_from_env) return out;
  if (!out.client_cert) {
    if (auto v = get("SSL_CLIENT_CERT"); !v.empty()) out.client_cert = TrustLocation{v, false, "SSL_CLIENT_CERT"};
  }
  if (!out.locations.empty()) return out;
  for (const char* bundle : {"PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"}) {
    if (auto v = get(bundle); !v.empty()) {
      out.locations.push_back({v, is_folder(v), bundle});
      return out;
    }
  }
  if (auto v = get("SSL_CERT_FILE"); !v.empty()) out.locations.push_back({v, false, "SSL_CERT_FILE"});
  add_folders(out.locations, get("SSL_CERT_DIR"), "SSL_CERT_DIR");
  return out;
}

namespace detail {
namespace {

/// OpenSSL's queued errors as text (the queue emptied), "" when none.
std::string ssl_errors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    out += std::string(out.empty() ? "" : "; ") + (reason ? reason : "unknown OpenSSL error");
  }
  return out;
}

std::string with_detail(std::string message, const std::string& detail) {
  return detail.empty() ? message : message + " (" + detail + ")";
}

/// The certificates the context's store holds now (a folder's are read only when needed).
std::size_t certificates_in(SSL_CTX* ctx) {
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx));
  std::size_t n = 0;
  for (int i = 0; i < sk_X509_OBJECT_num(objects); ++i) {
    if (X509_OBJECT_get_type(sk_X509_OBJECT_value(objects, i)) == X509_LU_X509) ++n;
  }
  return n;
}

/// "1a2b3c4d.0": the name OpenSSL looks a certificate up by in a hashed folder.
bool hashed_name(std::string_view name) {
  if (name.size() < 10 || name[8] != '.') return false;
  for (std::size_t i = 0; i < 8; ++i) {
    const char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  for (std::size_t i = 9; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
  }
  return true;
}

/// Whether `dir` holds at least one hashed certificate; an error when it cannot be listed.
Expected<bool> holds_hashed(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return unexpected(Errc::io_error, ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (hashed_name(it->path().filename().string())) return true;
  }
  if (ec) return unexpected(Errc::io_error, ec.message());
  return false;
}

/// An error when `path` cannot be opened for reading (missing, a folder, no permission) or is not
/// a regular file: OpenSSL opens it blocking, and a FIFO would block it (and the command) forever,
/// so it is opened here first the way util::open_regular_file does, without blocking.
std::optional<std::string> unreadable(const std::string& path) {
  if (is_folder(path)) return "is a folder, not a file";
  auto file = util::open_regular_file(path, "a file");
  if (file) return std::nullopt;
  if (file.error().is(Errc::not_found)) return "does not exist";
  std::string why = file.error().message;  // "<path>: is a FIFO, not a regular file"
  if (why.starts_with(path + ": ")) why.erase(0, path.size() + 2);
  return why;
}

Expected<void> load_file(SSL_CTX* ctx, const TrustLocation& l) {
  const std::string what = "the CA bundle " + l.path + " (from " + l.source + ")";
  if (auto why = unreadable(l.path)) return unexpected(Errc::invalid_input, what + " " + *why);
  const std::size_t before = certificates_in(ctx);
  ERR_clear_error();
  if (SSL_CTX_load_verify_locations(ctx, l.path.c_str(), nullptr) != 1) {
    return unexpected(Errc::invalid_input, with_detail(what + " holds no certificate in PEM form", ssl_errors()));
  }
  if (certificates_in(ctx) == before) return unexpected(Errc::invalid_input, what + " holds no certificate");
  return {};
}

Expected<void> load_folder(SSL_CTX* ctx, const TrustLocation& l) {
  const std::string what = "the CA folder " + l.path + " (from " + l.source + ")";
  if (!is_folder(l.path)) return unexpected(Errc::invalid_input, what + " does not exist or is not a folder");
  auto hashed = holds_hashed(l.path);
  if (!hashed) return unexpected(Errc::invalid_input, what + " cannot be read: " + hashed.error().message);
  if (!*hashed) {
    return unexpected(Errc::invalid_input, what + " holds no hashed certificates (files named like 1a2b3c4d.0, as `openssl rehash " +
                                               l.path + "` makes)");
  }
  ERR_clear_error();
  if (SSL_CTX_load_verify_locations(ctx, nullptr, l.path.c_str()) != 1) {
    return unexpected(Errc::invalid_input, with_detail(what + " cannot be used", ssl_errors()));
  }
  return {};
}

int refuse_passphrase(char*, int, int, void*) { return 0; }  // never prompt: an encrypted key fails

Expected<void> load_client(SSL_CTX* ctx, const TrustLocation& l) {
  const std::string what = "the client certificate " + l.path + " (from " + l.source + ")";
  if (auto why = unreadable(l.path)) return unexpected(Errc::invalid_input, what + " " + *why);
  SSL_CTX_set_default_passwd_cb(ctx, &refuse_passphrase);  // the chain file may hold an encrypted key too
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx, l.path.c_str()) != 1) {
    return unexpected(Errc::invalid_input, with_detail(what + " holds no certificate in PEM form", ssl_errors()));
  }
  const std::unique_ptr<BIO, decltype(&BIO_free)> file(BIO_new_file(l.path.c_str(), "r"), &BIO_free);
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      file ? PEM_read_bio_PrivateKey(file.get(), nullptr, &refuse_passphrase, nullptr) : nullptr, &EVP_PKEY_free);
  ERR_clear_error();
  if (!key) {
    return unexpected(Errc::invalid_input, what + " holds no unencrypted private key (the file must hold the "
                                                  "certificate and its key, unencrypted, in PEM form)");
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return unexpected(Errc::invalid_input, what + ": the private key does not belong to the certificate");
  }
  return {};
}

#ifdef _WIN32
/// The certificates of the current user's view of the Windows store `name` ("ROOT", "CA": the
/// machine's, group policy's and the user's own) added to `ctx`'s store: how many were new, or
/// the error of opening it. Certificates OpenSSL cannot parse are skipped.
Expected<std::size_t> add_windows_store(SSL_CTX* ctx, const wchar_t* name) {
  HCERTSTORE store = CertOpenSystemStoreW(0, name);
  if (!store) return unexpected(Errc::io_error, detail::windows_error_text(GetLastError()));
  X509_STORE* into = SSL_CTX_get_cert_store(ctx);
  std::size_t added = 0;
  for (PCCERT_CONTEXT c = CertEnumCertificatesInStore(store, nullptr); c; c = CertEnumCertificatesInStore(store, c)) {
    if ((c->dwCertEncodingType & X509_ASN_ENCODING) == 0) continue;
    const unsigned char* der = c->pbCertEncoded;
    X509* x = d2i_X509(nullptr, &der, static_cast<long>(c->cbCertEncoded));
    if (!x) continue;
    if (X509_STORE_add_cert(into, x) == 1) ++added;  // one already there fails harmlessly
    X509_free(x);
  }
  ERR_clear_error();
  CertCloseStore(store, 0);
  return added;
}

/// The Windows ROOT and CA stores added to `ctx`: the certificates added, and the stores that
/// could not be opened ("CA: <why>") for a message.
std::pair<std::size_t, std::string> add_windows_stores(SSL_CTX* ctx) {
  std::size_t added = 0;
  std::string failed;
  for (const auto& [name, label] : {std::pair{L"ROOT", "ROOT"}, std::pair{L"CA", "CA"}}) {
    auto n = add_windows_store(ctx, name);
    if (n) added += *n;
    else failed += std::string(failed.empty() ? "" : "; ") + label + ": " + n.error().message;
  }
  return {added, failed};
}
#endif

#ifndef _WIN32
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
#endif

}  // namespace

Expected<void> load_trust(ssl::context& ctx, const TrustChoice& choice) {
  for (const auto& l : choice.locations) {
    auto loaded = l.directory ? load_folder(ctx.native_handle(), l) : load_file(ctx.native_handle(), l);
    if (!loaded) return loaded;
  }
#ifdef _WIN32
  // A CA deployed by group policy is trusted beside a bundle given (the system store itself,
  // with nothing given, waits for the first TLS connection: load_system_roots).
  if (!choice.locations.empty()) add_windows_stores(ctx.native_handle());
#endif
  if (choice.client_cert) return load_client(ctx.native_handle(), *choice.client_cert);
  return {};
}

#ifdef _WIN32
std::optional<Error> load_system_roots(ssl::context& ctx) {
  // MinGW's OpenSSL has a compiled-in default file and folder that do not exist on Windows: the
  // system store there is Windows' own.
  const auto [added, failed] = add_windows_stores(ctx.native_handle());
  if (added > 0 || certificates_in(ctx.native_handle()) > 0) return std::nullopt;
  const std::string what = "the system trust store (the Windows ROOT and CA certificate stores)";
  const std::string hint = "; give a CA bundle with --cert FILE, REQUESTS_CA_BUNDLE or SSL_CERT_FILE";
  if (!failed.empty()) return net_error(NetErrc::certificate, what + " could not be opened (" + failed + ")" + hint);
  return net_error(NetErrc::certificate, what + " holds no certificate" + hint);
}
#else
std::optional<Error> load_system_roots(ssl::context& ctx) {
  const std::string file = env_or(X509_get_default_cert_file_env(), X509_get_default_cert_file());
  const std::string dirs = env_or(X509_get_default_cert_dir_env(), X509_get_default_cert_dir());
  const std::string what = "the system trust store (OpenSSL's default file " + file + " and folder " + dirs + ")";
  const std::string hint = "; give a CA bundle with --cert FILE, REQUESTS_CA_BUNDLE or SSL_CERT_FILE";
  ERR_clear_error();
  if (SSL_CTX_set_default_verify_paths(ctx.native_handle()) != 1) {
    return net_error(NetErrc::certificate, with_detail(what + " could not be loaded", ssl_errors()) + hint);
  }
  ERR_clear_error();
  if (certificates_in(ctx.native_handle()) > 0) return std::nullopt;
  std::vector<TrustLocation> folders;
  add_folders(folders, dirs, "");
  for (const auto& f : folders) {
    if (auto hashed = holds_hashed(f.path); hashed && *hashed) return std::nullopt;
  }
  return net_error(NetErrc::certificate, what + " holds no certificate" + hint);
}
#endif

std::optional<Error> client_cert_refused(const error_code& ec, const Url& url, bool presented) {
  if (ec.category() != asio::error::get_ssl_category()) return std::nullopt;
  switch (ERR_GET_REASON(static_cast<unsigned long>(ec.value()))) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED: break;
    default: return std::nullopt;
  }
  const std::string alert = " (TLS alert: " + ec.message() + ")";
  if (!presented) {
    return net_error(NetErrc::certificate, url.host_port() + " requires a client certificate" + alert +
                                               "; give one with --client-cert FILE or SSL_CLIENT_CERT (" + redact(url.str()) + ")");
  }
  return net_error(NetErrc::certificate, url.host_port() + " refused the client certificate" + alert + " (" +
                                             redact(url.str()) + ")");
}

}  // namespace detail
}  // namespace wheelfit::transports
