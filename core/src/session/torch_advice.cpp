// The advice's torch file (session/torch_advice.hpp).
#include "wheelfit/session/torch_advice.hpp"

#include "wheelfit/session/session.hpp"
#include "wheelfit/index/file_url.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/util/secrets.hpp"

namespace wheelfit::session {

TorchAdviceFiles::Index& TorchAdviceFiles::index_for(const std::string& raw) {
  auto [it, fresh] = indexes_.try_emplace(raw);
  Index& s = it->second;
  if (!fresh) return s;
  s.clean[raw] = raw;
  if (source_.transport) {
    s.transport = source_.transport;  // the caller's: it answers every read of this call
  } else {
    const auto& transports = transports_of(source_.transports);
    net::StackOptions stack{source_.network, std::nullopt};
    const net::SchemeFacts facts = transports.facts(raw);
    if (facts.credentials) {
      auto clean = take_credentials(raw, "--torch-index", std::nullopt, stack.network, transports);
      if (!clean) {
        s.error = clean.error().message;
        return s;
      }
      s.clean[raw] = std::move(*clean);
    }
    if (facts.remote && source_.use_cache && transports.cache_keeping()) {
      auto root = http_cache_root(source_.cache_dir, transports);
      auto cap = cache_max_size(source_.cache_max_size);
      if (root && cap) stack.cache = net::CacheOptions{*root, source_.offline, *cap};
    }
    auto made = transports.make(s.clean[raw], stack);
    if (!made) {
      s.error = made.error().message;
      return s;
    }
    s.transport = std::move(*made);
  }
  s.chooser = std::make_unique<resolve::TorchChooser>(
      [t = s.transport](const std::string& base, const std::vector<std::string>& names) { return index::read_index(*t, base, names); },
      s.clean, "");
  return s;
}

void TorchAdviceFiles::fill(resolve::TorchAdvice& advice, const machine::Machine& m, const std::string& index_url) {
  if (!advice.line) return;
  if (!source_.torch_index && (source_.transport || !transports_of(source_.transports).facts(index_url).remote)) {
    // A local index is a machine off the network, or a test; a caller's transport answers for its
    // own index: wheelfit reads another index only where told.
    advice.file_note = "not looked up: the resolve read no http(s) index of its own; --torch-index URL names the torch index to read";
    return;
  }
  const std::string named = source_.torch_index ? semantics::expand_torch_index(*source_.torch_index, *advice.line) : advice.index;
  const std::string raw = index::is_local(named) ? index::to_url(named, true) : index::normalize_base(named);
  const std::lock_guard lock(mu_);
  Index& s = index_for(raw);
  advice.index = util::redact(s.clean[raw]);
  if (!s.error.empty()) {
    advice.file_note = "the torch index " + advice.index + " could not be read: " + util::redact(s.error);
    return;
  }
  const resolve::Pin pin{"torch", "==" + advice.version, raw};
  auto choice = s.chooser->choose(raw, m, pin, {"torch"}, "");
  if (!choice) {
    advice.file_note = util::redact(choice.error().message);
    return;
  }
  const index::Link& link = *(*choice)->link;
  advice.file = link.filename;
  advice.url = util::strip_credentials(link.url);
  advice.sha256 = link.sha256;
}

}  // namespace wheelfit::session
