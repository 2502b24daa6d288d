#pragma once
// The transport registry: which Transport reads which URL scheme, which decorators wrap a stack
// and in what order, and the few services of the registered transports the façade asks for. The
// façade composes every stack through it and names no transport (docs/decisions/0018).
//
// Registration is explicit: one call at start-up fills a registry, as registry::load_plugins
// fills the backends' (wheelfit::transports::register_transports(net::default_registry())
// for the built-ins: file, http, https, the on-disk cache). An
// embedder adds its own schemes beside them (examples/embed/cpp: mem://).
//
// Errors: a registration that clashes (a scheme, a decorator or a service registered twice, a
// scheme that is not one) is Errc::invalid_input naming it and who holds it; a URL whose scheme
// no transport reads is Errc::usage naming the scheme and the registered ones (exit 2).
// Thread safety: register before use, from one thread; then any number of threads may read.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/options.hpp"
#include "wheelfit/net/transport.hpp"
#include "wheelfit/util/expected.hpp"

namespace wheelfit::net {

/// The scheme of `url`, lower-cased ("https" for "HTTPS://h/"), or "" when it has none (a plain
/// path: the file transport's). A scheme is a letter, then letters, digits, '+', '-', '.', then "://".
std::string scheme_of(std::string_view url);

/// What a stack is built from: plain options of the core.
struct StackOptions {
  HttpOptions network;
  std::optional<CacheOptions> cache;  ///< the on-disk cache decorator's; nullopt: no cache
};

/// Makes a transport for its schemes. Errors (a trust store that does not load, ...) fail the stack.
using Factory = std::function<Expected<std::unique_ptr<Transport>>(const StackOptions& options)>;
/// Wraps a stack; one that does not apply to `options` returns `inner` as it is.
using Decorator =
    std::function<Expected<std::unique_ptr<Transport>>(std::unique_ptr<Transport> inner, const StackOptions& options)>;

/// A transport and the schemes it reads ("http" reads {"http", "https"}), with what those schemes
/// are. One instance per stack serves all of its schemes.
struct TransportEntry {
  std::string name;
  std::vector<std::string> schemes;  ///< lower case; "file" also reads plain paths
  Factory make;
  /// Its schemes' facts; nullopt: default_facts (none, unless the scheme is http or https).
  std::optional<SchemeFacts> facts = std::nullopt;
};

/// A decorator, applied in ascending `order` over the whole stack (the lowest is innermost).
struct DecoratorEntry {
  std::string name;
  int order = 0;
  Decorator wrap;
};

/// The http transport's rules the façade applies before it builds a stack, and reports.
struct HttpRules {
  /// The http(s) `url` without its userinfo, which goes to `net.credentials` for the URL's origin
  /// (source `what`), as does `token` (a bearer token) when given and not blank. Errors name the URL.
  std::function<Expected<std::string>(const std::string& url, const std::string& what,
                                      const std::optional<std::string>& token, HttpOptions& net)>
      take_credentials;
  /// The route a request to `url` would take (`wheelfit doctor --url`).
  std::function<Expected<ProxyPlan>(const HttpOptions& net, std::string_view url)> plan_proxy;
  /// The trust store and client certificate `net` gives https.
  std::function<TrustChoice(const HttpOptions& net)> choose_trust;
  /// Whether `url`'s host may get credentials over plain http (`credentials.insecure_hosts`,
  /// --allow-insecure-host); false for a URL that is not http(s).
  std::function<bool(const Credentials& credentials, std::string_view url)> insecure_allowed;
};

/// The on-disk cache's housekeeping (`wheelfit cache`), registered with the cache decorator.
struct CacheKeeping {
  std::function<Expected<std::filesystem::path>()> default_dir;  ///< the cache folder's parent ($XDG_CACHE_HOME/wheelfit)
  std::function<Expected<CacheUsage>(const std::filesystem::path& root)> usage;
  std::function<Expected<CacheCleanup>(const std::filesystem::path& root, std::uint64_t max_bytes)> prune;
  std::function<Expected<CacheCleanup>(const std::filesystem::path& root)> clean;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// Registers a transport. Errc::invalid_input: no name, no factory, no scheme, a scheme that is
  /// not one, or a name or scheme already registered (naming the transport that has it).
  Expected<void> add_transport(TransportEntry entry);
  /// Registers a decorator. Errc::invalid_input: no name, no function, a name already registered.
  Expected<void> add_decorator(DecoratorEntry entry);
  /// The services; each may be registered once (Errc::invalid_input naming it otherwise).
  Expected<void> set_http_rules(HttpRules rules);
  Expected<void> set_cache_keeping(CacheKeeping keeping);

  /// The registered schemes, sorted; the decorators' names in the order they are applied.
  [[nodiscard]] std::vector<std::string> schemes() const;
  [[nodiscard]] std::vector<std::string> decorators() const;
  /// nullptr when none is registered.
  [[nodiscard]] const HttpRules* http_rules() const { return http_rules_ ? &*http_rules_ : nullptr; }
  [[nodiscard]] const CacheKeeping* cache_keeping() const { return cache_keeping_ ? &*cache_keeping_ : nullptr; }

  /// The facts of `url`'s scheme (a plain path: "file"'s) as its transport declared them;
  /// default_facts(url) when no transport reads it, or its transport declared none.
  [[nodiscard]] SchemeFacts facts(std::string_view url) const;
  /// Whether a registered transport reads `url`'s scheme (a plain path: "file").
  [[nodiscard]] bool reads(std::string_view url) const;
  /// Errc::usage "<what>no transport reads the scheme 'ftp' (ftp://h/x); registered: file, http,
  /// https" when none reads `url` (redacted); `what` opens the message ("--index: ").
  [[nodiscard]] Expected<void> check(std::string_view url, std::string_view what = {}) const;
  /// A stack: every registered transport, made now, behind one that routes each request by its
  /// scheme (a scheme none reads: Errc::usage), wrapped by the decorators in order. Errors: the
  /// factories' and decorators'.
  [[nodiscard]] Expected<std::unique_ptr<Transport>> make(const StackOptions& options) const;
  /// The stack for reading `url`: check(url), then make(options).
  [[nodiscard]] Expected<std::unique_ptr<Transport>> make(std::string_view url, const StackOptions& options) const;

 private:
  std::vector<TransportEntry> transports_;
  std::vector<DecoratorEntry> decorators_;  // sorted by order, then registration
  std::optional<HttpRules> http_rules_;
  std::optional<CacheKeeping> cache_keeping_;
};

/// The registry the façade uses when a request names none. Empty until the program registers
/// into it at start-up (the wheelfit executable: wheelfit::transports::register_transports).
Registry& default_registry();

}  // namespace wheelfit::net
