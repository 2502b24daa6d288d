// The option table (wheelfit/api/options.hpp, docs/decisions/0038): one row per option, in the
// order of the usage text. Each row's help lines are printed as they stand, so the usage reads
// exactly as it was written; a new option is one row here.
#include <chrono>

#include "wheelfit/api/options.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::api::options {
namespace {

using net::HttpOptions;
using S = Section;

// The commands that read an index as a resolve does: resolve, download, mirror and check.
constexpr unsigned kReadsIndex = kResolveFamily | kCheck;
constexpr unsigned kNetworked = kReadsIndex | kExplain;  // the commands with the network flags
constexpr unsigned kEvery = kReadsIndex | kExplain | kDoctor | kDetect | kCache | kPlugins;

// The network options' setters (the request's net::HttpOptions).
void set_jobs(HttpOptions& o, Value& v, std::string_view) {
  o.jobs = static_cast<unsigned>(v.number);
  o.per_host = o.jobs;
}
void set_retries(HttpOptions& o, Value& v, std::string_view) { o.retry.retries = static_cast<int>(v.number); }
void set_timeout(HttpOptions& o, Value& v, std::string_view) {
  o.connect_timeout = std::chrono::seconds(v.number);
  o.idle_timeout = o.connect_timeout;
}
void set_speed_limit(HttpOptions& o, Value& v, std::string_view) { o.speed_limit = static_cast<std::uint64_t>(v.number); }
void set_speed_time(HttpOptions& o, Value& v, std::string_view) { o.speed_time = std::chrono::seconds(v.number); }
void set_max_time(HttpOptions& o, Value& v, std::string_view source) {  // the call starts now
  o.max_time = net::MaxTime::from_now(std::chrono::seconds(v.number), std::string(source));
}
void set_backoff(HttpOptions& o, Value& v, std::string_view) { o.retry.base = std::chrono::milliseconds(v.number); }
void set_user_agent(HttpOptions& o, Value& v, std::string_view) { o.user_agent = std::move(v.text); }
void set_proxy_auth(HttpOptions& o, Value& v, std::string_view) { o.proxy_auth = v.proxy_auth; }
void set_insecure_hosts(HttpOptions& o, Value& v, std::string_view) { o.credentials.insecure_hosts = std::move(v.hosts); }
void set_cert(HttpOptions& o, Value& v, std::string_view source) {  // the trust store (trust_store.hpp has the order)
  o.ca_file = std::move(v.text);
  o.ca_source = std::string(source);
}
void set_client_cert(HttpOptions& o, Value& v, std::string_view source) {
  o.client_cert = std::move(v.text);
  o.client_cert_source = std::string(source);
}

// The resolve request's setters (resolve, download, mirror; the C API's resolve).
void set_index(ResolveRequest& r, Value& v) { r.index = std::move(v.text); }
void set_python(ResolveRequest& r, Value& v) { r.python = std::move(v.text); }
void set_policy(ResolveRequest& r, Value& v) { r.policy_file = std::move(v.text); }
void set_backend(ResolveRequest& r, Value& v) { r.backend = std::move(v.text); }
void set_cache_dir(ResolveRequest& r, Value& v) { r.cache_dir = std::move(v.text); }
void set_no_cache(ResolveRequest& r, Value& v) { r.use_cache = !v.on; }
void set_cache_max_size(ResolveRequest& r, Value& v) { r.cache_max_size = v.size; }
void set_offline(ResolveRequest& r, Value& v) { r.offline = v.on; }
void set_releases_repo(ResolveRequest& r, Value& v) { r.releases_repo = std::move(v.text); }
void set_inspect(ResolveRequest& r, Value& v) { r.inspect = v.on; }
void set_combo(ResolveRequest& r, Value& v) { r.combo = std::move(v.text); }
void set_no_fallback(ResolveRequest& r, Value& v) { r.fallback = !v.on; }
void set_torch_index(ResolveRequest& r, Value& v) { r.torch_index = std::move(v.text); }

const Option kTable[] = {
    {.flag = "--dir", .alias = "-d", .commands = kDownload, .complete = Complete::dirs,
     .help = {{{S::download, "  -d, --dir DIR         where the wheels go (created when missing); a file already there with the\n"
                             "                        right sha256 is not fetched again; a part left by an interrupted run\n"
                             "                        continues (Range + If-Range)\n"}}}},
    {.flag = "--index", .json_key = "index", .env = "COMFY_ENV_CUDA_WHEELS_INDEX", .commands = kReadsIndex, .requests = kResolve,
     .complete = Complete::dirs,
     .help = {{{S::resolve, "  --index URL           the wheel index (https://, http://, a directory, file:// URL); default:\n"
                            "                        the backend's, or COMFY_ENV_CUDA_WHEELS_INDEX\n"}}},
     .resolve = set_index},
    {.flag = "--machine", .json_key = "machine", .kind = Kind::structured, .commands = kReadsIndex | kExplain | kDoctor,
     .requests = kResolve | kExplain | kDoctor, .repeatable = kReadsIndex, .complete = Complete::files,
     .help = {{{S::resolve, "  --machine FILE        the target machine profile (TOML or JSON); default: this machine,\n"
                            "                        detected as `wheelfit detect` shows it (WHEELFIT_OVERRIDE_* /\n"
                            "                        CONDA_OVERRIDE_* variables apply either way)\n"
                            "  --machine FILE ...    several times: a fleet, each named by its file's stem (below)\n"},
               {S::explain, "  --machine FILE        the target machine (as for resolve); default: this machine, detected\n"},
               {S::download, "  --machine FILE        repeatable; or --machines DIR: every profile of a folder (a fleet: the\n"
                             "                        union of their picks is fetched)\n"}}}},
    {.flag = "--machines", .json_key = "machines", .kind = Kind::structured, .commands = kReadsIndex, .requests = kResolve,
     .complete = Complete::dirs,
     .help = {{{S::resolve, "  --machines DIR        every profile (*.toml, *.json) of DIR, a fleet: the index is read once,\n"
                            "                        then each machine is resolved; a report per machine under \"== name ==\",\n"
                            "                        then a summary table (machine, combo, tier, status); --json: {\"machines\":\n"
                            "                        [{\"name\", ...the single object}], \"summary\": [...]}; exit: the worst\n"
                            "                        machine's; with one machine, the single output; not with -o\n"},
               {S::mirror, "  --machines DIR / --machine FILE...   the fleet (at least one machine)\n"}}}},
    {.flag = "--python", .json_key = "python", .commands = kReadsIndex | kDetect | kExplain | kDoctor,
     .requests = kDetect | kExplain | kDoctor, .complete = Complete::files,
     .help = {{{S::resolve, "  --python PATH         this machine's interpreter (default: python3 on PATH); not with --machine\n"
                            "                        or --machines\n"},
               {S::detect, "  --python PATH         the target interpreter (default: python3 on PATH); asked once, cached\n"},
               {S::explain, "  --python PATH         this machine's interpreter (detection); not with --machine\n"},
               {S::doctor, "  --python PATH         the interpreter whose installed distributions are walked (default python3)\n"}}},
     .resolve = set_python},
    {.flag = "--site", .json_key = "site", .commands = kDoctor, .requests = kDoctor, .complete = Complete::dirs,
     .help = {{{S::doctor, "  --site DIR            walk this site folder instead of the interpreter's\n"
                           "  --machine FILE, --policy FILE, --json   as for explain; exit 0 all fit, 1 one fails, 2 bad input\n"}}}},
    {.flag = "--policy", .json_key = "policy", .env = "WHEELFIT_POLICY", .commands = kReadsIndex | kExplain | kDoctor,
     .requests = kResolve | kExplain | kDoctor, .complete = Complete::files,
     .help = {{{S::resolve, "  --policy FILE         policy data replacing the backend's own (also WHEELFIT_POLICY)\n"},
               {S::explain, "  --policy FILE         policy data (arch lists) replacing the backend's own\n"}}},
     .resolve = set_policy},
    {.flag = "--backend", .json_key = "backend", .commands = kReadsIndex | kDetect, .requests = kResolve | kDetect,
     .complete = Complete::words, .words = "cuda rocm cpu",
     .help = {{{S::resolve, "  --backend NAME        cuda or rocm (default: from torch's label, else cuda)\n"},
               {S::detect, "  --backend NAME        cuda, rocm or cpu (default: torch's label, else the hardware found)\n"}}},
     .resolve = set_backend},
    {.flag = "--output", .alias = "-o", .commands = kResolve, .complete = Complete::files,
     .help = {{{S::resolve, "  -o, --output FILE     write the lock file (atomically; only when everything resolved; an\n"
                            "                        existing file keeps its mode, a symlink is written through): its format\n"
                            "                        from the name: requirements*.txt (pip --require-hashes), pylock.toml /\n"
                            "                        pylock.NAME.toml (PEP 751), anything else pixi.toml\n"}}}},
    {.flag = "--format", .commands = kResolve,
     .help = {{{S::resolve, "  --format F            pixi, requirements or pylock, whatever -o's name\n"}}}},
    {.flag = "--pixi-pins", .commands = kResolve,
     .help = {{{S::resolve, "  --pixi-pins P         url (default: each wheel by URL + #sha256) or index (each by ==version\n"
                            "                        from the index resolved against: a mirror's machine view)\n"}}}},
    {.flag = "--jobs", .json_key = "jobs", .kind = Kind::number, .lo = 1, .hi = 64, .commands = kReadsIndex, .requests = kResolve,
     .help = {{{S::network, "  --jobs N              requests in flight (default 50)\n"},
               {S::download, "  --jobs N              files in flight (default 4)\n"}}},
     .network = set_jobs},
    {.flag = "--retries", .json_key = "retries", .kind = Kind::number, .lo = 0, .hi = 20, .commands = kNetworked,
     .requests = kResolve | kExplain,
     .help = {{{S::network, "  --retries N           retries of transient failures (default 3; WHEELFIT_RETRY_BACKOFF_MS)\n"}}},
     .network = set_retries},
    {.flag = "--timeout", .json_key = "timeout", .kind = Kind::number, .lo = 1, .hi = 3600, .commands = kNetworked,
     .requests = kResolve | kExplain,
     .help = {{{S::network, "  --timeout S           connect and read timeout in seconds (default 10 / 30)\n"}}},
     .network = set_timeout},
    {.flag = "--speed-limit", .json_key = "speed_limit", .kind = Kind::number, .lo = 0, .hi = 1L << 30, .commands = kNetworked,
     .requests = kResolve | kExplain,
     .help = {{{S::network, "  --speed-limit BYTES   an attempt receiving fewer bytes per second than this, averaged over\n"}}},
     .network = set_speed_limit},
    {.flag = "--speed-time", .json_key = "speed_time", .kind = Kind::number, .lo = 1, .hi = 3600, .commands = kNetworked,
     .requests = kResolve | kExplain,
     .help = {{{S::network, "  --speed-time S        --speed-time seconds, is cut and retried, continuing with Range\n"
                            "                        (default 1024 bytes/s over 30 s; --speed-limit 0: off)\n"}}},
     .network = set_speed_time},
    {.flag = "--max-time", .json_key = "max_time", .kind = Kind::number, .lo = 1, .hi = 86400, .commands = kNetworked,
     .requests = kResolve | kExplain,
     .help = {{{S::network, "  --max-time S          bound the whole command: at S seconds what is in flight stops and the\n"
                            "                        command fails (exit 4 while reading the index, 5 while fetching wheels)\n"}}},
     .network = set_max_time},
    // No flag: the variable alone, wherever the CLI builds network options.
    {.env = "WHEELFIT_RETRY_BACKOFF_MS", .cli_reads_env = true, .kind = Kind::number, .lo = 1, .hi = 60000, .network = set_backoff},
    {.flag = "--user-agent", .json_key = "user_agent", .env = "WHEELFIT_USER_AGENT", .cli_reads_env = true, .kind = Kind::line,
     .commands = kNetworked, .requests = kResolve | kExplain,
     .help = {{{S::network, "  --user-agent UA       default wheelfit/<version> (also WHEELFIT_USER_AGENT)\n"}}},
     .network = set_user_agent},
    {.flag = "--proxy-auth", .json_key = "proxy_auth", .env = "WHEELFIT_PROXY_AUTH", .cli_reads_env = true, .kind = Kind::proxy_auth,
     .commands = kNetworked | kDoctor, .requests = kResolve | kExplain, .complete = Complete::words,
     .words = "auto basic negotiate none",
     .help = {{{S::network, "  --proxy-auth M        auto (default), basic, negotiate or none: how to authenticate to the proxy\n"
                            "                        (also WHEELFIT_PROXY_AUTH); auto: Basic with user:password in the proxy\n"
                            "                        URL, else Negotiate (Kerberos: a ticket from kinit) when the proxy asks\n"}}},
     .network = set_proxy_auth},
    {.flag = "--allow-insecure-host", .json_key = "allow_insecure_host", .env = "WHEELFIT_ALLOW_INSECURE_HOST",
     .kind = Kind::host_list, .commands = kNetworked, .requests = kResolve | kExplain,
     .help = {{{S::network,
                "  --allow-insecure-host HOST[:PORT][,...]   send credentials (URL user:password, WHEELFIT_INDEX_TOKEN,\n"
                "                        netrc) over plain http to these hosts too (also WHEELFIT_ALLOW_INSECURE_HOST)\n"
                "  credentials: user:password in the URL, WHEELFIT_INDEX_TOKEN (bearer, the index only), NETRC or\n"
                "                        ~/.netrc; never written to the report, the JSON or pixi.toml\n"}}},
     .network = set_insecure_hosts},
    {.flag = "--cert", .json_key = "cert", .kind = Kind::file, .commands = kNetworked, .requests = kResolve | kExplain,
     .empty_hint = "give a CA bundle (PEM) or a folder of hashed certificates", .complete = Complete::files,
     .help = {{{S::network, "  --cert FILE           CA bundle (PEM) or hashed folder replacing the system's roots; else\n"
                            "                        PIP_CERT, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE / SSL_CERT_DIR\n"}}},
     .network = set_cert},
    {.flag = "--client-cert", .json_key = "client_cert", .env = "SSL_CLIENT_CERT", .kind = Kind::file, .commands = kNetworked,
     .requests = kResolve | kExplain, .empty_hint = "give a PEM file with the certificate and its key", .complete = Complete::files,
     .help = {{{S::network, "  --client-cert FILE    mutual TLS: a PEM file with the certificate and its key (SSL_CLIENT_CERT)\n"}}},
     .network = set_client_cert},
    {.flag = "--cache-dir", .json_key = "cache_dir", .commands = kReadsIndex | kCache, .requests = kResolve,
     .complete = Complete::dirs,
     .help = {{{S::network, "  --cache-dir DIR       the HTTP cache (default $XDG_CACHE_HOME/wheelfit/http)\n"},
               {S::cache, "  --cache-dir DIR       the HTTP cache (default $XDG_CACHE_HOME/wheelfit/http)\n"}}},
     .resolve = set_cache_dir},
    {.flag = "--no-cache", .json_key = "no_cache", .kind = Kind::toggle, .commands = kReadsIndex, .requests = kResolve,
     .help = {{{S::network, "  --no-cache            no cache at all\n"}}}, .resolve = set_no_cache},
    {.flag = "--cache-max-size", .json_key = "cache_max_size", .env = "WHEELFIT_CACHE_MAX_SIZE", .kind = Kind::size,
     .commands = kReadsIndex | kCache, .requests = kResolve,
     .help = {{{S::network, "  --cache-max-size SIZE the cache's cap, kept after each resolve (500M, 1GiB; default 1GiB;\n"
                            "                        also WHEELFIT_CACHE_MAX_SIZE)\n"},
               {S::cache, "  --cache-max-size SIZE prune's cap (default 1GiB, or WHEELFIT_CACHE_MAX_SIZE)\n"}}},
     .resolve = set_cache_max_size},
    {.flag = "--out", .commands = kMirror, .complete = Complete::dirs,
     .help = {{{S::mirror, "  --out DIR             the mirror folder: serve DIR/current (PEP 503 pages with PEP 658\n"
                           "                        metadata, packages.json, mirror.json, files/); published atomically;\n"
                           "                        new or empty, or one wheelfit made (DIR/.wheelfit-mirror)\n"}}}},
    {.flag = "--base-url", .commands = kMirror,
     .help = {{{S::mirror, "  --base-url URL        absolute hrefs under URL (default: relative)\n"}}}},
    {.flag = "--prune", .kind = Kind::toggle, .commands = kMirror,
     .help = {{{S::mirror, "  --prune               drop the wheels no machine picks any more (default: kept)\n"}}}},
    {.flag = "--offline", .json_key = "offline", .kind = Kind::toggle, .commands = kReadsIndex, .requests = kResolve,
     .help = {{{S::network, "  --offline             answer only from the cache\n"},
               {S::mirror, "  --offline             build from the HTTP cache and DIR alone\n"}}},
     .resolve = set_offline},
    {.flag = "--allow-unverified", .kind = Kind::toggle, .commands = kMirror,
     .help = {{{S::mirror, "  --allow-unverified    publish wheels whose upstream gives no sha256 (marked \"verified\": false in\n"
                           "                        mirror.json); by default such a wheel is exit 5 and nothing is published\n"}}}},
    {.flag = "--with-torch", .kind = Kind::toggle, .commands = kMirror,
     .help = {{{S::mirror, "  --with-torch          mirror each machine's torch, torchvision and torchaudio too (the resolve's\n"
                           "                        versions, the newest file for its Python and platform), in its view\n"}}}},
    {.flag = "--releases-repo", .json_key = "releases_repo", .env = "WHEELFIT_RELEASES_REPO", .commands = kReadsIndex,
     .requests = kResolve,
     .help = {{{S::network, "  --releases-repo O/N   the GitHub Releases failover's repository (also WHEELFIT_RELEASES_REPO;\n"
                            "                        API base WHEELFIT_GITHUB_API, token GITHUB_TOKEN)\n"}}},
     .resolve = set_releases_repo},
    {.flag = "--inspect", .json_key = "inspect", .kind = Kind::toggle, .commands = kResolve, .requests = kResolve,
     .help = {{{S::resolve_more, "resolve --inspect       read each chosen wheel's binaries (HTTP Range requests) and reject a wheel\n"
                                 "                        whose real GPU archs (or glibc, CPU arch, ...) do not fit; the next\n"
                                 "                        candidate is tried\n"}}},
     .resolve = set_inspect},
    {.flag = "--combo", .json_key = "combo", .commands = kResolveFamily, .requests = kResolve,
     .help = {{{S::resolve_more, "resolve --combo C       resolve with exactly this combo as the only tier, in the backend's notation\n"
                                 "                        (cu12.8/torch2.8, rocm6.3/torch2.7); judged like any other tier\n"}}},
     .resolve = set_combo},
    {.flag = "--no-fallback", .json_key = "no_fallback", .kind = Kind::toggle, .commands = kResolveFamily, .requests = kResolve,
     .help = {{{S::resolve_more, "resolve --no-fallback   do not try tier 2 (the backend's fallback combo)\n"}}},
     .resolve = set_no_fallback},
    {.flag = "--torch-index", .commands = kResolve | kMirror,
     .help = {{{S::mirror, "  --torch-index URL     where --with-torch reads: a PEP 503 index; {line} and {line_nodot} as in\n"
                           "                        the policy's pattern (default: the backend's torch index)\n"},
               {S::resolve_more,
                "resolve --torch-index URL  where the advice reads the torch it names, for its exact file and sha256\n"
                "                        ({line} and {line_nodot} as in the policy's pattern; default: the\n"
                "                        backend's torch index, read only when the index resolved against is http(s))\n"}}},
     .resolve = set_torch_index},
    {.flag = "--no-wait", .kind = Kind::toggle, .commands = kDownload | kMirror,
     .help = {{{S::download, "  --no-wait             another run writing into DIR (it holds DIR/.wheelfit.lock) is exit 2 at\n"
                             "                        once; by default this run says so and waits for it\n"},
               {S::mirror, "  --no-wait             another run on DIR (it holds DIR/.lock) is exit 2 at once (default: wait)\n"
                           "  --jobs N, --json      as for download; exit 0 published, 1 a machine unresolved (nothing pruned;\n"
                           "                        nothing published when no machine resolved), 5 a wheel failed or is\n"
                           "                        unverified, 6 the mirror could not be written\n"}}}},
    {.flag = "--json", .kind = Kind::toggle, .commands = kEvery,
     .help = {{{S::resolve, "  --json                print one JSON object instead of the report\n"},
               {S::detect, "  --json                print the profile as JSON: a valid --machine file, plus provenance,\n"
                           "                        notes, the interpreter and the GPUs\n"},
               {S::explain, "  --json                one object: demands [{demand, wheel, machine, verdict, detail}], files\n"
                            "                        [{path, sass, ptx, glibc, needed}], warnings, bytes_fetched, wheel_size;\n"
                            "                        a library: {library, archs {list, sass, ptx, source}, verdict, uncovered}\n"
                            "  --timeout S, --retries N, --user-agent UA, --allow-insecure-host HOST, --cert FILE,\n"
                            "  --client-cert FILE, --speed-limit BYTES, --speed-time S, --max-time S, --proxy-auth M\n"
                            "                        for a URL (read with HTTP Range requests)\n"
                            "  exit: 0 everything fits, 1 a demand fails, 2 bad input, 4 the URL could not be read\n"},
               {S::download, "  --json                the resolve object plus \"downloads\": [{filename, url, path, bytes, sha256,\n"
                             "                        status, verified, resumed, continued, error}]\n"
                             "  exit: as resolve, 5 when a wheel could not be fetched or its sha256 did not match, 6 when DIR\n"
                             "        could not be written\n"},
               {S::cache, "  --json                one object: action, dir, max_size, entries, bytes, temp_files,\n"
                          "                        other_bytes, removed {entries, bytes, temp_files}\n"}}}},
    {.flag = "--url", .commands = kDoctor,
     .help = {{{S::doctor, "  --url URL             instead: which proxy (and from which variable) and which authentication\n"
                           "                        a request to URL would use; for Negotiate the service and the Kerberos\n"
                           "                        ticket (--proxy-auth M as for resolve)\n"}}}},
    // The C API's keys without a flag: the CLI takes these as its plain words.
    {.json_key = "configs", .kind = Kind::structured, .requests = kResolve},
    {.json_key = "envs", .kind = Kind::structured, .requests = kResolve},
    {.json_key = "wheel", .kind = Kind::structured, .requests = kExplain},
};

}  // namespace

std::span<const Option> table() noexcept { return kTable; }

}  // namespace wheelfit::api::options
