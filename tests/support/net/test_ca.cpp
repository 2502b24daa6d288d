// TestCa of test_server.hpp: a certificate authority made at test time with OpenSSL (EC P-256
// keys), writing PEM files for the loopback TLS servers and the clients that trust them.

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <array>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "support/net/test_server.hpp"

namespace wheelfit::testing {

using namespace std::chrono_literals;

namespace {

[[noreturn]] void fail_ssl(const std::string& what) {
  const unsigned long e = ERR_get_error();
  throw std::runtime_error(what + ": " + (e != 0 ? ERR_error_string(e, nullptr) : "unknown OpenSSL error"));
}

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

KeyPtr new_p256_key() {
  KeyPtr key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  if (!key) fail_ssl("TestCa: EC P-256 key generation");
  return key;
}

void set_random_serial(X509* cert) {
  std::array<unsigned char, 8> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) fail_ssl("TestCa: RAND_bytes");
  bytes[0] &= 0x7f;  // a positive serial
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr), &BN_free);
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) == nullptr) fail_ssl("TestCa: serial");
}

struct CertSpec {
  std::string common_name;
  EVP_PKEY* key = nullptr;           ///< the subject's key
  X509* issuer = nullptr;            ///< nullptr: self-signed
  EVP_PKEY* issuer_key = nullptr;
  std::chrono::seconds not_before{}, not_after{};
  std::vector<std::pair<int, std::string>> extensions;  ///< NID + OpenSSL config text, in order
};

CertPtr make_cert(const CertSpec& spec) {
  CertPtr cert(X509_new(), &X509_free);
  if (!cert) fail_ssl("TestCa: X509_new");
  X509* x = cert.get();
  X509_set_version(x, 2);
  set_random_serial(x);
  X509_gmtime_adj(X509_getm_notBefore(x), static_cast<long>(spec.not_before.count()));
  X509_gmtime_adj(X509_getm_notAfter(x), static_cast<long>(spec.not_after.count()));
  X509_set_pubkey(x, spec.key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(x, spec.issuer != nullptr ? X509_get_subject_name(spec.issuer) : name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, spec.issuer != nullptr ? spec.issuer : x, x, nullptr, nullptr, 0);
  for (const auto& [nid, value] : spec.extensions) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr) fail_ssl("TestCa: extension " + value);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(x, spec.issuer_key != nullptr ? spec.issuer_key : spec.key, EVP_sha256()) == 0) fail_ssl("TestCa: X509_sign");
  return cert;
}

template <class Write>
void write_pem(const std::filesystem::path& path, Write write) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_file(path.c_str(), "w"), &BIO_free);
  if (!bio || write(bio.get()) != 1) fail_ssl("TestCa: writing " + path.string());
}

void write_cert(const std::filesystem::path& path, X509* cert) {
  write_pem(path, [&](BIO* b) { return PEM_write_bio_X509(b, cert); });
}

void write_key(const std::filesystem::path& path, EVP_PKEY* key) {
  write_pem(path, [&](BIO* b) { return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr); });
}

}  // namespace

struct TestCa::Impl {
  std::filesystem::path dir;
  std::filesystem::path cert_path;
  KeyPtr key{nullptr, &EVP_PKEY_free};
  CertPtr cert{nullptr, &X509_free};
};

TestCa::TestCa(std::filesystem::path dir, std::string name) : impl_(std::make_shared<Impl>()) {
  std::filesystem::create_directories(dir);
  impl_->dir = std::move(dir);
  impl_->key = new_p256_key();
  impl_->cert = make_cert({name, impl_->key.get(), nullptr, nullptr, -1h, 24h * 3650,
                           {{NID_basic_constraints, "critical,CA:TRUE"},
                            {NID_key_usage, "critical,keyCertSign,cRLSign"},
                            {NID_subject_key_identifier, "hash"}}});
  impl_->cert_path = impl_->dir / "ca.crt";
  write_cert(impl_->cert_path, impl_->cert.get());
}

const std::filesystem::path& TestCa::cert() const { return impl_->cert_path; }

TlsFiles TestCa::issue(const std::string& stem, const Leaf& leaf) {
  std::string san;
  for (const auto& d : leaf.dns) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : leaf.ips) san += (san.empty() ? "IP:" : ",IP:") + ip;
  CertSpec spec{leaf.dns.empty() ? stem : leaf.dns.front(), nullptr, impl_->cert.get(), impl_->key.get(),
                leaf.not_before, leaf.not_after,
                {{NID_basic_constraints, "critical,CA:FALSE"},
                 {NID_key_usage, "critical,digitalSignature"},
                 {NID_ext_key_usage, "serverAuth,clientAuth"},  // a server's, or a client's for mutual TLS
                 {NID_subject_key_identifier, "hash"},
                 {NID_authority_key_identifier, "keyid"}}};
  if (!san.empty()) spec.extensions.emplace_back(NID_subject_alt_name, san);
  const KeyPtr key = new_p256_key();
  spec.key = key.get();
  const CertPtr cert = make_cert(spec);
  TlsFiles files{impl_->dir / (stem + ".crt"), impl_->dir / (stem + ".key")};
  write_cert(files.cert_chain, cert.get());
  write_key(files.key, key.get());
  return files;
}

TlsFiles TestCa::issue(const std::string& stem) { return issue(stem, Leaf{}); }

std::filesystem::path TestCa::write_hashed(const std::filesystem::path& dir) const {
  std::filesystem::create_directories(dir);
  std::array<char, 16> name{};
  std::snprintf(name.data(), name.size(), "%08lx.0", X509_subject_name_hash(impl_->cert.get()));
  const auto path = dir / name.data();
  write_cert(path, impl_->cert.get());
  return path;
}

}  // namespace wheelfit::testing
