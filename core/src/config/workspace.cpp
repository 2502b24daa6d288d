#include "wheelfit/config/workspace.hpp"
#include "wheelfit/util/toml_depth.hpp"
#include "wheelfit/util/read_file.hpp"
#include "wheelfit/util/text.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

#include <toml++/toml.h>

#include "wheelfit/model/name.hpp"

namespace wheelfit::config {
namespace {
namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxConfigBytes = 4u * 1024u * 1024u;

// "file:line:col" for a node that came from the parser, else "file".
std::string where(const std::string& file, const toml::node& node) {
  const auto& begin = node.source().begin;
  if (begin.line == 0) return file;
  return file + ":" + std::to_string(begin.line) + ":" + std::to_string(begin.column);
}

Unexpected fail(const std::string& file, const toml::node& node, const std::string& what) {
  return unexpected(Errc::invalid_input, where(file, node) + ": " + what);
}

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// The text of a single-line node as written ("3.10", not the float 3.1), or "" if unknown.
std::string source_text(std::string_view text, const toml::source_region& region) {
  return util::source_span(text, region.begin.line, region.begin.column, region.end.line, region.end.column);
}

// The torch family, compared with case and separators ignored ("Torch_Vision", "torch-audio").
bool is_torch_family(const std::string& normalized) {
  std::string squashed;
  for (char c : normalized) {
    if (c != '-') squashed += c;
  }
  return squashed == "torch" || squashed == "torchvision" || squashed == "torchaudio";
}

Expected<std::optional<model::NumericVersion>> read_python(const toml::table& doc, std::string_view source,
                                                          const std::string& file) {
  const toml::node* node = doc.get("python");
  if (node == nullptr) return std::optional<model::NumericVersion>{};
  if (const auto* f = node->as_floating_point()) {
    std::string shown = source_text(source, node->source());
    if (shown.empty()) {
      std::ostringstream out;
      out << f->get();
      shown = out.str();
    }
    return fail(file, *node,
                "python = " + shown + " is a TOML float; write it as a string, python = \"X.Y\" "
                "(as a float, 3.10 would read as 3.1)");
  }
  const auto* s = node->as_string();
  if (s == nullptr) {
    return fail(file, *node, "python must be a string \"X.Y\" such as \"3.12\", not " + type_name(*node));
  }
  const std::string& text = s->get();
  if (!text.empty() && (text.back() == 't' || text.back() == 'T')) {
    return fail(file, *node,
                "python = \"" + text + "\": free-threaded Python is not supported in comfy-env.toml; "
                "write \"X.Y\" (such as \"3.13\")");
  }
  auto v = model::NumericVersion::parse(text);
  if (!v || v->parts().size() != 2) {
    return fail(file, *node, "python = \"" + text + "\" must be major.minor, \"X.Y\", such as \"3.12\"");
  }
  return std::optional<model::NumericVersion>(*v);
}

/// One string of a TOML array, the key that names it ("[cuda] packages[2]") and its node, for the
/// refusals that point at it.
struct StringItem {
  const toml::node* node;
  std::string key;
  const std::string& text;
};

/// A table of comfy-env.toml that holds one key, an array of strings: the table's name, the key,
/// what the array holds ("strings such as [\"x\"]"), and the words around another key's name in
/// the warning that ignores it ("<file>: [name] <before><other key><after>").
struct SectionKey {
  const char* name;
  const char* key;
  const char* shape;
  const char* before;
  const char* after;
};

/// The strings of `doc`'s table `what.name`, key `what.key`, each non-empty (none when the table
/// or the key is absent); the table's other keys are warned about and ignored.
Expected<std::vector<StringItem>> read_section_strings(const toml::table& doc, const SectionKey& what, const std::string& file,
                                                       std::vector<std::string>& warnings) {
  std::vector<StringItem> items;
  const std::string section = "[" + std::string(what.name) + "]";
  const toml::node* table_node = doc.get(what.name);
  if (table_node == nullptr) return items;
  const toml::table* table = table_node->as_table();
  if (table == nullptr) return fail(file, *table_node, section + " must be a table, not " + type_name(*table_node));
  for (const auto& [name, value] : *table) {
    if (name.str() != what.key) warnings.push_back(file + ": " + section + " " + what.before + std::string(name.str()) + what.after);
  }
  const std::string key = what.key;
  const toml::node* node = table->get(key);
  if (node == nullptr) return items;
  const toml::array* arr = node->as_array();
  if (arr == nullptr) {
    return fail(file, *node, section + " " + key + " must be an array of " + what.shape + ", not " + type_name(*node));
  }
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::node& item = *arr->get(i);
    std::string name = section + " " + key + "[" + std::to_string(i) + "]";
    const auto* s = item.as_string();
    if (s == nullptr) return fail(file, item, name + " must be a string, not " + type_name(item));
    if (s->get().empty()) return fail(file, item, name + " is an empty string");
    items.push_back({&item, std::move(name), s->get()});
  }
  return items;
}

Expected<std::vector<Package>> read_cuda(const toml::table& doc, const std::string& file,
                                         std::vector<std::string>& warnings) {
  static constexpr SectionKey kCuda{"cuda", "packages", "package names such as [\"flash-attn\"]", "unknown key '", "' ignored"};
  auto pkgs = read_section_strings(doc, kCuda, file, warnings);
  if (!pkgs) return pkgs.error();
  std::vector<Package> packages;
  for (const StringItem& package : *pkgs) {
    const toml::node& item = *package.node;
    const std::string& key = package.key;
    const std::string& requested = package.text;
    if (!model::is_valid_name(requested)) {
      return fail(file, item, key + ": '" + requested + "' is not a valid package name");
    }
    std::string name = model::normalize_name(requested);
    // torch itself may be listed: against an index that serves variant wheels of torch (PEP 825)
    // it resolves like any package; against a label-based index the resolver refuses it.
    if (is_torch_family(name) && name != "torch") {
      return fail(file, item,
                  key + ": the torch family is derived from the resolved combo (or from torch, when torch is "
                        "resolved from a variant index); remove '" + requested + "' from [cuda] packages");
    }
    for (const auto& earlier : packages) {
      if (earlier.name == name) {
        return fail(file, item,
                    key + ": '" + requested + "' duplicates '" + earlier.requested + "' (both are '" + name + "')");
      }
    }
    packages.push_back(Package{requested, std::move(name)});
  }
  return packages;
}

Expected<std::vector<std::string>> read_workspace(const toml::table& doc, const std::string& file,
                                                  std::vector<std::string>& warnings) {
  static constexpr SectionKey kWorkspace{"workspace", "channels", "strings such as [\"conda-forge\"]", "key '",
                                          "' ignored (only channels is read)"};
  auto items = read_section_strings(doc, kWorkspace, file, warnings);
  if (!items) return items.error();
  std::vector<std::string> channels;
  for (const StringItem& item : *items) channels.push_back(item.text);
  return channels;
}

// Lower-cases ASCII letters, turns every other character outside [a-z0-9] into '-', collapses
// runs of '-' and trims them from both ends. Empty -> "env".
std::string sanitize_env_name(std::string_view raw) {
  std::string out;
  for (char c : raw) {
    char d = c;
    if (d >= 'A' && d <= 'Z') d = static_cast<char>(d - 'A' + 'a');
    const bool keep = (d >= 'a' && d <= 'z') || (d >= '0' && d <= '9');
    if (keep) {
      out += d;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? std::string("env") : out;
}

std::string env_name_for(const std::string& file) {
  const fs::path p(file);
  const std::string filename = p.filename().string();
  if (filename == "comfy-env.toml") {
    std::error_code ec;
    fs::path abs = fs::absolute(p, ec);
    if (ec) abs = p;
    return sanitize_env_name(abs.parent_path().filename().string());
  }
  const auto dot = filename.find('.');
  return sanitize_env_name(dot == std::string::npos ? filename : filename.substr(0, dot));
}

}  // namespace

Expected<Env> parse_env_config(std::string_view text, const std::string& file) {
  if (text.size() > kMaxConfigBytes) {
    return unexpected(Errc::too_large, file + ": " + std::to_string(text.size()) +
                                           " bytes is over the 4 MiB limit for a comfy-env.toml");
  }

  if (const auto line = util::too_deep_toml_line(text)) {  // toml++ would recurse that deep (util/toml_depth.hpp)
    return unexpected(Errc::invalid_input, file + ":" + std::to_string(*line) + ": more than " +
                                               std::to_string(util::kMaxTomlKeyDots) + " dotted key parts on one line: too deep to read");
  }
  toml::table doc;
  try {
    doc = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return unexpected(Errc::invalid_input, file + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                                               ": TOML syntax error: " + std::string(e.description()));
  }

  Env env;
  env.file = file;
  env.name = env_name_for(file);

  auto python = read_python(doc, text, file);
  if (!python) return python.error();
  env.python = *python;

  auto packages = read_cuda(doc, file, env.warnings);
  if (!packages) return packages.error();
  env.packages = std::move(*packages);

  auto channels = read_workspace(doc, file, env.warnings);
  if (!channels) return channels.error();
  env.channels = std::move(*channels);

  doc.erase("python");
  doc.erase("cuda");
  doc.erase("workspace");
  if (!doc.empty()) {
    std::ostringstream out;
    out << toml::toml_formatter(doc);
    env.passthrough_toml = out.str();
    if (!env.passthrough_toml.empty() && env.passthrough_toml.back() != '\n') env.passthrough_toml += '\n';
  }
  return env;
}

Expected<Env> load_env_config(const std::string& file) {
  auto text = util::read_file(file, kMaxConfigBytes, "a comfy-env.toml");
  if (!text) return text.error();
  return parse_env_config(*text, file);
}

Expected<Workspace> load_workspace(const std::vector<std::string>& files) {
  if (files.empty()) return unexpected(Errc::usage, "no comfy-env.toml given");
  Workspace ws;
  std::set<std::string> taken;
  for (const auto& file : files) {
    auto env = load_env_config(file);
    if (!env) return env.error();
    std::string name = env->name;
    for (int n = 2; taken.count(name) != 0; ++n) name = env->name + "-" + std::to_string(n);
    taken.insert(name);
    env->name = std::move(name);
    ws.envs.push_back(std::move(*env));
  }
  return ws;
}

}  // namespace wheelfit::config
