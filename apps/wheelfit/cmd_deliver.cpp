// `wheelfit download` and `wheelfit mirror`: the arguments -> a DownloadRequest / MirrorRequest ->
// wheelfit::download() / wheelfit::mirror() (the façade decides everything) -> the report or the
// JSON, the progress on stderr, the exit code.
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "progress.hpp"
#include "wheelfit/util/native_text.hpp"
#include "wheelfit/api.hpp"

namespace wheelfit::cli {
namespace {

unsigned jobs_of(const Args& parsed) {
  const auto v = parsed.value("--jobs");
  return v ? static_cast<unsigned>(cli_value(*api::options::find_flag("--jobs"), *v, "--jobs").number) : 4u;
}

/// The progress view on stderr: redrawn in place on a terminal (on Windows a console that takes
/// ANSI escapes), log lines otherwise.
std::unique_ptr<ProgressView> progress_view() {
  return std::make_unique<ProgressView>(std::cerr, util::stderr_is_terminal());
}

template <class Result>
int print(const Result& result, bool json) {
  if (result.error) return fail(json, result.exit_code, result.error->message);
  write_out(result, json);
  return result.exit_code;
}

}  // namespace

std::optional<std::string> take_machines(const Args& parsed, registry::Registry& reg, api::ResolveRequest& request,
                                         std::vector<api::FleetMachine>& fleet) {
  if (auto loaded = load_backends(reg); !loaded) return loaded.error().message;
  request.backends = &reg;
  auto given = fleet_of(parsed);
  if (!given) return given.error().message;
  if (given->size() == 1) request.machine = std::move(given->front().machine);
  else fleet = std::move(*given);
  return std::nullopt;
}

int run_download(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv, api::options::kDownload);
  const bool json = parsed.has("--json");
  if (parsed.positional.empty()) throw UsageError{"download: give at least one comfy-env.toml"};
  const auto dir = parsed.value("--dir");
  if (!dir || dir->empty()) throw UsageError{"download: give the folder to download into (-d DIR)"};

  api::DownloadRequest request;
  request.resolve = resolve_request(parsed);
  request.dir = *dir;
  request.jobs = jobs_of(parsed);
  request.wait = !parsed.has("--no-wait");
  registry::Registry reg;
  if (auto why = take_machines(parsed, reg, request.resolve, request.fleet)) return fail(json, api::kExitBadInput, *why);
  const auto view = progress_view();
  request.progress = [&view](const deliver::Progress& p) { view->on(p); };
  const auto result = api::download(request);
  view->finish();
  return print(result, json);
}

int run_mirror(const std::vector<std::string_view>& argv) {
  const Args parsed = parse_args(argv, api::options::kMirror);
  const bool json = parsed.has("--json");
  if (parsed.positional.empty()) throw UsageError{"mirror: give at least one comfy-env.toml"};
  const auto out = parsed.value("--out");
  if (!out || out->empty()) throw UsageError{"mirror: give the mirror folder (--out DIR)"};
  if (!parsed.value("--machine") && !parsed.value("--machines")) {
    throw UsageError{"mirror: give the fleet (--machines DIR, or --machine FILE once per machine)"};
  }

  api::MirrorRequest request;
  request.resolve = resolve_request(parsed);
  request.out = *out;
  request.base_url = parsed.value("--base-url");
  request.prune = parsed.has("--prune");
  request.jobs = jobs_of(parsed);
  request.wait = !parsed.has("--no-wait");
  request.allow_unverified = parsed.has("--allow-unverified");
  request.with_torch = parsed.has("--with-torch");
  request.torch_index = parsed.value("--torch-index");
  if (request.torch_index && !request.with_torch) throw UsageError{"--torch-index names where --with-torch reads: give --with-torch"};
  registry::Registry reg;
  if (auto loaded = load_backends(reg); !loaded) return fail(json, api::kExitBadInput, loaded.error().message);
  request.resolve.backends = &reg;
  auto fleet = fleet_of(parsed);
  if (!fleet) return fail(json, api::kExitBadInput, fleet.error().message);
  request.fleet = std::move(*fleet);
  const auto view = progress_view();
  request.progress = [&view](const deliver::Progress& p) { view->on(p); };
  const auto result = api::mirror(request);
  view->finish();
  return print(result, json);
}

}  // namespace wheelfit::cli
