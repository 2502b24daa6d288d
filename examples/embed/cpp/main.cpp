// Embedding wheelfit's façade: a resolve against an index this program holds in memory, under a
// URL scheme of its own (mem://, as an object store or a company mirror would be): a Transport
// registered for "mem" in a transport registry beside wheelfit's built-ins (file, http, https, the
// cache, the Releases failover), for a machine it describes, with the backends loaded from the
// installed plugin folder. Prints the report and the JSON; exits with wheelfit's exit code.
//
//   embed_resolve [PLUGIN_DIR]      (default: the installed package's WHEELFIT_PLUGIN_DIR)
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include <wheelfit/policies/format.hpp>
#include <wheelfit/transport/registry.hpp>
#include <wheelfit/transports/register.hpp>
#include <wheelfit/version.hpp>
#include <wheelfit/wheelfit.hpp>

namespace {

// The mem:// index: a PEP 503 project page per URL; anything else is a 404.
class InMemoryIndex final : public wheelfit::transport::Transport {
 public:
  explicit InMemoryIndex(std::map<std::string, std::string> pages) : pages_(std::move(pages)) {}

 private:
  wheelfit::Expected<wheelfit::transport::Response> get_impl(const wheelfit::transport::Request& request) override {
    auto it = pages_.find(request.url);
    if (it == pages_.end()) return wheelfit::unexpected(wheelfit::Errc::not_found, request.url + ": 404 (not in memory)");
    return wheelfit::transport::Response{request.url, "text/html", it->second, 200, {}, false};
  }
  std::map<std::string, std::string> pages_;
};

std::string anchor(const std::string& file, char hash_digit) {
  return "<a href=\"https://wheels.example.internal/files/" + file + "#sha256=" + std::string(64, hash_digit) + "\">" +
         file + "</a>\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::cout << "wheelfit " << WHEELFIT_VERSION_STRING << "\n";
  const std::string plugin_dir = argc > 1 ? argv[1] : EMBED_PLUGIN_DIR;
  wheelfit::registry::Registry backends;
  const auto loaded = wheelfit::registry::load_plugins(backends, plugin_dir);
  if (!loaded.ok()) {
    std::cerr << "embed_resolve: " << plugin_dir << ": " << loaded.error->message << "\n";
    return wheelfit::api::kExitBadInput;
  }

  // An H100 box with torch 2.8.0 for CUDA 12.8 (the facts a machine profile holds).
  wheelfit::machine::Machine machine;
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"os", "linux"}, {"cpu_arch", "x86_64"}, {"glibc", "2.35"}, {"python", "3.12"},
           {"torch", "2.8.0+cu128"}, {"driver_line", "12.8"}, {"gpus", "9.0"}}) {
    if (auto set = wheelfit::machine::set_fact(machine, key, value, "embed example"); !set) {
      std::cerr << "embed_resolve: " << set.error().message << "\n";
      return wheelfit::api::kExitBadInput;
    }
  }

  // The transports, registered once at start-up: wheelfit's built-ins, then mem:// (one index
  // object per stack; the factory gets the request's plain options and may ignore them).
  wheelfit::transport::Registry transports;
  if (auto done = wheelfit::transports::register_transports(transports); !done) {
    std::cerr << "embed_resolve: " << done.error().message << "\n";
    return wheelfit::api::kExitInternal;
  }
  // The policy format the backends' policies are written in, installed once as well.
  if (auto done = wheelfit::policies::register_format(); !done) {
    std::cerr << "embed_resolve: " << done.error().message << "\n";
    return wheelfit::api::kExitInternal;
  }
  const auto mem = [](const wheelfit::transport::StackOptions&)
      -> wheelfit::Expected<std::unique_ptr<wheelfit::transport::Transport>> {
    return std::unique_ptr<wheelfit::transport::Transport>(std::make_unique<InMemoryIndex>(std::map<std::string, std::string>{
        {"mem://wheels.example.internal/simple/flash-attn/",
         "<html><body>\n" + anchor("flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl", 'a') +
             anchor("flash_attn-2.8.3+cu126torch2.7-cp312-cp312-manylinux_2_28_x86_64.whl", 'b') + "</body></html>\n"}}));
  };
  if (auto added = transports.add_transport({"mem", {"mem"}, mem}); !added) {
    std::cerr << "embed_resolve: " << added.error().message << "\n";
    return wheelfit::api::kExitInternal;
  }

  wheelfit::api::ResolveRequest request;
  request.envs = {{"demo", "3.12", {"flash_attn"}}};
  request.machine = machine;
  request.env_overrides = false;
  request.index = "mem://wheels.example.internal/simple/";
  request.backends = &backends;
  request.transports = &transports;

  const auto result = wheelfit::api::resolve(request);
  std::cout << result.report() << result.json();
  if (result.exit_code == wheelfit::api::kExitResolved) {
    auto manifest = result.pixi_manifest();
    if (manifest) std::cout << "--- pixi.toml\n" << *manifest;
  }
  return result.exit_code;
}
