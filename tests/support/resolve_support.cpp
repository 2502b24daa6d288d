#include "support/resolve_support.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

#include "support/test_support.hpp"

namespace wheelfit::test {

machine::Machine make_machine(const Facts& facts) {
  machine::Machine m;
  for (const auto& [k, v] : facts) {
    auto r = machine::set_fact(m, k, v, "test");
    if (!r) throw std::runtime_error(r.error().message);
  }
  return m;
}

machine::Machine h100() {
  auto m = machine::load_machine_profile((source_dir() / "examples" / "machines" / "x86_64-h100-cu128.toml").string());
  if (!m) throw std::runtime_error(m.error().message);
  return std::move(*m);
}

machine::Machine h100_with(const Facts& changes) {
  auto m = h100();
  for (const auto& [key, value] : changes) REQUIRE(machine::set_fact(m, key, value, "test"));
  return m;
}

config::Workspace workspace(const std::vector<std::string>& packages, const std::string& python) {
  std::string text;
  if (!python.empty()) text += "python = \"" + python + "\"\n";
  text += "[cuda]\npackages = [";
  for (std::size_t i = 0; i < packages.size(); ++i) text += (i ? ", \"" : "\"") + packages[i] + "\"";
  text += "]\n";
  auto env = config::parse_env_config(text, "env/comfy-env.toml");
  if (!env) throw std::runtime_error(env.error().message);
  config::Workspace ws;
  ws.envs.push_back(std::move(*env));
  return ws;
}

index::IndexSnapshot snapshot(const std::vector<std::pair<std::string, std::vector<Anchor>>>& pages) {
  index::IndexSnapshot snap;
  snap.base_url = "https://example.test/simple/";
  for (const auto& [name, anchors] : pages) {
    index::ProjectPage page;
    page.name = name;
    page.url = snap.base_url + name + "/";
    page.status = index::ProjectPage::Status::ok;
    for (const auto& a : anchors) {
      index::Link link;
      link.text = a.text;
      std::string file = a.text;
      for (std::size_t pos; (pos = file.find('+')) != std::string::npos;) file.replace(pos, 1, "%2B");
      link.url = a.href.empty() ? snap.base_url + "files/" + file : a.href;
      link.filename = index::percent_decode(link.url.substr(link.url.rfind('/') + 1));
      if (!a.sha256.empty()) link.sha256 = a.sha256;
      link.yanked = a.yanked;
      if (!a.requires_python.empty()) link.requires_python = a.requires_python;
      page.page.links.push_back(std::move(link));
    }
    snap.projects.emplace(name, std::move(page));
  }
  return snap;
}

resolve::TorchArchs torch_built_for(const std::string& list) {
  return resolve::TorchArchs{list, {}, "a torch built from source for " + list + " (test)"};
}

}  // namespace wheelfit::test
