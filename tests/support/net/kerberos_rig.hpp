#pragma once
// A Kerberos realm and a proxy that demands Negotiate, on loopback, for the tests
// (../shared/docs/KERBEROS-RIG.md): an MIT KDC (krb5kdc) with the realm TEST.LOCAL, its database
// and keytabs made in a temporary folder; squid (Debian's) with its own configuration asking
// for `Proxy-Authenticate: Negotiate` (negotiate_kerberos_auth with the keytab of
// HTTP/localhost); the user alice, whose ticket kinit puts into a cache of the rig's. Nothing
// outside the folder is read or written: KRB5_CONFIG, KRB5CCNAME and KRB5_CLIENT_KTNAME (a
// missing file, or MIT krb5 would get a ticket by itself) point into it. Every server is started
// by this class and killed by its process id in the destructor; no system service is used.
// Thread safety: one thread. Errors: std::runtime_error with the step and its log.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wheelfit::testing {

class KerberosRig {
 public:
  static constexpr const char* kRealm = "TEST.LOCAL";
  static constexpr const char* kUser = "alice@TEST.LOCAL";

  /// The first tool the rig needs that is not installed ("krb5kdc (Debian package krb5-kdc)"),
  /// or nullopt when all are there.
  static std::optional<std::string> missing_tool();

  /// Makes the realm, starts the KDC and squid, and waits until both accept connections. No
  /// ticket yet (kinit()).
  KerberosRig();
  ~KerberosRig();  ///< kills squid and the KDC (their process ids), removes the folder
  KerberosRig(const KerberosRig&) = delete;
  KerberosRig& operator=(const KerberosRig&) = delete;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] std::uint16_t proxy_port() const { return proxy_port_; }
  /// "http://localhost:<port>": the host names the service, HTTP/localhost.
  [[nodiscard]] std::string proxy_url(const std::string& host = "localhost") const;
  /// The variables a client of the realm needs: KRB5_CONFIG, KRB5CCNAME, KRB5_CLIENT_KTNAME.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> client_env() const;
  /// client_env() as shell words ("KRB5_CONFIG='...' ...").
  [[nodiscard]] std::string client_env_words() const;

  /// A ticket for alice in the rig's cache (`lifetime`: kinit -l, e.g. "1h" or "5s").
  void kinit(const std::string& lifetime = "");
  /// Empties the cache (no ticket).
  void kdestroy();
  /// Stops the KDC (a ticket in the cache stays usable only for services already asked for).
  void stop_kdc();
  /// squid's access log so far (one line a request: "... TCP_MISS/200 GET URL alice@TEST.LOCAL ...").
  [[nodiscard]] std::string access_log() const;
  /// squid's and the KDC's logs, for a failed check's INFO.
  [[nodiscard]] std::string logs() const;

 private:
  void run(const std::string& what, const std::string& command) const;
  int spawn(const std::vector<std::string>& argv, const std::filesystem::path& log) const;

  std::filesystem::path dir_;
  std::uint16_t kdc_port_ = 0;
  std::uint16_t proxy_port_ = 0;
  int kdc_pid_ = -1;
  int squid_pid_ = -1;
};

}  // namespace wheelfit::testing
