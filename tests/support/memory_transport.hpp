#pragma once
// The one in-memory transport of the tests (issue 34, item 7): a net::Transport that serves
// a table URL -> answer, records every request and batch it saw, and fails where a test says so,
// the way Beast's test stream fails at step N (docs/STYLE.md, lesson 10).
//
// The table and the records live in a MemoryOrigin, shared by every MemoryTransport made over it:
// a test keeps the origin while the transport is moved into a decorator (the cache, a registry
// factory), or reopened over the same origin, and reads its counters after the transport is gone.
//
// How a request is answered, first match wins:
//   1. a fault: the Nth request (1-based, over every request the origin saw), a URL, or all;
//   2. the handler, when set and it answers (scripted origins: ETags, 304s, per-request logic);
//   3. the table, by exact URL;
//   4. the inner transport, when set (counting wrappers over a real transport);
//   5. else Errc::not_found, "<url><missing suffix>" (": 404" unless set).
// An answer with status 404 or 410 becomes Errc::not_found, any other status of 400 or more
// NetErrc::http_status; a body above Request::max_body is Errc::too_large. A request with a sink
// gets its 2xx body streamed there (prepare, begin, write), and an empty Response::body.
//
// Thread safety: none; one test thread drives an origin and its transports.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelfit/net/transport.hpp"

namespace wheelfit::test {

/// One answer of the table: a status, headers, a body; `url` empty means the request's URL.
struct MemoryReply {
  std::string body;
  std::string content_type = "text/html";
  net::Headers headers{};
  int status = 200;
  std::string url{};
};

/// The order a hooked get_many tells its hook of the answers.
enum class HookOrder { in_order, reversed };

/// What a fault does to the request it hits.
struct MemoryFault {
  std::optional<Error> error;        ///< answered with this error
  std::optional<std::size_t> keep;   ///< or: the body cut after `keep` bytes, then NetErrc::truncated
};

/// The table, the faults and the records behind one or more MemoryTransport.
class MemoryOrigin {
 public:
  using Handler = std::function<std::optional<Expected<net::Response>>(const net::Request&)>;

  /// Serves `reply` for `url` (replacing an earlier answer).
  MemoryOrigin& serve(const std::string& url, MemoryReply reply);
  /// Serves a 200 with `body` and `content_type` for `url`.
  MemoryOrigin& serve(const std::string& url, std::string body, std::string content_type = "text/html",
                      net::Headers headers = {});
  /// Serves `response` as it is for `url` (its url, when empty, the request's).
  MemoryOrigin& serve(const std::string& url, const net::Response& response);
  /// Forgets what serve(), fail() and truncate() set for `url` (it is a 404 again).
  MemoryOrigin& drop(const std::string& url);
  /// Answers `url` with `error`, every time.
  MemoryOrigin& fail(const std::string& url, Error error);
  /// Answers the `n`th request from now on (1-based, counted over requests()) with `error`.
  MemoryOrigin& fail_nth(std::size_t n, Error error);
  /// Cuts the body for `url` after `keep` bytes and answers NetErrc::truncated (what a transport
  /// says of a short body); a sink gets the `keep` bytes first.
  MemoryOrigin& truncate(const std::string& url, std::size_t keep);
  /// Answers every request with `error` (nullopt: stop).
  MemoryOrigin& fail_all(std::optional<Error> error);
  /// Consulted before the table; nullopt lets the table answer.
  MemoryOrigin& handle(Handler handler);
  /// Requests the origin cannot answer go to `inner` (a batch none of whose URLs the origin
  /// answers goes to inner's get_many whole, hook and all).
  MemoryOrigin& forward_to(std::shared_ptr<net::Transport> inner);
  /// The same, not owned: `inner` must outlive the transports.
  MemoryOrigin& forward_to(net::Transport& inner);
  /// The suffix of the not-found message after the URL (": 404" by default).
  MemoryOrigin& missing(std::string suffix);
  /// The order a hooked get_many tells its hook.
  MemoryOrigin& hook_order(HookOrder order);

  /// Every request answered, in order (a batch's in request order).
  [[nodiscard]] const std::vector<net::Request>& requests() const { return requests_; }
  /// The URLs of each get_many batch (a single get() is no batch).
  [[nodiscard]] const std::vector<std::vector<std::string>>& batches() const { return batches_; }
  /// The size of each get_many batch, in order.
  [[nodiscard]] std::vector<std::size_t> batch_sizes() const;
  /// Forgets the requests and batches seen so far (the Nth-request faults count from here).
  MemoryOrigin& forget();
  /// get() and get_many() calls seen (a batch is one call).
  [[nodiscard]] std::size_t calls() const { return calls_; }
  /// The size of the largest get_many batch (0: none).
  [[nodiscard]] std::size_t largest_batch() const;
  /// Requests for exactly `url`.
  [[nodiscard]] std::size_t count(std::string_view url) const;
  /// Requests whose URL starts with `prefix`.
  [[nodiscard]] std::size_t count_prefix(std::string_view prefix) const;
  /// True while a hooked get_many is telling its hook of its answers (before it returns).
  [[nodiscard]] bool telling() const { return telling_; }

  /// A transport over this origin.
  [[nodiscard]] static std::unique_ptr<net::Transport> transport_over(std::shared_ptr<MemoryOrigin> origin);

 private:
  friend class MemoryTransport;
  Expected<net::Response> answer(const net::Request& request);
  Expected<net::Response> faulted(const net::Request& request, const MemoryFault& fault);
  Expected<net::Response> from_table(const net::Request& request);
  [[nodiscard]] bool forwards(const std::vector<net::Request>& requests) const;

  std::map<std::string, MemoryReply> table_;
  std::map<std::string, MemoryFault> url_faults_;
  std::map<std::size_t, MemoryFault> nth_faults_;
  std::optional<Error> all_;
  Handler handler_;
  std::shared_ptr<net::Transport> inner_;
  std::string missing_ = ": 404";
  HookOrder order_ = HookOrder::in_order;
  std::vector<net::Request> requests_;
  std::vector<std::vector<std::string>> batches_;
  std::size_t calls_ = 0;
  bool telling_ = false;
};

/// A net::Transport answering from a MemoryOrigin (its own, or one shared with the test).
/// stats().requests counts the requests this origin saw; over an inner transport (forward_to),
/// stats() are the inner's.
class MemoryTransport final : public net::Transport {
 public:
  MemoryTransport() : origin_(std::make_shared<MemoryOrigin>()) {}
  explicit MemoryTransport(std::shared_ptr<MemoryOrigin> origin) : origin_(std::move(origin)) {}
  /// A counting wrapper: an origin of its own that forwards everything to `inner` (not owned).
  /// Over another MemoryTransport, pass it as a net::Transport& (else the deleted copy).
  explicit MemoryTransport(net::Transport& inner) : MemoryTransport() { origin_->forward_to(inner); }
  [[nodiscard]] MemoryOrigin& origin() { return *origin_; }
  [[nodiscard]] const std::shared_ptr<MemoryOrigin>& shared_origin() const { return origin_; }
  [[nodiscard]] net::Stats stats() const override;

 private:
  Expected<net::Response> get_impl(const net::Request& request) override;
  std::vector<Expected<net::Response>> get_many_impl(const std::vector<net::Request>& requests) override;
  std::vector<Expected<net::Response>> get_many_hooked_impl(const std::vector<net::Request>& requests,
                                                                  const AnswerHook& on_answer) override;
  std::shared_ptr<MemoryOrigin> origin_;
};

}  // namespace wheelfit::test
