// The tests' in-memory transport (memory_transport.hpp).
#include "support/memory_transport.hpp"

#include <algorithm>
#include <utility>

namespace wheelfit::test {

using net::Request;
using net::Response;

namespace {

// "{url}" in a fault's message stands for the request's URL.
Error for_request(Error error, const std::string& url) {
  if (const auto at = error.message.find("{url}"); at != std::string::npos) error.message.replace(at, 5, url);
  return error;
}

// A 2xx body streamed to the request's sink, as a network transport does; the body stays empty.
Expected<Response> stream(const Request& request, Response response, std::size_t keep) {
  net::Headers extra;
  request.sink->prepare(extra);
  if (auto b = request.sink->begin(response.status, response.headers); !b) return unexpected(b.error());
  if (auto w = request.sink->write(std::string_view(response.body).substr(0, keep)); !w) return unexpected(w.error());
  response.body.clear();
  return response;
}

}  // namespace

MemoryOrigin& MemoryOrigin::serve(const std::string& url, MemoryReply reply) {
  table_.insert_or_assign(url, std::move(reply));
  return *this;
}

MemoryOrigin& MemoryOrigin::serve(const std::string& url, std::string body, std::string content_type,
                                  net::Headers headers) {
  return serve(url, MemoryReply{std::move(body), std::move(content_type), std::move(headers)});
}

MemoryOrigin& MemoryOrigin::serve(const std::string& url, const Response& response) {
  return serve(url, MemoryReply{response.body, response.content_type, response.headers, response.status, response.url});
}

MemoryOrigin& MemoryOrigin::drop(const std::string& url) {
  table_.erase(url);
  url_faults_.erase(url);
  return *this;
}

MemoryOrigin& MemoryOrigin::fail(const std::string& url, Error error) {
  url_faults_.insert_or_assign(url, MemoryFault{std::move(error), std::nullopt});
  return *this;
}

MemoryOrigin& MemoryOrigin::fail_nth(std::size_t n, Error error) {
  nth_faults_.insert_or_assign(n, MemoryFault{std::move(error), std::nullopt});
  return *this;
}

MemoryOrigin& MemoryOrigin::truncate(const std::string& url, std::size_t keep) {
  url_faults_.insert_or_assign(url, MemoryFault{std::nullopt, keep});
  return *this;
}

MemoryOrigin& MemoryOrigin::fail_all(std::optional<Error> error) {
  all_ = std::move(error);
  return *this;
}

MemoryOrigin& MemoryOrigin::handle(Handler handler) {
  handler_ = std::move(handler);
  return *this;
}

MemoryOrigin& MemoryOrigin::forward_to(std::shared_ptr<net::Transport> inner) {
  inner_ = std::move(inner);
  return *this;
}

MemoryOrigin& MemoryOrigin::forward_to(net::Transport& inner) {
  return forward_to(std::shared_ptr<net::Transport>(std::shared_ptr<void>(), &inner));
}

MemoryOrigin& MemoryOrigin::missing(std::string suffix) {
  missing_ = std::move(suffix);
  return *this;
}

MemoryOrigin& MemoryOrigin::hook_order(HookOrder order) {
  order_ = order;
  return *this;
}

std::vector<std::size_t> MemoryOrigin::batch_sizes() const {
  std::vector<std::size_t> out;
  for (const auto& b : batches_) out.push_back(b.size());
  return out;
}

MemoryOrigin& MemoryOrigin::forget() {
  requests_.clear();
  batches_.clear();
  return *this;
}

std::size_t MemoryOrigin::largest_batch() const {
  std::size_t out = 0;
  for (const auto& b : batches_) out = std::max(out, b.size());
  return out;
}

std::size_t MemoryOrigin::count(std::string_view url) const {
  return static_cast<std::size_t>(std::count_if(requests_.begin(), requests_.end(), [&](const Request& r) { return r.url == url; }));
}

std::size_t MemoryOrigin::count_prefix(std::string_view prefix) const {
  return static_cast<std::size_t>(
      std::count_if(requests_.begin(), requests_.end(), [&](const Request& r) { return r.url.starts_with(prefix); }));
}

std::unique_ptr<net::Transport> MemoryOrigin::transport_over(std::shared_ptr<MemoryOrigin> origin) {
  return std::make_unique<MemoryTransport>(std::move(origin));
}

Expected<Response> MemoryOrigin::answer(const Request& request) {
  requests_.push_back(request);
  if (all_) return unexpected(for_request(*all_, request.url));
  if (auto it = nth_faults_.find(requests_.size()); it != nth_faults_.end()) return faulted(request, it->second);
  if (auto it = url_faults_.find(request.url); it != url_faults_.end()) return faulted(request, it->second);
  if (handler_) {
    if (auto handled = handler_(request)) return std::move(*handled);
  }
  if (table_.contains(request.url)) return from_table(request);
  if (inner_) return inner_->get(request);
  return unexpected(Errc::not_found, request.url + missing_);
}

Expected<Response> MemoryOrigin::faulted(const Request& request, const MemoryFault& fault) {
  if (fault.error) return unexpected(for_request(*fault.error, request.url));
  if (table_.contains(request.url) && request.sink) {
    if (auto partial = from_table(request); !partial) return partial;
  }
  return net::net_error(net::NetErrc::truncated,
                              request.url + ": the body ended after " + std::to_string(*fault.keep) + " bytes");
}

Expected<Response> MemoryOrigin::from_table(const Request& request) {
  const MemoryReply& reply = table_.at(request.url);
  if (reply.status == 404 || reply.status == 410) return unexpected(Errc::not_found, request.url + missing_);
  if (reply.status >= 400) {
    return net::net_error(net::NetErrc::http_status, request.url + ": HTTP " + std::to_string(reply.status));
  }
  if (reply.body.size() > request.max_body) return unexpected(Errc::too_large, request.url + ": body above its limit");
  Response out{reply.url.empty() ? request.url : reply.url, reply.content_type, reply.body, reply.status, reply.headers, false};
  if (!request.sink || reply.status >= 300) return out;
  const auto fault = url_faults_.find(request.url);
  const bool cut = fault != url_faults_.end() && fault->second.keep;
  return stream(request, std::move(out), cut ? *fault->second.keep : reply.body.size());
}

bool MemoryOrigin::forwards(const std::vector<Request>& requests) const {
  if (!inner_ || all_ || handler_) return false;
  return std::none_of(requests.begin(), requests.end(), [&](const Request& r) {
    return table_.contains(r.url) || url_faults_.contains(r.url);
  }) && nth_faults_.empty();
}

net::Stats MemoryTransport::stats() const {
  // A counting wrapper over another transport reports what that one reports (the file transport:
  // nothing), as the wrappers it replaced did: a result's "fetch" line must not depend on how
  // many calls shared the wrapper.
  if (origin_->inner_) return origin_->inner_->stats();
  net::Stats st;
  st.requests = origin_->requests_.size();
  return st;
}

Expected<Response> MemoryTransport::get_impl(const Request& request) {
  ++origin_->calls_;
  return origin_->answer(request);
}

std::vector<Expected<Response>> MemoryTransport::get_many_impl(const std::vector<Request>& requests) {
  return get_many_hooked_impl(requests, {});
}

std::vector<Expected<Response>> MemoryTransport::get_many_hooked_impl(const std::vector<Request>& requests,
                                                                      const AnswerHook& on_answer) {
  auto& o = *origin_;
  ++o.calls_;
  std::vector<std::string> urls;
  for (const auto& r : requests) urls.push_back(r.url);
  o.batches_.push_back(std::move(urls));
  if (o.forwards(requests)) {  // a counting wrapper: the inner transport's batch, concurrency and all
    o.requests_.insert(o.requests_.end(), requests.begin(), requests.end());
    return o.inner_->get_many(requests, on_answer);
  }
  std::vector<Expected<Response>> out;
  out.reserve(requests.size());
  for (const auto& r : requests) out.push_back(o.answer(r));
  o.telling_ = true;  // as a network transport does: each answer told before get_many returns
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::size_t i = o.order_ == HookOrder::reversed ? out.size() - 1 - k : k;
    tell(on_answer, i, out[i]);
  }
  o.telling_ = false;
  return out;
}

}  // namespace wheelfit::test
