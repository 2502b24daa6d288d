#include "wheelfit/machine/interpreter.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <system_error>

#include <unistd.h>

#include <boost/json.hpp>

#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/subprocess.hpp"
#include "wheelfit/util/text.hpp"
#include "wheelfit/util/user_folders.hpp"
#include "wheelfit/model/name.hpp"
#include "wheelfit/model/version.hpp"
#include "interpreter_path.hpp"

namespace wheelfit::machine {
using util::ProcessResult;
using util::RunningProcess;
using util::run_process;
using util::start_process;
using util::iequals;
using util::trim;
using detail::file_stamp;
using detail::real_path;
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

constexpr int kCacheSchema = 1;
constexpr std::size_t kMaxAnswerBytes = 1024 * 1024;
constexpr std::size_t kMaxMetadataBytes = 256 * 1024;
constexpr std::size_t kMaxCacheBytes = 1024 * 1024;

// Python 3.3+ syntax only (no f-strings); imports sys, os and site, nothing else (sysconfig alone
// would cost a few ms: the folders imports read are site's, and a free-threaded build says so
// in abiflags). q() writes a JSON string with every non-printable or non-ASCII character escaped.
constexpr std::string_view kScript = R"PY(import sys, os
def q(s):
    r = []
    for c in s:
        o = ord(c)
        if c in '"\\':
            r.append('\\' + c)
        elif 31 < o < 127:
            r.append(c)
        elif o > 65535:
            o -= 65536
            r.append('\\u%04x\\u%04x' % (55296 + (o >> 10), 56320 + (o & 1023)))
        else:
            r.append('\\u%04x' % o)
    return '"' + ''.join(r) + '"'
exe = sys.executable or ''
cfg = ''
if exe:
    d = os.path.dirname(exe)
    for c in (os.path.join(d, 'pyvenv.cfg'), os.path.join(os.path.dirname(d), 'pyvenv.cfg')):
        if os.path.isfile(c):
            cfg = c
            break
system_site = True
base = [sys.prefix, sys.exec_prefix]
if cfg:
    system_site = False
    try:
        with open(cfg, encoding='utf-8', errors='replace') as f:
            for line in f:
                k, sep, v = line.partition('=')
                if sep and k.strip().lower() == 'include-system-site-packages':
                    system_site = v.strip().lower() == 'true'
    except OSError:
        pass
    sys.prefix = sys.exec_prefix = os.path.dirname(cfg)
import site
dirs = []
if system_site:
    try:
        dirs.append(site.getusersitepackages())
    except Exception:
        pass
dirs += site.getsitepackages([sys.prefix] + (base if cfg and system_site else []))
seen = []
for x in dirs:
    if x and x not in seen:
        seen.append(x)
v = sys.version_info
flags = getattr(sys, 'abiflags', '')
sys.stdout.write('{"wheelfit_query":1,"executable":%s,"implementation":%s,"version":[%d,%d,%d],"abiflags":%s,'
                 '"gil_disabled":%s,"machine":%s,"prefix":%s,"venv_config":%s,"site_dirs":[%s]}\n' % (
    q(exe), q(sys.implementation.name), v[0], v[1], v[2], q(flags), 'true' if 't' in flags else 'false',
    q(os.uname().machine if hasattr(os, 'uname') else ''), q(sys.prefix), q(cfg), ','.join(q(x) for x in seen)))
)PY";

std::string last_line(std::string_view text) {
  text = trim(text);
  const auto nl = text.rfind('\n');
  std::string line(nl == std::string_view::npos ? text : text.substr(nl + 1));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

// ---- the answer ----

Expected<std::string> get_string(const json::object& o, std::string_view key, const std::string& path) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) {
    return unexpected(Errc::invalid_input, path + ": the interpreter's answer has no string \"" + std::string(key) + "\"");
  }
  return std::string(v->get_string());
}

json::object to_object(const InterpreterInfo& i) {
  json::array version;
  for (int n : i.version) version.emplace_back(n);
  json::array dirs;
  for (const auto& d : i.site_dirs) dirs.emplace_back(json::string(d));
  return json::object{{"wheelfit_query", 1},         {"executable", i.executable}, {"implementation", i.implementation},
                      {"version", std::move(version)}, {"abiflags", i.abiflags},     {"gil_disabled", i.gil_disabled},
                      {"machine", i.machine},          {"prefix", i.prefix},         {"venv_config", i.venv_config},
                      {"site_dirs", std::move(dirs)}};
}

Expected<InterpreterInfo> info_from_object(const json::object& o, const std::string& path) {
  const auto* marker = o.if_contains("wheelfit_query");
  if (marker == nullptr || !marker->is_int64() || marker->get_int64() != 1) {
    return unexpected(Errc::invalid_input, path + ": printed JSON that is not wheelfit's query answer");
  }
  InterpreterInfo info;
  for (auto [key, field] : {std::pair{"executable", &info.executable}, std::pair{"implementation", &info.implementation},
                            std::pair{"abiflags", &info.abiflags}, std::pair{"machine", &info.machine},
                            std::pair{"prefix", &info.prefix}, std::pair{"venv_config", &info.venv_config}}) {
    auto s = get_string(o, key, path);
    if (!s) return s.error();
    *field = std::move(*s);
  }
  const auto* version = o.if_contains("version");
  if (version == nullptr || !version->is_array() || version->get_array().size() < 2) {
    return unexpected(Errc::invalid_input, path + ": the interpreter's answer has no \"version\" [major, minor, micro]");
  }
  for (const auto& n : version->get_array()) {
    if (!n.is_int64() || n.get_int64() < 0 || n.get_int64() > 10000) {
      return unexpected(Errc::invalid_input, path + ": the interpreter's \"version\" holds " + json::serialize(n));
    }
    info.version.push_back(static_cast<int>(n.get_int64()));
  }
  const auto* gil = o.if_contains("gil_disabled");
  if (gil == nullptr || !gil->is_bool()) {
    return unexpected(Errc::invalid_input, path + ": the interpreter's answer has no boolean \"gil_disabled\"");
  }
  info.gil_disabled = gil->get_bool();
  const auto* dirs = o.if_contains("site_dirs");
  if (dirs == nullptr || !dirs->is_array()) {
    return unexpected(Errc::invalid_input, path + ": the interpreter's answer has no \"site_dirs\" list");
  }
  for (const auto& d : dirs->get_array()) {
    if (!d.is_string()) return unexpected(Errc::invalid_input, path + ": the interpreter's \"site_dirs\" holds a non-string");
    info.site_dirs.emplace_back(d.get_string());
  }
  return info;
}

// ---- stamps: what must not change for a cached answer to hold ----

struct Stamp {
  std::string path;
  bool follow = true;
  std::string value;
};

std::vector<Stamp> info_stamps(const std::string& path, const InterpreterInfo& info) {
  std::vector<Stamp> out{{path, false, file_stamp(path, false)}, {path, true, file_stamp(path, true)}};
  if (!info.executable.empty() && info.executable != path) out.push_back({info.executable, true, file_stamp(info.executable, true)});
  if (!info.venv_config.empty()) out.push_back({info.venv_config, true, file_stamp(info.venv_config, true)});
  return out;
}

std::vector<Stamp> site_stamps(const std::vector<std::string>& dirs) {
  std::vector<Stamp> out;
  for (const auto& d : dirs) out.push_back({d, true, file_stamp(d, true)});
  return out;
}

bool still_valid(const std::vector<Stamp>& stamps) {
  return std::all_of(stamps.begin(), stamps.end(), [](const Stamp& s) { return file_stamp(s.path, s.follow) == s.value; });
}

json::array stamps_json(const std::vector<Stamp>& stamps) {
  json::array out;
  for (const auto& s : stamps) out.emplace_back(json::array{json::string(s.path), s.follow, json::string(s.value)});
  return out;
}

std::optional<std::vector<Stamp>> stamps_from(const json::value* v) {
  if (v == nullptr || !v->is_array()) return std::nullopt;
  std::vector<Stamp> out;
  for (const auto& item : v->get_array()) {
    const auto* a = item.if_array();
    if (a == nullptr || a->size() != 3 || !(*a)[0].is_string() || !(*a)[1].is_bool() || !(*a)[2].is_string()) {
      return std::nullopt;
    }
    out.push_back({std::string((*a)[0].get_string()), (*a)[1].get_bool(), std::string((*a)[2].get_string())});
  }
  return out;
}

// At most `limit` bytes of a file, read in small pieces (no big zeroed buffer for a small file).
// A regular file only: a FIFO in site-packages (or as the cache) would block detection forever.
Expected<std::string> read_head(const fs::path& p, std::size_t limit) {
  auto file = util::open_regular_file(p.string(), "a file");
  if (!file) return file.error();
  std::string text;
  char buf[8192];
  while (text.size() < limit) {
    const ssize_t n = ::read(file->fd(), buf, std::min(sizeof buf, limit - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unexpected(Errc::io_error, p.string() + ": read failed");
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

// ---- the cache ----

std::string fnv1a_hex(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = digits[h & 0xf];
  return out;
}

struct CacheEntry {
  std::vector<Stamp> info_stamps;
  InterpreterInfo info;
  std::vector<std::string> names;  // the packages asked for when the entry was written
  std::vector<Stamp> site_stamps;
  std::map<std::string, InstalledDist> packages;
  std::vector<std::string> package_notes;
};

// Reads an entry. nullopt + no note: no entry (or another schema). nullopt + note: discarded.
std::optional<CacheEntry> read_cache(const fs::path& file, const std::string& path, std::vector<std::string>& notes) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  auto discard = [&](const std::string& why) -> std::optional<CacheEntry> {
    std::error_code rm;
    fs::remove(file, rm);
    notes.push_back("interpreter cache " + file.string() + ": " + why + "; discarded");
    return std::nullopt;
  };
  auto read = read_head(file, kMaxCacheBytes + 1);
  if (!read) return discard("cannot be opened");
  const std::string& text = *read;
  if (text.size() > kMaxCacheBytes) return discard("over 1 MiB");
  boost::system::error_code jec;
  const json::value doc = json::parse(text, jec);
  if (jec || !doc.is_object()) return discard("not a JSON object");
  const auto& o = doc.get_object();
  const auto* schema = o.if_contains("schema");
  if (schema == nullptr || !schema->is_int64()) return discard("no schema number");
  if (schema->get_int64() != kCacheSchema) return std::nullopt;  // another wheelfit's entry: overwrite it
  const auto* p = o.if_contains("path");
  if (p == nullptr || !p->is_string()) return discard("no interpreter path");
  if (p->get_string() != path) return std::nullopt;  // a hash collision: overwrite it
  CacheEntry e;
  auto is = stamps_from(o.if_contains("info_stamps"));
  auto ss = stamps_from(o.if_contains("site_stamps"));
  const auto* info = o.if_contains("info");
  const auto* names = o.if_contains("names");
  const auto* packages = o.if_contains("packages");
  const auto* pnotes = o.if_contains("package_notes");
  if (!is || !ss || info == nullptr || !info->is_object() || names == nullptr || !names->is_array() ||
      packages == nullptr || !packages->is_array() || pnotes == nullptr || !pnotes->is_array()) {
    return discard("a field is missing or has the wrong type");
  }
  if (is->empty()) return discard("no interpreter stamps");
  auto parsed = info_from_object(info->get_object(), path);
  if (!parsed) return discard(parsed.error().message);
  e.info_stamps = std::move(*is);
  e.site_stamps = std::move(*ss);
  e.info = std::move(*parsed);
  for (const auto& n : names->get_array()) {
    if (!n.is_string()) return discard("a package name is not a string");
    e.names.emplace_back(n.get_string());
  }
  for (const auto& item : packages->get_array()) {
    const auto* d = item.if_object();
    if (d == nullptr) return discard("a package is not an object");
    InstalledDist dist;
    for (auto [key, field] : {std::pair{"name", &dist.name}, std::pair{"version", &dist.version},
                              std::pair{"metadata", &dist.metadata}}) {
      const auto* v = d->if_contains(key);
      if (v == nullptr || !v->is_string()) return discard("a package has no " + std::string(key));
      *field = std::string(v->get_string());
    }
    e.packages.emplace(dist.name, std::move(dist));
  }
  for (const auto& n : pnotes->get_array()) {
    if (!n.is_string()) return discard("a note is not a string");
    e.package_notes.emplace_back(n.get_string());
  }
  return e;
}

void write_cache(const fs::path& dir, const fs::path& file, const std::string& path, const CacheEntry& e,
                 std::vector<std::string>& notes) {
  json::array names;
  for (const auto& n : e.names) names.emplace_back(json::string(n));
  json::array packages;
  for (const auto& [name, d] : e.packages) {
    packages.emplace_back(json::object{{"name", d.name}, {"version", d.version}, {"metadata", d.metadata}});
  }
  json::array pnotes;
  for (const auto& n : e.package_notes) pnotes.emplace_back(json::string(n));
  const json::object doc{{"schema", kCacheSchema},
                         {"path", path},
                         {"info_stamps", stamps_json(e.info_stamps)},
                         {"info", to_object(e.info)},
                         {"names", std::move(names)},
                         {"site_stamps", stamps_json(e.site_stamps)},
                         {"packages", std::move(packages)},
                         {"package_notes", std::move(pnotes)}};
  const std::string text = json::serialize(doc) + "\n";

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    notes.push_back("interpreter cache: cannot create " + dir.string() + ": " + ec.message() + "; not cached");
    return;
  }
  // No fsync: a cache lost in a crash is rebuilt. Mode 0666 (before the umask), as std::ofstream created it.
  if (auto w = util::write_file_atomic(file, {text}, {.durable = false, .mode = 0666}); !w) {
    notes.push_back("interpreter cache: " + w.error().message + "; not cached");
  }
}

// ---- distributions ----

// The distribution name of a "<name>-<version>.dist-info" / ".egg-info" entry, normalised; ""
// when the entry is neither.
std::string dist_name_of(std::string_view entry, bool& egg) {
  std::string_view stem;
  if (entry.ends_with(".dist-info")) {
    stem = entry.substr(0, entry.size() - 10);
    egg = false;
  } else if (entry.ends_with(".egg-info")) {
    stem = entry.substr(0, entry.size() - 9);
    egg = true;
  } else {
    return {};
  }
  const auto dash = stem.find('-');
  if (dash == 0 || stem.empty()) return {};
  return model::normalize_name(stem.substr(0, dash));
}


}  // namespace

std::string InterpreterInfo::python_fact() const {
  const int major = version.empty() ? 0 : version[0];
  const int minor = version.size() < 2 ? 0 : version[1];
  const bool ft = gil_disabled || abiflags.find('t') != std::string::npos;
  return std::to_string(major) + "." + std::to_string(minor) + (ft ? "t" : "");
}

std::string_view interpreter_script() { return kScript; }

std::optional<fs::path> default_cache_dir(const Getenv& getenv) {
  if (auto root = util::user_cache_root(getenv)) return *root / "interpreters";
  return std::nullopt;
}

Expected<InterpreterInfo> parse_interpreter_answer(std::string_view text, const std::string& path) {
  const std::string_view body = trim(text);
  boost::system::error_code ec;
  const json::value doc = json::parse(body, ec);
  if (ec || !doc.is_object()) {
    std::string first(body.substr(0, body.find('\n')));
    if (first.size() > 200) first = first.substr(0, 200) + "...";
    return unexpected(Errc::invalid_input, path + ": printed no JSON answer to wheelfit's query" +
                                               (body.empty() ? std::string(" (no output)") : " (it printed '" + first + "')") +
                                               "; is it a Python 3 interpreter?");
  }
  return info_from_object(doc.get_object(), path);
}

namespace {

Expected<RunningProcess> start_query(const std::string& path, std::chrono::milliseconds timeout) {
  // The probe environment: the interpreter needs PATH, HOME (the user site) and pyenv's
  // variables, never a token (docs/detection.md).
  return start_process({path, "-I", "-S", "-c", std::string(kScript)}, timeout, kMaxAnswerBytes,
                       util::probe_environment());
}

Expected<InterpreterInfo> finish_query(RunningProcess& process, const std::string& path, std::chrono::milliseconds timeout) {
  auto run = process.wait();
  if (!run) return run.error();
  if (run->timed_out) {
    return unexpected(Errc::invalid_input, path + ": the interpreter query " + run->describe(timeout) +
                                               " (the interpreter did not answer; was it the right program?)");
  }
  if (!run->exited_ok()) {
    const std::string why = last_line(run->err);
    return unexpected(Errc::invalid_input, path + ": the interpreter query " + run->describe(timeout) +
                                               (why.empty() ? std::string() : ": " + why) +
                                               " (wheelfit needs Python 3.3 or newer)");
  }
  if (run->truncated) return unexpected(Errc::invalid_input, path + ": printed over 1 MiB in answer to wheelfit's query");
  return parse_interpreter_answer(run->out, path);
}

}  // namespace

Expected<InterpreterInfo> query_interpreter(const std::string& path, std::chrono::milliseconds timeout) {
  auto process = start_query(path, timeout);
  if (!process) return process.error();
  return finish_query(*process, path, timeout);
}

Expected<std::string> metadata_field(std::string_view text, std::string_view field) {
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the end of the headers
    if (line.front() == ' ' || line.front() == '\t') continue;  // a continuation line
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (iequals(trim(line.substr(0, colon)), field)) return std::string(trim(line.substr(colon + 1)));
  }
  return unexpected(Errc::not_found, "no " + std::string(field) + " header");
}

std::map<std::string, InstalledDist> find_distributions(const std::vector<std::string>& site_dirs,
                                                        const std::vector<std::string>& names,
                                                        std::vector<std::string>& notes) {
  std::map<std::string, InstalledDist> found;
  std::set<std::string> wanted;
  for (const auto& n : names) wanted.insert(model::normalize_name(n));
  for (const auto& dir : site_dirs) {
    if (found.size() == wanted.size()) break;
    std::error_code ec;
    const fs::path folder = util::path_from_utf8(dir);  // UTF-8 text (Windows: not the ANSI code page)
    if (!fs::is_directory(folder, ec)) continue;
    // name -> its entries in this folder (sorted, so that a duplicate note is stable)
    std::map<std::string, std::vector<std::pair<std::string, bool>>> here;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string entry = it->path().filename().string();
      bool egg = false;
      const std::string name = dist_name_of(entry, egg);
      if (name.empty() || !wanted.count(name) || found.count(name)) continue;
      here[name].emplace_back(entry, egg);
    }
    if (ec) notes.push_back(dir + ": cannot list: " + ec.message());
    for (auto& [name, entries] : here) {
      std::sort(entries.begin(), entries.end());
      if (entries.size() > 1) {
        std::vector<std::string> shown;
        for (const auto& e : entries) shown.push_back(e.first);
        notes.push_back(dir + " holds " + std::to_string(entries.size()) + " " + name + " distributions (" +
                        util::join(shown, ", ") + "), a broken install; reading the first that has a version");
      }
      for (const auto& [entry, egg] : entries) {
        const fs::path base = folder / util::path_from_utf8(entry);
        fs::path meta = egg ? (fs::is_directory(base, ec) ? base / "PKG-INFO" : base) : base / "METADATA";
        auto text = read_head(meta, kMaxMetadataBytes);
        if (!text) {
          notes.push_back(text.error().message + " (" + name + ")");
          continue;
        }
        auto version = metadata_field(*text, "Version");
        if (!version) {
          notes.push_back(meta.string() + ": " + version.error().message);
          continue;
        }
        found.emplace(name, InstalledDist{name, *version, meta.string()});
        break;
      }
    }
  }
  return found;
}

struct InterpreterInspection::State {
  InterpreterOptions options;
  InterpreterFacts facts;
  std::optional<fs::path> file;
  std::optional<CacheEntry> cached;
  std::vector<std::string> names;
  CacheEntry entry;
  std::optional<RunningProcess> query;  // the interpreter, running, when the cache had no answer
};

InterpreterInspection::InterpreterInspection(std::unique_ptr<State> state) : state_(std::move(state)) {}
InterpreterInspection::InterpreterInspection(InterpreterInspection&&) noexcept = default;
InterpreterInspection& InterpreterInspection::operator=(InterpreterInspection&&) noexcept = default;
InterpreterInspection::~InterpreterInspection() = default;

Expected<InterpreterInspection> InterpreterInspection::start(const InterpreterOptions& options) {
  auto path = find_interpreter(options.python, options.path_env);
  if (!path) return path.error();
  auto st = std::make_unique<State>();
  st->options = options;
  st->facts.path = *path;
  if (options.cache_dir && !options.cache_dir->empty()) {
    st->file = *options.cache_dir / (fnv1a_hex(st->facts.path) + ".json");
    st->cached = read_cache(*st->file, st->facts.path, st->facts.notes);
  }
  for (const auto& n : options.packages) st->names.push_back(model::normalize_name(n));

  if (st->cached && still_valid(st->cached->info_stamps)) {
    st->facts.info = st->cached->info;
    st->facts.info_cached = true;
    st->entry.info_stamps = st->cached->info_stamps;
  } else {
    // Stamp the interpreter before it runs: a change while it runs then invalidates the entry.
    st->entry.info_stamps = {{st->facts.path, false, file_stamp(st->facts.path, false)},
                             {st->facts.path, true, file_stamp(st->facts.path, true)}};
    auto process = start_query(st->facts.path, options.timeout);
    if (!process) return process.error();
    st->query.emplace(std::move(*process));
  }
  return InterpreterInspection(std::move(st));
}

Expected<InterpreterFacts> InterpreterInspection::finish() {
  if (!state_) return unexpected(Errc::usage, "InterpreterInspection::finish called twice");
  const std::unique_ptr<State> st = std::move(state_);
  InterpreterFacts& facts = st->facts;
  CacheEntry& entry = st->entry;

  // The interpreter's answer.
  if (st->query) {
    auto info = finish_query(*st->query, facts.path, st->options.timeout);
    if (!info) return info.error();
    facts.info = std::move(*info);
    const auto more = info_stamps(facts.path, facts.info);
    entry.info_stamps.insert(entry.info_stamps.end(), more.begin() + 2, more.end());
  }
  entry.info = facts.info;
  entry.names = st->names;

  // The distributions.
  const auto current_site = site_stamps(facts.info.site_dirs);
  auto same_stamps = [](const std::vector<Stamp>& a, const std::vector<Stamp>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const Stamp& x, const Stamp& y) {
             return x.path == y.path && x.follow == y.follow && x.value == y.value;
           });
  };
  if (facts.info_cached && st->cached->names == st->names && same_stamps(st->cached->site_stamps, current_site)) {
    facts.packages = st->cached->packages;
    facts.packages_cached = true;
    entry.package_notes = st->cached->package_notes;
  } else {
    facts.packages = find_distributions(facts.info.site_dirs, st->names, entry.package_notes);
  }
  entry.site_stamps = current_site;
  entry.packages = facts.packages;
  facts.notes.insert(facts.notes.end(), entry.package_notes.begin(), entry.package_notes.end());
  if (auto t = facts.packages.find("torch"); t != facts.packages.end()) facts.torch_lib = torch_library_dir(t->second);

  // A wrapper (a pyenv shim) may start another interpreter next time: never cache it.
  const bool wrapper = !facts.info.executable.empty() && real_path(facts.info.executable) != real_path(facts.path);
  if (wrapper) {
    facts.notes.push_back(facts.path + " runs " + facts.info.executable +
                          " (a wrapper, such as a pyenv shim): its answer is not cached; --python " +
                          facts.info.executable + " would be");
  } else if (st->file && !(facts.info_cached && facts.packages_cached)) {
    write_cache(*st->options.cache_dir, *st->file, facts.path, entry, facts.notes);
  }
  return std::move(facts);
}

std::string torch_library_dir(const InstalledDist& torch) {
  if (torch.metadata.empty()) return {};
  // <site>/torch-2.8.0+cu128.dist-info/METADATA -> <site>/torch/lib (torch.__file__'s folder's lib).
  return (util::path_from_utf8(torch.metadata).parent_path().parent_path() / "torch" / "lib").string();
}

Expected<InterpreterFacts> inspect_interpreter(const InterpreterOptions& options) {
  auto inspection = InterpreterInspection::start(options);
  if (!inspection) return inspection.error();
  return inspection->finish();
}

}  // namespace wheelfit::machine
