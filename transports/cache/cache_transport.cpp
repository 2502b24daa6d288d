// The cache decorator (cache_transport.hpp): what a batch asks, reads and settles. Entries and
// their sidecars: cache_entry.cpp; the store and its writer thread: cache_store.cpp; the size
// cap and leftover temporary files: cache_housekeeping.cpp.
#include "wheelfit/transports/cache_transport.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <future>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "cache_entry.hpp"
#include "cache_store.hpp"
#include "wheelfit/transports/cache_housekeeping.hpp"
#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/user_folders.hpp"

namespace wheelfit::transports {
namespace fs = std::filesystem;
using namespace cache_detail;
using net::Headers;
using net::Request;
using net::Response;

namespace {

/// Runs `a` on a helper thread and `b` on this one, and returns when both are done (both inline,
/// one after the other, when no thread can be started). An exception from either is rethrown.
template <class A, class B>
void run_beside(A&& a, B&& b) {
  std::future<void> helper;
  try {
    helper = std::async(std::launch::async, [&a, sink = log::thread_sink()] {
      const log::ScopedSink carried(sink);  // the call's log sink, on the helper thread too
      a();
    });
  } catch (const std::system_error&) {
    a();
  }
  std::exception_ptr failed;
  try {
    b();
  } catch (...) {
    failed = std::current_exception();
  }
  if (helper.valid()) helper.get();  // joins; rethrows a's exception
  if (failed) std::rethrow_exception(failed);
}

// ---------------------------------------------------------------------------------------------
// The decorator

class CacheTransport final : public net::Transport {
 public:
  CacheTransport(std::unique_ptr<net::Transport> inner, fs::path root, bool offline, std::uint64_t max_size)
      : inner_(std::move(inner)), store_(root / "v2"), root_(std::move(root)), offline_(offline), max_size_(max_size) {}
  CacheTransport(const CacheTransport&) = delete;
  CacheTransport& operator=(const CacheTransport&) = delete;
  ~CacheTransport() override { housekeep(); }

  [[nodiscard]] net::Stats stats() const override {
    auto s = inner_->stats();
    s.cache_fresh += fresh_;
    s.cache_revalidated += revalidated_;
    return s;
  }

  void flush() override {
    housekeep();
    inner_->flush();
  }

 private:
  struct Plan {
    bool cached = false;       ///< a cacheable URL (http/https, no caller validators)
    bool serve = false;        ///< answered from the stored entry without a request (fresh, or offline)
    bool conditional = false;  ///< we add If-None-Match / If-Modified-Since
    std::string key;
    std::string accept;
    std::optional<Meta> meta;                  ///< a valid stored sidecar (stale ones too)
    std::string buffer;                        ///< meta->size bytes, allocated here for the body's read
    std::optional<std::string> body;           ///< its verified body, when serve or conditional
    std::optional<Expected<Response>> answer;  ///< set once the plan is settled
  };

  net::SchemeFacts facts_impl(std::string_view url) const override { return inner_->facts(url); }
  Expected<Response> get_impl(const Request& request) override {
    auto out = get_many_impl({request});
    return std::move(out.front());
  }

  std::vector<Expected<Response>> get_many_impl(const std::vector<Request>& requests) override {
    return get_many_hooked_impl(requests, {});
  }

  // The caller's hook hears an answer of the inner transport the moment it comes when settle()
  // returns it unchanged (every answer but a 304: a 200 stored or not, an error, another status),
  // so the caller's work on it runs while the rest are on the wire; the others (fresh entries,
  // 304s, refetches) after the batch.
  std::vector<Expected<Response>> get_many_hooked_impl(const std::vector<Request>& requests,
                                                       const AnswerHook& caller_hook) override {
    store_.drain();  // this batch reads what the batches before it stored
    std::vector<Plan> plans(requests.size());
    Round round;
    round.told.assign(requests.size(), 0);
    // 1. The sidecars (small) decide what to ask.
    const auto now = now_seconds();
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (plan_request(requests[i], plans[i], now)) round.to_inner.push_back(i);
    }
    // 2. The bodies (the bulk of the bytes) are read and verified while the requests are on the wire.
    fetch_and_load(requests, plans, round, caller_hook);
    // 3. Settle. A body found corrupt under a fresh sidecar or a 304 is fetched again, plainly.
    refetch(requests, plans, settle_all(requests, plans, round));

    std::vector<Expected<Response>> out;
    out.reserve(plans.size());
    for (auto& plan : plans) out.push_back(std::move(*plan.answer));
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!round.told[i]) tell(caller_hook, i, out[i]);
    }
    return out;
  }

  // What one batch sent to the inner transport, and what came back.
  struct Round {
    std::vector<std::size_t> to_inner;         ///< plans whose request goes to the inner transport
    std::vector<Expected<Response>> answers;   ///< answers[j]: inner request j's
    std::vector<char> stored;                  ///< stored[j]: the answer to inner request j is queued
    std::vector<char> told;                    ///< told[i]: the caller's hook heard answer i
  };

  // Plans `req` from its sidecar: answered already (plan.answer), served from the entry
  // (plan.serve), or to be sent to the inner transport (true).
  bool plan_request(const Request& req, Plan& plan, std::int64_t now) {
    // A streamed body (a wheel) is never cached: it goes straight to the inner transport.
    plan.cached = inner_->facts(req.url).cacheable && !req.sink && !has_header(req.headers, "if-none-match") &&
                  !has_header(req.headers, "if-modified-since") && !has_header(req.headers, "range");
    if (!plan.cached) {
      if (!(offline_ && inner_->facts(req.url).cacheable)) return true;
      plan.answer.emplace(offline_miss(req.url));
      return false;
    }
    plan.accept = header_or_empty(req.headers, "accept");
    // Keyed and stored without credentials: no secret in a file name or an entry.
    const std::string url = util::strip_credentials(req.url);
    plan.key = sha256_hex(url + "\n" + plan.accept);
    plan.meta = store_.load_meta(plan.key, url, plan.accept);
    if (plan.meta && plan.meta->size > req.max_body) {
      plan.answer.emplace(unexpected(Errc::too_large, url + ": " + std::to_string(plan.meta->size) +
                                                          " bytes (cached) exceeds the limit of " +
                                                          std::to_string(req.max_body) + " bytes"));
      return false;
    }
    if (offline_) {
      if (plan.meta) plan.serve = true;
      else plan.answer.emplace(offline_miss(req.url));
      return false;
    }
    if (plan.meta && plan.meta->fresh(now)) {
      plan.serve = true;
      return false;
    }
    plan.conditional = plan.meta && plan.meta->has_validator();
    return true;
  }

  // Sends round.to_inner's requests while the stored bodies the plans need are read and verified
  // (with nothing to send, on two threads); each new entry is queued for the writer, and the
  // caller's hook told, the moment its answer is in.
  void fetch_and_load(const std::vector<Request>& requests, std::vector<Plan>& plans, Round& round,
                      const AnswerHook& caller_hook) {
    std::vector<std::size_t> need;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      if (plans[i].serve || plans[i].conditional) need.push_back(i);
    }
    for (auto i : need) {  // sized here only when the file is that size: a lying sidecar allocates nothing
      const Meta& m = *plans[i].meta;
      if (m.file_size == m.offset + m.size) plans[i].buffer.resize(m.size);
    }
    auto load = [&](const std::vector<std::size_t>& which) {
      for (auto i : which) plans[i].body = store_.load_body(plans[i].key, *plans[i].meta, std::move(plans[i].buffer));
    };
    const auto& to_inner = round.to_inner;
    round.stored.assign(to_inner.size(), 0);
    if (to_inner.empty()) {
      if (need.size() <= 1) return load(need);
      auto [one, two] = split_by_size(need, plans);
      return run_beside([&] { load(one); }, [&] { load(two); });
    }
    std::vector<Request> inner_requests;
    inner_requests.reserve(to_inner.size());
    for (auto i : to_inner) inner_requests.push_back(with_validators(requests[i], plans[i]));
    // A new entry goes to the writer the moment its answer is in, while the rest still arrive.
    auto store_answer = [&](std::size_t j, const Expected<Response>& a) {
      if (j >= to_inner.size() || !plans[to_inner[j]].cached || !a || a->status != 200) return;
      if (parse_cache_control(a->headers).no_store) return;  // settle removes the old entry
      const auto i = to_inner[j];
      store_.put(plans[i].key, new_meta(requests[i], plans[i], *a), a->body);  // a copy: the caller keeps its own
      round.stored[j] = 1;
    };
    auto on_answer = [&](std::size_t j, const Expected<Response>& a) {
      store_answer(j, a);
      if (j >= to_inner.size() || (a && a->status == 304)) return;
      round.told[to_inner[j]] = 1;
      tell(caller_hook, to_inner[j], a);
    };
    auto fetch = [&] { round.answers = inner_->get_many(inner_requests, on_answer); };
    if (need.empty()) fetch();
    else run_beside([&] { load(need); }, fetch);
  }

  // Each plan's answer: the entry served, the inner answer settled; those to fetch again (a body
  // found corrupt under a fresh sidecar or a 304) are returned, their answers left unset.
  std::vector<std::size_t> settle_all(const std::vector<Request>& requests, std::vector<Plan>& plans, Round& round) {
    std::vector<std::size_t> again;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      auto& plan = plans[i];
      if (!plan.serve) continue;
      if (plan.body) {
        ++fresh_;
        store_.touch(plan.key);
        plan.answer.emplace(from_entry(*plan.meta, std::move(*plan.body)));
      } else if (offline_) {
        plan.answer.emplace(offline_miss(requests[i].url));
      } else {
        again.push_back(i);
      }
    }
    for (std::size_t j = 0; j < round.to_inner.size(); ++j) {
      const auto i = round.to_inner[j];
      auto& plan = plans[i];
      if (j >= round.answers.size()) {
        plan.answer.emplace(unexpected(Errc::io_error, requests[i].url + ": the inner transport returned no answer"));
        continue;
      }
      auto& answer = round.answers[j];
      if (plan.cached && answer && answer->status == 304 && plan.conditional && !plan.body) {
        again.push_back(i);
        continue;
      }
      plan.answer.emplace(plan.cached ? settle(requests[i], plan, std::move(answer), round.stored[j] != 0)
                                      : std::move(answer));
    }
    return again;
  }

  // The plans `which` fetched again plainly (no validators, no stored entry) and settled.
  void refetch(const std::vector<Request>& requests, std::vector<Plan>& plans, const std::vector<std::size_t>& which) {
    if (which.empty()) return;
    std::vector<Request> again;
    again.reserve(which.size());
    for (auto i : which) {
      plans[i].meta.reset();
      plans[i].body.reset();
      plans[i].conditional = false;
      again.push_back(requests[i]);
    }
    auto answers = inner_->get_many(again);
    for (std::size_t j = 0; j < which.size(); ++j) {
      auto& plan = plans[which[j]];
      plan.answer.emplace(j < answers.size() ? settle(requests[which[j]], plan, std::move(answers[j]))
                                             : Expected<Response>(unexpected(Errc::io_error, requests[which[j]].url +
                                                                        ": the inner transport returned no answer")));
    }
  }

  /// Once the writes are on disk: the size cap when something was written, else only the
  /// temporary files a killed run left behind. Never throws.
  void housekeep() noexcept {
    try {
      if (!store_.take_changes()) {
        util::remove_stale_temp_files(store_.dir(), std::nullopt, kStaleTempAge);
        return;
      }
      auto pruned = prune_cache(root_, max_size_);
      if (!pruned) {
        log::warn("cache: " + pruned.error().message);
      } else if (pruned->removed_entries > 0) {
        log::info("cache: removed the " + std::to_string(pruned->removed_entries) + " least recently used entries (" +
                  std::to_string(pruned->removed_bytes) + " bytes) to stay within " + std::to_string(max_size_) + " bytes");
      }
    } catch (const std::exception& e) {  // bad_alloc: the cap waits for the next run
      log::debug(std::string("cache: housekeeping skipped: ") + e.what());
    }
  }

  static Request with_validators(const Request& req, const Plan& plan) {
    Request r = req;
    if (plan.conditional) {
      if (!plan.meta->etag.empty()) r.headers.emplace_back("If-None-Match", plan.meta->etag);
      if (!plan.meta->last_modified.empty()) r.headers.emplace_back("If-Modified-Since", plan.meta->last_modified);
    }
    return r;
  }

  /// Two lists of about equal bytes (largest first, each to the lighter list).
  static std::pair<std::vector<std::size_t>, std::vector<std::size_t>> split_by_size(std::vector<std::size_t> which,
                                                                                     const std::vector<Plan>& plans) {
    std::sort(which.begin(), which.end(), [&](auto a, auto b) { return plans[a].meta->size > plans[b].meta->size; });
    std::pair<std::vector<std::size_t>, std::vector<std::size_t>> out;
    std::uint64_t first = 0, second = 0;
    for (auto i : which) {
      if (first <= second) {
        out.first.push_back(i);
        first += plans[i].meta->size;
      } else {
        out.second.push_back(i);
        second += plans[i].meta->size;
      }
    }
    return out;
  }

  /// The sidecar of a new entry for `r`, the 200 answering `req` (its sha256 and size: the writer's).
  static Meta new_meta(const Request& req, const Plan& plan, const Response& r) {
    Meta m;
    m.url = util::strip_credentials(req.url);
    m.accept = plan.accept;
    m.final_url = util::strip_credentials(r.url.empty() ? req.url : r.url);
    m.content_type = r.content_type;
    m.take_headers(r.headers, now_seconds());
    return m;
  }

  /// What a cacheable request's inner answer means for the entry and for the caller; `queued`: a
  /// 200 already went to the writer as it arrived.
  Expected<Response> settle(const Request& req, Plan& plan, Expected<Response> answer, bool queued = false) {
    if (!answer) {
      // A clean "not published" removes the entry; network errors pass through, the entry kept.
      if (answer.error().is(Errc::not_found)) store_.erase(plan.key);
      return answer;
    }
    Response& r = *answer;
    if (r.status == 304) {
      if (!plan.conditional || !plan.meta || !plan.body) {
        return net::net_error(net::NetErrc::protocol,
                                    req.url + ": a 304 Not Modified answered a request that was not conditional");
      }
      const auto now = now_seconds();
      Meta updated = *plan.meta;
      updated.take_headers(merge_headers(plan.meta->headers, r.headers), now);
      if (parse_cache_control(updated.headers).no_store) store_.erase(plan.key);
      else if (worth_storing(*plan.meta, updated, now)) store_.put(plan.key, updated, *plan.body);  // a copy
      else store_.touch(plan.key);
      ++revalidated_;
      return from_entry(updated, std::move(*plan.body));
    }
    if (r.status != 200) return answer;  // not cacheable; the caller sees what came
    if (parse_cache_control(r.headers).no_store) {
      store_.erase(plan.key);
      return answer;
    }
    if (!queued) store_.put(plan.key, new_meta(req, plan, r), r.body);  // a copy: the caller keeps its own
    return answer;
  }

  static Error offline_miss(const std::string& url) {
    return net::net_error(net::NetErrc::offline, util::strip_credentials(url) + ": not in the cache (offline mode)");
  }

  static Response from_entry(const Meta& meta, std::string body) {
    Response r;
    r.url = meta.final_url;
    r.content_type = meta.content_type;
    r.body = std::move(body);
    r.status = 200;
    r.headers = meta.headers;
    r.from_cache = true;
    return r;
  }

  std::unique_ptr<net::Transport> inner_;
  Store store_;  ///< <root>/v2; destroyed (its writes finished) before inner_
  fs::path root_;
  bool offline_;
  std::uint64_t max_size_;
  std::uint64_t fresh_ = 0;
  std::uint64_t revalidated_ = 0;
};

}  // namespace

Expected<fs::path> default_cache_dir() {
  if (auto root = util::user_cache_root(util::env_utf8)) return *root;
  return unexpected(Errc::invalid_input, "no cache directory: " + std::string(util::no_cache_root_reason()));
}

Expected<std::unique_ptr<net::Transport>> make_cache_transport(std::unique_ptr<net::Transport> inner,
                                                                      CacheOptions options) {
  if (!inner) return unexpected(Errc::invalid_input, "make_cache_transport: no inner transport");
  fs::path root = options.dir;
  if (root.empty()) {
    auto d = default_cache_dir();
    if (!d) return d.error();
    root = std::move(*d);
  }
  const fs::path dir = root / "v2";  // format 2; a v1/ beside it (two files an entry) is not read
  // Private: entries may name internal hosts (folders 0700, files 0600).
  if (auto made = util::create_private_directories(dir); !made) {
    return unexpected(Errc::io_error, "cache directory " + dir.string() + ": " + made.error().message);
  }
  std::error_code ec;
  // A ".tmp-" name: never read as an entry, should a crash leave it behind.
  const fs::path probe = dir / ".tmp-probe";
  if (auto w = util::write_file_atomic(probe, {}, {.durable = false}); !w) {
    return unexpected(Errc::io_error, "cache directory " + dir.string() + " is not writable: " + w.error().message);
  }
  fs::remove(probe, ec);
  return std::unique_ptr<net::Transport>(
      std::make_unique<CacheTransport>(std::move(inner), std::move(root), options.offline, options.max_size));
}

}  // namespace wheelfit::transports
