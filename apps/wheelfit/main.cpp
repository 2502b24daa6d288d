// wheelfit: which prebuilt CUDA wheel will actually run on this machine? The executable is thin:
// argument parsing, the log sink, exit codes. The work happens in the libraries.
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "wheelfit/policies/format.hpp"
#include "wheelfit/transports/register.hpp"
#include "wheelfit/util/allocator.hpp"
#include "wheelfit/util/atomic_file.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/native_text.hpp"

#ifndef WHEELFIT_VERSION
#define WHEELFIT_VERSION "0.0.0"
#endif

namespace {

constexpr std::string_view kUsage = R"(usage: wheelfit <command> [options]

commands:
  resolve [CONFIG...]   resolve each [cuda] package of the comfy-env.toml files for this machine
  plugins               list the backend plugins loaded and the files skipped (--json: one object)
  detect                print this machine's profile: each fact with the source that answered it
  explain WHEEL         the seven demands of one wheel (a .whl file, its URL, or a bare wheel file
                        name) from its name and its binaries, against this machine; or a library
                        (libtorch_cuda.so, torch_cuda.dll): its GPU archs, read by its headers
  doctor                every installed distribution with compiled modules: what will not run here
  cache info|prune|clean  the HTTP cache: what it holds; trim it to its size cap (least recently
                        used first); empty it
  download [CONFIG...] -d DIR   resolve, then fetch every picked wheel into DIR, sha256-verified
  mirror CONFIG... --out DIR    resolve a fleet and publish a static index of its wheels
  version               print the version

resolve options:
  --index URL           the wheel index (https://, http://, a directory, file:// URL); default:
                        the backend's, or COMFY_ENV_CUDA_WHEELS_INDEX
  --machine FILE        the target machine profile (TOML or JSON); default: this machine,
                        detected as `wheelfit detect` shows it (WHEELFIT_OVERRIDE_* /
                        CONDA_OVERRIDE_* variables apply either way)
  --machine FILE ...    several times: a fleet, each named by its file's stem (below)
  --machines DIR        every profile (*.toml, *.json) of DIR, a fleet: the index is read once,
                        then each machine is resolved; a report per machine under "== name ==",
                        then a summary table (machine, combo, tier, status); --json: {"machines":
                        [{"name", ...the single object}], "summary": [...]}; exit: the worst
                        machine's; with one machine, the single output; not with -o
  --python PATH         this machine's interpreter (default: python3 on PATH); not with --machine
                        or --machines
  --policy FILE         policy data replacing the backend's own (also WHEELFIT_POLICY)
  --backend NAME        cuda or rocm (default: from torch's label, else cuda)
  -o, --output FILE     write the lock file (atomically; only when everything resolved; an
                        existing file keeps its mode, a symlink is written through): its format
                        from the name: requirements*.txt (pip --require-hashes), pylock.toml /
                        pylock.NAME.toml (PEP 751), anything else pixi.toml
  --format F            pixi, requirements or pylock, whatever -o's name
  --pixi-pins P         url (default: each wheel by URL + #sha256) or index (each by ==version
                        from the index resolved against: a mirror's machine view)
  --json                print one JSON object instead of the report
network options (http(s) indexes; README "Network"):
  --jobs N              requests in flight (default 50)
  --retries N           retries of transient failures (default 3; WHEELFIT_RETRY_BACKOFF_MS)
  --timeout S           connect and read timeout in seconds (default 10 / 30)
  --speed-limit BYTES   an attempt receiving fewer bytes per second than this, averaged over
  --speed-time S        --speed-time seconds, is cut and retried, continuing with Range
                        (default 1024 bytes/s over 30 s; --speed-limit 0: off)
  --max-time S          bound the whole command: at S seconds what is in flight stops and the
                        command fails (exit 4 while reading the index, 5 while fetching wheels)
  --user-agent UA       default wheelfit/<version> (also WHEELFIT_USER_AGENT)
  --proxy-auth M        auto (default), basic, negotiate or none: how to authenticate to the proxy
                        (also WHEELFIT_PROXY_AUTH); auto: Basic with user:password in the proxy
                        URL, else Negotiate (Kerberos: a ticket from kinit) when the proxy asks
  --allow-insecure-host HOST[:PORT][,...]   send credentials (URL user:password, WHEELFIT_INDEX_TOKEN,
                        netrc) over plain http to these hosts too (also WHEELFIT_ALLOW_INSECURE_HOST)
  credentials: user:password in the URL, WHEELFIT_INDEX_TOKEN (bearer, the index only), NETRC or
                        ~/.netrc; never written to the report, the JSON or pixi.toml
  --cert FILE           CA bundle (PEM) or hashed folder replacing the system's roots; else
                        PIP_CERT, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE / SSL_CERT_DIR
  --client-cert FILE    mutual TLS: a PEM file with the certificate and its key (SSL_CLIENT_CERT)
  --cache-dir DIR       the HTTP cache (default $XDG_CACHE_HOME/wheelfit/http)
  --no-cache            no cache at all
  --cache-max-size SIZE the cache's cap, kept after each resolve (500M, 1GiB; default 1GiB;
                        also WHEELFIT_CACHE_MAX_SIZE)
  --offline             answer only from the cache
  --releases-repo O/N   the GitHub Releases failover's repository (also WHEELFIT_RELEASES_REPO;
                        API base WHEELFIT_GITHUB_API, token GITHUB_TOKEN)

detect options:
  --python PATH         the target interpreter (default: python3 on PATH); asked once, cached
  --backend NAME        cuda, rocm or cpu (default: torch's label, else the hardware found)
  --json                print the profile as JSON: a valid --machine file, plus provenance,
                        notes, the interpreter and the GPUs

explain options:
  --machine FILE        the target machine (as for resolve); default: this machine, detected
  --python PATH         this machine's interpreter (detection); not with --machine
  --policy FILE         policy data (arch lists) replacing the backend's own
  --json                one object: demands [{demand, wheel, machine, verdict, detail}], files
                        [{path, sass, ptx, glibc, needed}], warnings, bytes_fetched, wheel_size;
                        a library: {library, archs {list, sass, ptx, source}, verdict, uncovered}
  --timeout S, --retries N, --user-agent UA, --allow-insecure-host HOST, --cert FILE,
  --client-cert FILE, --speed-limit BYTES, --speed-time S, --max-time S, --proxy-auth M
                        for a URL (read with HTTP Range requests)
  exit: 0 everything fits, 1 a demand fails, 2 bad input, 4 the URL could not be read

doctor options:
  --python PATH         the interpreter whose installed distributions are walked (default python3)
  --site DIR            walk this site folder instead of the interpreter's
  --machine FILE, --policy FILE, --json   as for explain; exit 0 all fit, 1 one fails, 2 bad input
  --url URL             instead: which proxy (and from which variable) and which authentication
                        a request to URL would use; for Negotiate the service and the Kerberos
                        ticket (--proxy-auth M as for resolve)

download options (and the resolve options: --index, --machine, --policy, --combo, network):
  -d, --dir DIR         where the wheels go (created when missing); a file already there with the
                        right sha256 is not fetched again; a part left by an interrupted run
                        continues (Range + If-Range)
  --machine FILE        repeatable; or --machines DIR: every profile of a folder (a fleet: the
                        union of their picks is fetched)
  --jobs N              files in flight (default 4)
  --no-wait             another run writing into DIR (it holds DIR/.wheelfit.lock) is exit 2 at
                        once; by default this run says so and waits for it
  --json                the resolve object plus "downloads": [{filename, url, path, bytes, sha256,
                        status, verified, resumed, continued, error}]
  exit: as resolve, 5 when a wheel could not be fetched or its sha256 did not match, 6 when DIR
        could not be written

mirror options (and the resolve options):
  --machines DIR / --machine FILE...   the fleet (at least one machine)
  --out DIR             the mirror folder: serve DIR/current (PEP 503 pages with PEP 658
                        metadata, packages.json, mirror.json, files/); published atomically;
                        new or empty, or one wheelfit made (DIR/.wheelfit-mirror)
  --base-url URL        absolute hrefs under URL (default: relative)
  --prune               drop the wheels no machine picks any more (default: kept)
  --offline             build from the HTTP cache and DIR alone
  --allow-unverified    publish wheels whose upstream gives no sha256 (marked "verified": false in
                        mirror.json); by default such a wheel is exit 5 and nothing is published
  --with-torch          mirror each machine's torch, torchvision and torchaudio too (the resolve's
                        versions, the newest file for its Python and platform), in its view
  --torch-index URL     where --with-torch reads: a PEP 503 index; {line} and {line_nodot} as in
                        the policy's pattern (default: the backend's torch index)
  --no-wait             another run on DIR (it holds DIR/.lock) is exit 2 at once (default: wait)
  --jobs N, --json      as for download; exit 0 published, 1 a machine unresolved (nothing pruned;
                        nothing published when no machine resolved), 5 a wheel failed or is
                        unverified, 6 the mirror could not be written

cache options:
  --cache-dir DIR       the HTTP cache (default $XDG_CACHE_HOME/wheelfit/http)
  --cache-max-size SIZE prune's cap (default 1GiB, or WHEELFIT_CACHE_MAX_SIZE)
  --json                one object: action, dir, max_size, entries, bytes, temp_files,
                        other_bytes, removed {entries, bytes, temp_files}

resolve --inspect       read each chosen wheel's binaries (HTTP Range requests) and reject a wheel
                        whose real GPU archs (or glibc, CPU arch, ...) do not fit; the next
                        candidate is tried
resolve --combo C       resolve with exactly this combo as the only tier, in the backend's notation
                        (cu12.8/torch2.8, rocm6.3/torch2.7); judged like any other tier
resolve --no-fallback   do not try tier 2 (the backend's fallback combo)
resolve --torch-index URL  where the advice reads the torch it names, for its exact file and sha256
                        ({line} and {line_nodot} as in the policy's pattern; default: the
                        backend's torch index, read only when the index resolved against is http(s))
When no tier covers every package, resolve prints advice: the combos the index publishes that
would (newest torch first), what to install for each, and with another Python; --json carries
all of them under "suggestions" (or "near_misses": the package that rules each combo out),
and under "advice" the combos set aside because their torch cannot run on the GPUs. When the
installed torch cannot run on the GPUs, the advice names the same version on a line that does
("advice": {"torch": {version, line, index, file, sha256, ...}}), resolved or not.

exit codes: 0 resolved, 1 no combo covers every package, 2 bad input or usage,
            3 the backend publishes no wheel index, 4 the index could not be read,
            5 a wheel could not be fetched or verified, 6 an output could not be written,
            70 internal error
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace wheelfit;
  util::use_utf8_console();  // Windows: what is written (UTF-8) shows as written
  util::keep_freed_memory();  // a short-lived process moving tens of MB: reuse, do not re-fault
  util::remove_temp_files_on_signal();  // Ctrl-C or a kill mid-write leaves no temporary file
  log::set_sink([](log::Level level, std::string_view message) {
    if (level == log::Level::debug && !std::getenv("WHEELFIT_DEBUG")) return;
    // Log lines quote names and URLs from the network: control characters escaped (cli::show).
    cli::show(std::cerr, std::string(level == log::Level::warn ? "warning: " : "") + std::string(message) + "\n");
  });
  // The arguments as UTF-8 (Windows: from the UTF-16 command line, so a path may name C:\Users\Jürgen).
  const std::vector<std::string> utf8_args = util::utf8_arguments(argc, argv);
  std::vector<std::string_view> args(utf8_args.begin() + 1, utf8_args.end());
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? cli::kBadInput : cli::kOk;
  }
  if (args[0] == "version" || args[0] == "--version") {
    std::cout << "wheelfit " << WHEELFIT_VERSION << "\n";
    return cli::kOk;
  }
  // The one registration of the transports (file, http(s), the cache, the Releases failover),
  // as the backends are loaded: every command's façade call reads through this registry.
  if (auto done = transports::register_transports(transport::default_registry()); !done) {
    std::cerr << "wheelfit: transports: " << done.error().message << "\n";
    return cli::kInternal;
  }
  // The policy format (policies/, format 2), installed as the core's policy reader.
  if (auto done = policies::register_format(); !done) {
    std::cerr << "wheelfit: policies: " << done.error().message << "\n";
    return cli::kInternal;
  }
  const std::string_view command = args[0];
  args.erase(args.begin());
  bool json = false;
  for (auto a : args) json = json || a == "--json";
  try {
    if (command == "resolve") return cli::run_resolve(args);
    if (command == "plugins") return cli::run_plugins(args);
    if (command == "detect") return cli::run_detect(args);
    if (command == "explain") return cli::run_explain(args);
    if (command == "doctor") return cli::run_doctor(args);
    if (command == "cache") return cli::run_cache(args);
    if (command == "download") return cli::run_download(args);
    if (command == "mirror") return cli::run_mirror(args);
    return cli::fail(json, cli::kBadInput, "unknown command '" + std::string(command) + "' (try wheelfit --help)");
  } catch (const cli::UsageError& e) {
    return cli::fail(json, cli::kBadInput, e.message);
  } catch (const std::exception& e) {
    return cli::fail(json, cli::kInternal, std::string("internal error (a bug: please report it): ") + e.what());
  }
}
