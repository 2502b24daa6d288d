// bench_variants: PEP 825 variants files from about 1 MB to near the 16 MiB cap, each figure
// printed per MB of the file and as a multiple of boost::json::parse of the same bytes, measured
// in the same run (issue 31, item 4):
//   1. parse_variants_json: the reader, with its caps.
//   2. one VariantOrder built for the file and every label judged against it: what a resolve
//      does per (file, support).
//   3. an order built for every label, then judged: the shape before issue 31 item 4 (each
//      variant wheel built its own), with today's linear build; timed on the first 32 labels
//      and scaled to all of them (an estimate, said so).
//   4. read_index (file transport: the page, the variants file, its digest, the reader) and
//      resolve::resolve of a package with one wheel per label, on an H100 profile.
// Every label is compatible, so each judgement walks all of its properties.
//
//   bench_variants [--reps N] [--keep DIR]
//     --reps N    repetitions, the best kept (default 5)
//     --keep DIR  write the generated indexes into DIR and leave them there (default: a temp dir),
//                 each with a machine profile and a config, so that any wheelfit can be timed on
//                 them: wheelfit resolve DIR/X/comfy-env.toml --index DIR/X --machine DIR/X/machine.json

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "bench_args.hpp"
#include "support/backend_support.hpp"
#include "wheelfit/config/workspace.hpp"
#include "wheelfit/deliver/download.hpp"
#include "wheelfit/index/index_client.hpp"
#include "wheelfit/machine/machine.hpp"
#include "wheelfit/model/variant.hpp"
#include "wheelfit/semantics/policy.hpp"
#include "wheelfit/resolve/resolver.hpp"
#include "wheelfit/transports/file_transport.hpp"

using namespace wheelfit;
namespace fs = std::filesystem;

namespace {

volatile std::size_t g_sink = 0;  // keeps the measured work observable

constexpr int kNamespaces = 8, kFeatures = 16, kValues = 256;  // the file's and the machine's lists
constexpr const char* kConfig = "python = \"3.12\"\n[cuda]\npackages = [\"vpkg\"]\n";

using bench::best_of;

std::string ns_name(int n) { return "n" + std::to_string(n); }
std::string feature_name(int f) { return "f" + std::to_string(f); }
std::string value_name(int v) { return "v" + std::to_string(v); }

// {"f0": ["v0", ...], ...}: every feature with `count` values from `first` on (mod kValues).
std::string features_json(int count, int first) {
  std::string out = "{";
  for (int f = 0; f < kFeatures; ++f) {
    out += (f ? ", \"" : "\"") + feature_name(f) + "\": [";
    for (int i = 0; i < count; ++i) out += (i ? ", \"" : "\"") + value_name((first + i * 37 + f) % kValues) + "\"";
    out += "]";
  }
  return out + "}";
}

// A schema 0.0.3 file: kNamespaces namespaces, the first half supplied by its static-properties
// (kValues values a feature), value priorities for every feature; `labels` labels, each with
// every namespace and feature and `per_feature` values of each.
std::string variants_json(int labels, int per_feature) {
  std::string order, priorities, statics, variants;
  for (int n = 0; n < kNamespaces; ++n) {
    order += (n ? ", \"" : "\"") + ns_name(n) + "\"";
    priorities += (n ? ", \"" : "\"") + ns_name(n) + "\": " + features_json(kValues, 11);
    if (n < kNamespaces / 2) statics += (n ? ", \"" : "\"") + ns_name(n) + "\": " + features_json(kValues, 0);
  }
  for (int l = 0; l < labels; ++l) {
    variants += (l ? ", \"l" : "\"l") + std::to_string(l) + "\": {";
    for (int n = 0; n < kNamespaces; ++n) variants += (n ? ", \"" : "\"") + ns_name(n) + "\": " + features_json(per_feature, l * 7 + n);
    variants += "}";
  }
  return R"({"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json", "default-priorities": {"namespace": [)" + order +
         R"(], "property": {)" + priorities + R"(}}, "static-properties": {)" + statics + R"(}, "variants": {)" + variants + "}}";
}

// The machine's lists for the other half of the namespaces (a profile's variant_properties).
model::VariantProperties machine_lists() {
  model::VariantProperties out;
  for (int n = kNamespaces / 2; n < kNamespaces; ++n) {
    model::FeatureValues features;
    for (int f = 0; f < kFeatures; ++f) {
      std::vector<std::string> values;
      for (int v = kValues - 1; v >= 0; --v) values.push_back(value_name(v));
      features.emplace_back(feature_name(f), std::move(values));
    }
    out.emplace_back(ns_name(n), std::move(features));
  }
  return out;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

// An index of vpkg 1.0: one wheel per label and the variants file, linked with its digest.
void write_index(const fs::path& dir, const std::string& body, int labels) {
  deliver::Sha256 sha;
  sha.update(body);
  std::string page = "<!DOCTYPE html><html><body>\n";
  for (int l = 0; l < labels; ++l) {
    const std::string file = "vpkg-1.0-cp312-cp312-manylinux_2_28_x86_64-l" + std::to_string(l) + ".whl";
    page += "<a href=\"" + file + "#sha256=" + std::string(64, '0') + "\">" + file + "</a><br>\n";
  }
  page += "<a href=\"vpkg-1.0-variants.json#sha256=" + sha.hex() + "\">vpkg-1.0-variants.json</a><br>\n</body></html>\n";
  write(dir / "vpkg" / "index.html", page);
  write(dir / "vpkg" / "vpkg-1.0-variants.json", body);
  write(dir / "comfy-env.toml", kConfig);
  write(dir / "machine.json", R"({"os": "linux", "cpu_arch": "x86_64", "glibc": "2.35", "python": "3.12", "torch": "2.8.0+cu128",
    "backend": "cuda", "driver_version": "580.65.06", "cuda_driver": "13.0", "gpus": ["9.0"], "variant_properties": )" +
                                  model::variant_properties_json(machine_lists()) + "}\n");
}

machine::Machine h100() {
  auto m = machine::load_machine_profile(WHEELFIT_SOURCE_DIR "/examples/machines/x86_64-h100-cu128.toml");
  if (!m) throw std::runtime_error(m.error().message);
  m->variant_properties = machine_lists();
  return std::move(*m);
}

config::Workspace workspace() {
  auto env = config::parse_env_config(kConfig, "bench/comfy-env.toml");
  if (!env) throw std::runtime_error(env.error().message);
  config::Workspace ws;
  ws.envs.push_back(std::move(*env));
  return ws;
}

struct Shape {
  int labels, per_feature;
};

void bench_shape(const Shape& shape, const fs::path& dir, int reps) {
  const std::string body = variants_json(shape.labels, shape.per_feature);
  const double mb = static_cast<double>(body.size()) / (1 << 20);
  const auto file = model::parse_variants_json(body, "vpkg-1.0-variants.json");
  if (!file) throw std::runtime_error(file.error().message);
  model::VariantSupport support;
  for (const auto& [ns, features] : machine_lists()) support.set_namespace(ns, features, "bench");

  const double t_json = best_of(reps, [&] { g_sink = g_sink + boost::json::parse(body).as_object().size(); });
  const double t_read = best_of(reps, [&] { g_sink = g_sink + model::parse_variants_json(body, "x")->variants.size(); });
  constexpr std::size_t kSample = 32;
  const auto judge_all = [&](bool per_label) {
    std::optional<model::VariantOrder> once;
    if (!per_label) once.emplace(&*file, support);
    std::size_t ok = 0, judged = 0;
    for (const auto& [label, props] : file->variants) {
      if (per_label && judged++ == kSample) break;
      ok += per_label ? model::VariantOrder(&*file, support).judge(label).compatible : once->judge(label).compatible;
    }
    if (ok != (per_label ? kSample : file->variants.size())) throw std::runtime_error("a label was not compatible");
    g_sink = g_sink + ok;
  };
  const double t_once = best_of(reps, [&] { judge_all(false); });
  const double t_each = best_of(reps, [&] { judge_all(true); }) * static_cast<double>(file->variants.size()) / kSample;

  const fs::path index = dir / ("l" + std::to_string(shape.labels) + "v" + std::to_string(shape.per_feature));
  write_index(index, body, shape.labels);
  const auto m = h100();
  const auto ws = workspace();
  const auto& policy = test::cuda_policy();
  const std::string base = transports::to_url(index.string(), true);
  std::string outcome;
  const double t_resolve = best_of(reps, [&] {
    auto transport = transports::make_file_transport();
    const auto snap = index::read_index(*transport, base, {"vpkg"});
    auto r = resolve::resolve({ws, m, policy, snap, "cuda"});
    if (!r) throw std::runtime_error(r.error().message);
    outcome = r->ok() ? r->picks.at(0).filename : "unresolved";
  });

  const auto row = [&](const char* what, double t) {
    std::printf("   %-44s %9.1f ms  %8.1f ms/MB  %7.1fx json\n", what, t * 1e3, t * 1e3 / mb, t / t_json);
  };
  std::printf("\n%d labels x %d namespaces x %d features x %d values: %.2f MB\n", shape.labels, kNamespaces, kFeatures,
              shape.per_feature, mb);
  row("boost::json::parse (the baseline)", t_json);
  row("1. parse_variants_json", t_read);
  row("2. one order, every label judged", t_once);
  row("3. an order per label (est. from 32 labels)", t_each);
  row("4. read_index + resolve (one wheel per label)", t_resolve);
  std::printf("   picked %s\n", outcome.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::string keep;
  bench::parse_args("bench_variants", argc, argv,
                    {{"--reps", [&](const std::string& v) { reps = bench::at_least_one(v); }},
                     {"--keep", [&](const std::string& v) { keep = v; }}},
                    "--reps N --keep DIR");
  fs::path dir = keep;
  if (keep.empty()) {
    std::string templ = (fs::temp_directory_path() / "bench_variants.XXXXXX").string();
    if (!::mkdtemp(templ.data())) return 1;
    dir = templ;
  }
  std::printf("bench_variants: best of %d; files in %s\n", reps, dir.c_str());
  try {
    for (const Shape& s : {Shape{256, 2}, Shape{1024, 2}, Shape{1024, 14}}) bench_shape(s, dir, reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_variants: %s\n", e.what());
    return 1;
  }
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
