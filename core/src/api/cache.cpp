// wheelfit::api::cache(): `wheelfit cache info|prune|clean`, and the texts it prints.
#include <cstdio>

#include <boost/json.hpp>

#include "wheelfit/api/results.hpp"
#include "wheelfit/session/session.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api {
namespace {

namespace json = boost::json;

std::string_view action_name(CacheAction a) {
  switch (a) {
    case CacheAction::info: return "info";
    case CacheAction::prune: return "prune";
    case CacheAction::clean: return "clean";
  }
  return "info";
}

// "0 bytes", "1023 bytes", "15.9 MiB", "1.0 GiB".
std::string bytes_text(std::uint64_t n) {
  static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (n < 1024) return std::to_string(n) + (n == 1 ? " byte" : " bytes");
  double v = static_cast<double>(n) / 1024;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string count_text(std::uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace

CacheResult cache(const CacheRequest& req) {
  const log::ScopedSink call_log(req.log_sink);
  CacheResult r;
  r.action = req.action;
  const auto& transports = session::transports_of(req.transports);
  auto root = session::http_cache_root(req.cache_dir, transports);
  if (!root) return detail::failed(std::move(r), kExitBadInput, root.error().message);
  auto cap = session::cache_max_size(req.max_size);
  if (!cap) return detail::failed(std::move(r), kExitBadInput, cap.error().message);
  r.max_size = *cap;
  // The housekeeping is the cache decorator's, registered with it.
  const auto* keeping = transports.cache_keeping();
  if (!keeping) return detail::failed(std::move(r), kExitBadInput, "no on-disk cache is registered with the transports");
  Expected<net::CacheCleanup> done = unexpected(Errc::usage, "no cache action");
  switch (req.action) {
    case CacheAction::info: {
      auto usage = keeping->usage(*root);
      if (usage) done = net::CacheCleanup{*usage, *usage, 0, 0, 0};
      else done = usage.error();
      break;
    }
    case CacheAction::prune: done = keeping->prune(*root, *cap); break;
    case CacheAction::clean: done = keeping->clean(*root); break;
  }
  if (!done) return detail::failed(std::move(r), kExitBadInput, done.error().message);
  r.outcome = std::move(*done);
  r.exit_code = kExitResolved;
  return r;
}

std::string CacheResult::json() const {
  if (error || !outcome) {
    const std::string message = error ? error->message : "no result";
    return json::serialize(json::object{{"error", json::object{{"exit_code", exit_code}, {"message", message}}}}) + "\n";
  }
  const auto& now = outcome->after;
  return json::serialize(json::object{
             {"action", action_name(action)},
             {"dir", now.root.string()},
             {"max_size", max_size},
             {"entries", now.entries},
             {"bytes", now.bytes},
             {"temp_files", now.temp_files},
             {"other_bytes", now.other_bytes},
             {"removed", json::object{{"entries", outcome->removed_entries},
                                      {"bytes", outcome->removed_bytes},
                                      {"temp_files", outcome->removed_temp_files}}},
         }) +
         "\n";
}

std::string CacheResult::report() const {
  if (error || !outcome) return "wheelfit: " + (error ? error->message : std::string("no result")) + "\n";
  const auto& now = outcome->after;
  std::string out = "cache: " + now.root.string() + "\n";
  if (action != CacheAction::info) {
    out += std::string("removed: ") + (action == CacheAction::clean ? "every wheelfit file: " : "") +
           count_text(outcome->removed_entries, "entry", "entries") + " (" + bytes_text(outcome->removed_bytes) + "), " +
           count_text(outcome->removed_temp_files, "temporary file", "temporary files") + "\n";
  }
  out += "entries: " + std::to_string(now.entries) + " (" + bytes_text(now.bytes) + "; cap " + bytes_text(max_size) +
         ", least recently used removed first)\n";
  out += "temporary files: " + std::to_string(now.temp_files) + "; other files: " + bytes_text(now.other_bytes) + "\n";
  return out;
}

}  // namespace wheelfit::api
