// The transport registry (registry.hpp): schemes to factories, decorators in order, and the
// stack that routes each request to the transport of its scheme.
#include "wheelfit/net/registry.hpp"

#include <algorithm>
#include <map>

#include "wheelfit/model/url.hpp"
#include "wheelfit/util/secrets.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::net {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none (register the transports at start-up: wheelfit::transports::register_transports)" : out;
}

// The scheme a request's URL is routed by: a plain path is the file transport's.
std::string route_of(std::string_view url) {
  std::string scheme = scheme_of(url);
  return scheme.empty() ? "file" : scheme;
}

Error unknown_scheme(std::string_view url, std::string_view what, const std::vector<std::string>& known) {
  return Error(Errc::usage, std::string(what) + "no transport reads the scheme '" + route_of(url) + "' (" +
                                util::redact(url) + "); registered: " + joined(known));
}

// Every registered transport of one stack; each request goes to the one of its scheme.
class SchemeRouter final : public Transport {
 public:
  SchemeRouter(std::vector<std::unique_ptr<Transport>> parts, std::map<std::string, std::size_t> by_scheme,
               std::vector<std::string> known, const Registry& registry)
      : parts_(std::move(parts)), by_scheme_(std::move(by_scheme)), known_(std::move(known)) {
    for (const auto& [scheme, part] : by_scheme_) facts_.emplace(scheme, registry.facts(scheme + "://"));
  }

  Stats stats() const override {
    Stats sum;
    for (const auto& p : parts_) {
      const Stats s = p->stats();
      sum.requests += s.requests;
      sum.connections += s.connections;
      sum.retries += s.retries;
      sum.reconnects += s.reconnects;
      sum.cache_fresh += s.cache_fresh;
      sum.cache_revalidated += s.cache_revalidated;
      sum.bytes += s.bytes;
    }
    return sum;
  }
  void flush() override {
    for (auto& p : parts_) p->flush();
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t part_of(std::string_view url) const {
    const auto it = by_scheme_.find(route_of(url));
    return it == by_scheme_.end() ? kNone : it->second;
  }
  SchemeFacts facts_impl(std::string_view url) const override {
    const auto it = facts_.find(route_of(url));
    return it == facts_.end() ? default_facts(url) : it->second;
  }
  Expected<Response> get_impl(const Request& request) override {
    const std::size_t part = part_of(request.url);
    if (part == kNone) return unknown_scheme(request.url, "", known_);
    return parts_[part]->get(request);
  }
  std::vector<Expected<Response>> get_many_impl(const std::vector<Request>& requests) override {
    return get_many_hooked_impl(requests, {});
  }
  // Each transport gets its requests in one batch (the http transport fetches them concurrently);
  // the answers go back to their places, and to the hook as they come.
  std::vector<Expected<Response>> get_many_hooked_impl(const std::vector<Request>& requests,
                                                       const AnswerHook& on_answer) override {
    std::vector<std::optional<Expected<Response>>> slots(requests.size());
    std::vector<std::vector<std::size_t>> batches(parts_.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
      const std::size_t part = part_of(requests[i].url);
      if (part != kNone) {
        batches[part].push_back(i);
        continue;
      }
      slots[i].emplace(unknown_scheme(requests[i].url, "", known_));
      tell(on_answer, i, *slots[i]);
    }
    for (std::size_t part = 0; part < parts_.size(); ++part) {
      const auto& where_from = batches[part];
      if (where_from.empty()) continue;
      std::vector<Request> batch;
      batch.reserve(where_from.size());
      for (const std::size_t i : where_from) batch.push_back(requests[i]);
      AnswerHook mapped;
      if (on_answer) mapped = [&](std::size_t j, const Expected<Response>& a) { on_answer(where_from[j], a); };
      auto answers = parts_[part]->get_many(batch, mapped);
      for (std::size_t j = 0; j < answers.size(); ++j) slots[where_from[j]].emplace(std::move(answers[j]));
    }
    std::vector<Expected<Response>> out;
    out.reserve(slots.size());
    for (auto& s : slots) out.push_back(std::move(*s));
    return out;
  }

  std::vector<std::unique_ptr<Transport>> parts_;
  std::map<std::string, std::size_t> by_scheme_;  // scheme -> index into parts_
  std::vector<std::string> known_;
  std::map<std::string, SchemeFacts> facts_;  // scheme -> its facts, copied from the registry
};

}  // namespace

std::string scheme_of(std::string_view url) { return model::url::url_scheme(url); }

Expected<void> Registry::add_transport(TransportEntry entry) {
  const std::string who = "transport '" + entry.name + "'";
  if (entry.name.empty()) return unexpected(Errc::invalid_input, "a transport needs a name");
  if (!entry.make) return unexpected(Errc::invalid_input, who + ": no factory");
  if (entry.schemes.empty()) return unexpected(Errc::invalid_input, who + ": no scheme");
  for (const auto& t : transports_) {
    if (t.name == entry.name) return unexpected(Errc::invalid_input, who + " is already registered");
  }
  for (auto& scheme : entry.schemes) {
    if (scheme.empty() || scheme_of(scheme + "://") != util::ascii_lower(scheme)) {
      return unexpected(Errc::invalid_input, who + ": '" + scheme + "' is not a URL scheme");
    }
    scheme = util::ascii_lower(scheme);
    for (const auto& t : transports_) {
      if (std::find(t.schemes.begin(), t.schemes.end(), scheme) != t.schemes.end()) {
        return unexpected(Errc::invalid_input, who + ": the scheme '" + scheme + "' is already read by transport '" + t.name + "'");
      }
    }
  }
  transports_.push_back(std::move(entry));
  return {};
}

Expected<void> Registry::add_decorator(DecoratorEntry entry) {
  if (entry.name.empty()) return unexpected(Errc::invalid_input, "a decorator needs a name");
  if (!entry.wrap) return unexpected(Errc::invalid_input, "decorator '" + entry.name + "': no function");
  for (const auto& d : decorators_) {
    if (d.name == entry.name) return unexpected(Errc::invalid_input, "decorator '" + entry.name + "' is already registered");
  }
  // Stable: decorators of one order keep their registration order.
  const auto at = std::upper_bound(decorators_.begin(), decorators_.end(), entry.order,
                                   [](int order, const DecoratorEntry& d) { return order < d.order; });
  decorators_.insert(at, std::move(entry));
  return {};
}

Expected<void> Registry::set_http_rules(HttpRules rules) {
  if (http_rules_) return unexpected(Errc::invalid_input, "the http rules are already registered");
  http_rules_ = std::move(rules);
  return {};
}

Expected<void> Registry::set_cache_keeping(CacheKeeping keeping) {
  if (cache_keeping_) return unexpected(Errc::invalid_input, "the cache housekeeping is already registered");
  cache_keeping_ = std::move(keeping);
  return {};
}

std::vector<std::string> Registry::schemes() const {
  std::vector<std::string> out;
  for (const auto& t : transports_) out.insert(out.end(), t.schemes.begin(), t.schemes.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Registry::decorators() const {
  std::vector<std::string> out;
  for (const auto& d : decorators_) out.push_back(d.name);
  return out;
}

SchemeFacts Registry::facts(std::string_view url) const {
  const std::string scheme = route_of(url);
  for (const auto& t : transports_) {
    if (std::find(t.schemes.begin(), t.schemes.end(), scheme) != t.schemes.end()) return t.facts.value_or(default_facts(url));
  }
  return default_facts(url);
}

bool Registry::reads(std::string_view url) const {
  const std::string scheme = route_of(url);
  return std::any_of(transports_.begin(), transports_.end(), [&](const TransportEntry& t) {
    return std::find(t.schemes.begin(), t.schemes.end(), scheme) != t.schemes.end();
  });
}

Expected<void> Registry::check(std::string_view url, std::string_view what) const {
  if (!reads(url)) return unknown_scheme(url, what, schemes());
  return {};
}

Expected<std::unique_ptr<Transport>> Registry::make(std::string_view url, const StackOptions& options) const {
  if (auto ok = check(url); !ok) return ok.error();
  return make(options);
}

Expected<std::unique_ptr<Transport>> Registry::make(const StackOptions& options) const {
  std::vector<std::unique_ptr<Transport>> parts;
  std::map<std::string, std::size_t> by_scheme;
  for (const auto& t : transports_) {
    auto made = t.make(options);
    if (!made) return made.error();
    for (const auto& s : t.schemes) by_scheme.emplace(s, parts.size());
    parts.push_back(std::move(*made));
  }
  std::unique_ptr<Transport> stack = std::make_unique<SchemeRouter>(std::move(parts), std::move(by_scheme), schemes(), *this);
  for (const auto& d : decorators_) {
    auto wrapped = d.wrap(std::move(stack), options);
    if (!wrapped) return wrapped.error();
    stack = std::move(*wrapped);
  }
  return stack;
}

Registry& default_registry() {
  static Registry registry;
  return registry;
}

}  // namespace wheelfit::net
