// PEP 825 variants: the variants.json reader and the variant ordering (variant.hpp).
#include "wheelfit/model/variant.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>

#include "wheelfit/model/wheel.hpp"
#include "wheelfit/util/json_kind.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::model {

namespace json = boost::json;

std::vector<std::string> property_strings(const VariantProperties& p) {
  std::vector<std::string> out;
  for (const auto& [ns, features] : p)
    for (const auto& [feature, values] : features)
      for (const auto& v : values) out.push_back(ns + " :: " + feature + " :: " + v);
  return out;
}

const std::vector<std::string>* find_values(const VariantProperties& p, std::string_view ns, std::string_view feature) {
  for (const auto& [n, features] : p) {
    if (n != ns) continue;
    for (const auto& [f, values] : features)
      if (f == feature) return &values;
  }
  return nullptr;
}

bool has_namespace(const VariantProperties& p, std::string_view ns) {
  return std::any_of(p.begin(), p.end(), [&](const auto& e) { return e.first == ns; });
}

std::string VariantSchema::str() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

void VariantSupport::set_namespace(const std::string& ns, FeatureValues features, const std::string& who) {
  auto it = std::find_if(properties.begin(), properties.end(), [&](const auto& e) { return e.first == ns; });
  if (it == properties.end()) properties.emplace_back(ns, std::move(features));
  else it->second = std::move(features);
  origin[ns] = who;
}

// ---------------------------------------------------------------------------------------------
// The reader.

namespace {

bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || util::ascii::is_digit(c) || c == '_'; }
bool valid_name(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_name_char); }
bool valid_value(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_name_char(c) || c == '.'; });
}
std::string_view view(const json::string& s) { return {s.data(), s.size()}; }

struct Reader {
  std::string_view source;

  [[nodiscard]] Unexpected fail(const std::string& path, const std::string& what, Errc code = Errc::invalid_input) const {
    return unexpected(code, std::string(source) + ": " + (path.empty() ? "" : path + ": ") + what);
  }
  [[nodiscard]] Unexpected kind(const std::string& path, std::string_view expected, const json::value& got) const {
    return fail(path, "not " + std::string(expected) + " (got " + std::string(util::json_kind_name(got)) + ")");
  }

  Expected<std::vector<std::string>> strings(const json::value& v, const std::string& path, bool values) const {
    if (!v.is_array()) return kind(path, "an array of strings", v);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.as_array().size(); ++i) {
      const auto& e = v.as_array()[i];
      const std::string at = path + "[" + std::to_string(i) + "]";
      if (!e.is_string()) return kind(at, "a string", e);
      const std::string_view s = view(e.as_string());
      if (values ? !valid_value(s) : !valid_name(s)) {
        return fail(at, "'" + std::string(s) + "' is not a variant " + (values ? "value (^[a-z0-9_.]+$)" : "name (^[a-z0-9_]+$)"));
      }
      out.emplace_back(s);
    }
    return out;
  }

  Expected<const json::object*> object(const json::value& v, const std::string& path) const {
    if (!v.is_object()) return kind(path, "an object", v);
    return &v.as_object();
  }

  // {ns: {feature: [values]}}
  Expected<VariantProperties> properties(const json::value& v, const std::string& path) const {
    auto obj = object(v, path);
    if (!obj) return obj.error();
    VariantProperties out;
    for (const auto& [ns, features] : **obj) {
      const std::string at = (path.empty() ? "" : path + ".") + std::string(view(ns));
      if (!valid_name(view(ns))) return fail(at, "'" + std::string(view(ns)) + "' is not a variant namespace (^[a-z0-9_]+$)");
      auto fobj = object(features, at);
      if (!fobj) return fobj.error();
      FeatureValues fv;
      for (const auto& [feature, values] : **fobj) {
        const std::string fat = at + "." + std::string(view(feature));
        if (!valid_name(view(feature))) return fail(fat, "'" + std::string(view(feature)) + "' is not a variant feature (^[a-z0-9_]+$)");
        auto vals = strings(values, fat, true);
        if (!vals) return vals.error();
        if (vals->empty()) return fail(fat, "no values");
        fv.emplace_back(std::string(view(feature)), std::move(*vals));
      }
      out.emplace_back(std::string(view(ns)), std::move(fv));
    }
    return out;
  }
};

// ".../v0.0.3.json" -> 0.0.3
std::optional<VariantSchema> schema_version(std::string_view url) {
  const auto slash = url.rfind('/');
  std::string_view last = slash == std::string_view::npos ? url : url.substr(slash + 1);
  if (!last.starts_with("v") || !last.ends_with(".json")) return std::nullopt;
  last = last.substr(1, last.size() - 6);
  int parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const auto dot = i < 2 ? last.find('.') : last.size();
    if (dot == std::string_view::npos) return std::nullopt;
    const std::string_view digits = last.substr(0, dot);
    if (digits.empty() || digits.size() > 6) return std::nullopt;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), parts[i]);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    last = i < 2 ? last.substr(dot + 1) : std::string_view();
  }
  return VariantSchema{parts[0], parts[1], parts[2]};
}

}  // namespace

Expected<VariantsFile> parse_variants_json(std::string_view body, std::string_view source) {
  const Reader r{source};
  boost::system::error_code ec;
  json::value root = json::parse(body, ec);
  if (ec) return r.fail("", "invalid JSON: " + ec.message());
  auto top = r.object(root, "");
  if (!top) return r.fail("", "not a JSON object (got " + std::string(util::json_kind_name(root)) + ")");
  const json::object& o = **top;

  VariantsFile f;
  f.source = std::string(source);
  const json::value* schema = o.if_contains("$schema");
  if (!schema) return r.fail("$schema", "missing: the format version is unknown, so its variants are not supported", Errc::unsupported);
  if (!schema->is_string()) return r.kind("$schema", "a string", *schema);
  auto version = schema_version(view(schema->as_string()));
  if (!version) {
    return r.fail("$schema", "'" + std::string(view(schema->as_string())) + "' names no format version (.../vX.Y.Z.json)",
                  Errc::unsupported);
  }
  f.schema = *version;
  if (!f.schema.known()) {
    return r.fail("$schema", "format version " + f.schema.str() + " is not one this wheelfit reads (0.0.x, 0.1.x)",
                  Errc::unsupported);
  }

  const json::value* prio = o.if_contains("default-priorities");
  if (!prio) return r.fail("default-priorities", "missing");
  auto pobj = r.object(*prio, "default-priorities");
  if (!pobj) return pobj.error();
  const json::value* ns = (*pobj)->if_contains("namespace");
  if (!ns) return r.fail("default-priorities.namespace", "missing");
  auto order = r.strings(*ns, "default-priorities.namespace", false);
  if (!order) return order.error();
  f.namespace_order = std::move(*order);
  if (const json::value* feat = (*pobj)->if_contains("feature")) {
    auto fobj = r.object(*feat, "default-priorities.feature");
    if (!fobj) return fobj.error();
    for (const auto& [k, v] : **fobj) {
      auto list = r.strings(v, "default-priorities.feature." + std::string(view(k)), false);
      if (!list) return list.error();
      f.feature_order[std::string(view(k))] = std::move(*list);
    }
  }
  if (const json::value* prop = (*pobj)->if_contains("property")) {
    auto props = r.properties(*prop, "default-priorities.property");
    if (!props) return props.error();
    for (auto& [n, features] : *props)
      for (auto& [feature, values] : features) f.value_order[n][feature] = std::move(values);
  }
  if (const json::value* st = o.if_contains("static-properties")) {
    auto props = r.properties(*st, "static-properties");
    if (!props) return props.error();
    f.static_properties = std::move(*props);
  }
  const json::value* variants = o.if_contains("variants");
  if (!variants) return r.fail("variants", "missing");
  auto vobj = r.object(*variants, "variants");
  if (!vobj) return vobj.error();
  for (const auto& [label, props] : **vobj) {
    const std::string at = "variants." + std::string(view(label));
    if (auto why = variant_label_error(view(label)); !why.empty()) return r.fail(at, why);
    auto p = r.properties(props, at);
    if (!p) return p.error();
    if (view(label) == "null" && !p->empty()) return r.fail(at, "the null variant has properties (it must have none)");
    for (const auto& [n, features] : *p) {
      // abi_dependency is ordered last when the file does not order it (variantlib's rule).
      if (n != "abi_dependency" && std::find(f.namespace_order.begin(), f.namespace_order.end(), n) == f.namespace_order.end()) {
        return r.fail(at + "." + n, "namespace '" + n + "' is not listed in default-priorities.namespace");
      }
    }
    f.variants.emplace(std::string(view(label)), std::move(*p));
  }
  return f;
}

Expected<VariantProperties> parse_variant_properties(std::string_view json_text, std::string_view source) {
  const Reader r{source};
  boost::system::error_code ec;
  json::value root = json::parse(json_text, ec);
  if (ec) return r.fail("", "invalid JSON: " + ec.message());
  return r.properties(root, "");
}

std::string variant_properties_json(const VariantProperties& p) {
  json::object o;
  for (const auto& [ns, features] : p) {
    json::object f;
    for (const auto& [feature, values] : features) {
      json::array a;
      for (const auto& v : values) a.emplace_back(json::string(v));
      f[feature] = std::move(a);
    }
    o[ns] = std::move(f);
  }
  return json::serialize(o);
}

// ---------------------------------------------------------------------------------------------
// The ordering.

namespace {

void append_missing(std::vector<std::string>& list, const std::vector<std::string>& more) {
  for (const auto& m : more)
    if (std::find(list.begin(), list.end(), m) == list.end()) list.push_back(m);
}

std::ptrdiff_t index_of(const std::vector<std::string>& list, std::string_view s) {
  auto it = std::find(list.begin(), list.end(), s);
  return it == list.end() ? -1 : it - list.begin();
}

}  // namespace

VariantOrder::VariantOrder(const VariantsFile* file, const VariantSupport& support, std::string file_problem)
    : file_(file), support_(support), file_problem_(std::move(file_problem)) {
  if (!file_) return;
  namespaces_ = file_->namespace_order;
  append_missing(namespaces_, {"abi_dependency"});
  for (const auto& n : namespaces_) {
    auto& features = features_[n];
    if (auto it = file_->feature_order.find(n); it != file_->feature_order.end()) features = it->second;
    // The supported features of the namespace, in the supplier's order.
    const FeatureValues* supplied = supplier(n);
    if (!supplied) continue;
    for (const auto& [feature, values] : *supplied) {
      append_missing(features, {feature});
      auto& vals = values_[n][feature];
      if (auto fo = file_->value_order.find(n); fo != file_->value_order.end()) {
        if (auto vo = fo->second.find(feature); vo != fo->second.end() && vals.empty()) vals = vo->second;
      }
      append_missing(vals, values);
    }
  }
}

bool VariantOrder::from_file(std::string_view ns) const {
  return file_ && support_.overridden.count(ns) == 0 && has_namespace(file_->static_properties, ns);
}

const FeatureValues* VariantOrder::supplier(std::string_view ns) const {
  const VariantProperties& from = from_file(ns) ? file_->static_properties : support_.properties;
  auto it = std::find_if(from.begin(), from.end(), [&](const auto& e) { return e.first == ns; });
  return it == from.end() ? nullptr : &it->second;
}

const std::vector<std::string>* VariantOrder::supported(std::string_view ns, std::string_view feature) const {
  const FeatureValues* features = supplier(ns);
  if (!features) return nullptr;
  auto it = std::find_if(features->begin(), features->end(), [&](const auto& e) { return e.first == feature; });
  return it == features->end() ? nullptr : &it->second;
}

std::string VariantOrder::origin_of(std::string_view ns) const {
  if (from_file(ns)) return "static-properties of " + file_->source;
  auto it = support_.origin.find(ns);
  return it == support_.origin.end() ? std::string("?") : it->second;
}

VariantOrder::Verdict VariantOrder::judge(std::string_view label) const {
  Verdict v;
  if (label == "null") {
    v.compatible = true;
    return v;
  }
  if (!file_) {
    v.failures.push_back({"variant '" + std::string(label) + "'", file_problem_});
    return v;
  }
  auto it = file_->variants.find(label);
  if (it == file_->variants.end()) {
    v.failures.push_back({"variant '" + std::string(label) + "'", "not listed in " + file_->source});
    return v;
  }
  v.properties = property_strings(it->second);
  for (const auto& [ns, features] : it->second) {
    const auto ns_index = index_of(namespaces_, ns);
    for (const auto& [feature, values] : features) {
      const std::string wheel = ns + " :: " + feature + " :: " + util::join(values, ", ");
      if (!supplier(ns)) {
        v.failures.push_back({wheel, "no provider for namespace '" + ns + "' on this machine"});
        continue;
      }
      const std::vector<std::string>* sup = supported(ns, feature);
      if (!sup || sup->empty()) {
        v.failures.push_back({wheel, "not supported: " + origin_of(ns) + " supports no value of '" + ns + " :: " + feature + "'"});
        continue;
      }
      // The best value of the feature: the first in the ordered list that the wheel has and the
      // machine supports.
      const auto& order = values_.at(ns).at(feature);
      std::ptrdiff_t best = -1;
      for (std::size_t i = 0; i < order.size() && best < 0; ++i) {
        const bool has = std::find(values.begin(), values.end(), order[i]) != values.end();
        const bool ok = std::find(sup->begin(), sup->end(), order[i]) != sup->end();
        if (has && ok) best = static_cast<std::ptrdiff_t>(i);
      }
      if (best < 0) {
        std::string machine = "not supported: " + origin_of(ns) + " supports " + util::join(*sup, ", ");
        if (auto d = support_.devices.find(ns + " :: " + feature); d != support_.devices.end() && !d->second.empty()) {
          std::vector<std::string> targets;
          for (const auto& [target, serving] : d->second) targets.push_back(target);
          machine += " (GPUs " + support_.device_prefix + util::join(targets, ", ") + ")";
        }
        v.failures.push_back({wheel, std::move(machine)});
        continue;
      }
      // The every-device rule, where the provider says which values serve each device.
      if (auto d = support_.devices.find(ns + " :: " + feature); d != support_.devices.end()) {
        std::vector<std::string> unserved;
        for (const auto& device : d->second) {  // (target, the values serving it)
          const auto& serving = device.second;
          const bool served = std::any_of(values.begin(), values.end(), [&](const std::string& val) {
            return std::find(serving.begin(), serving.end(), val) != serving.end();
          });
          if (!served) unserved.push_back(support_.device_prefix + device.first);
        }
        if (!unserved.empty()) {
          v.failures.push_back({wheel, "not every GPU is served: " + util::join(unserved, ", ") +
                                           " runs none of them (" + origin_of(ns) +
                                           " judges the highest GPU; wheelfit requires every GPU)"});
          continue;
        }
      }
      const auto f_index = index_of(features_.at(ns), feature);
      v.key.push_back({static_cast<int>(ns_index), static_cast<int>(f_index), static_cast<int>(best)});
    }
  }
  v.compatible = v.failures.empty();
  std::sort(v.key.begin(), v.key.end());
  return v;
}

int compare_variants(const std::optional<std::string>& a, const VariantOrder::Verdict* va, const std::optional<std::string>& b,
                     const VariantOrder::Verdict* vb) {
  auto group = [](const std::optional<std::string>& l) { return !l ? 2 : *l == "null" ? 1 : 0; };
  if (int ga = group(a), gb = group(b); ga != gb) return ga < gb ? -1 : 1;
  if (group(a) != 0 || !va || !vb) return 0;
  const auto n = std::min(va->key.size(), vb->key.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (va->key[i] != vb->key[i]) return va->key[i] < vb->key[i] ? -1 : 1;
  }
  if (va->key.size() != vb->key.size()) return va->key.size() > vb->key.size() ? -1 : 1;
  return *a < *b ? -1 : *a == *b ? 0 : 1;
}

FeatureValues abi_dependency_torch(std::string_view torch_public_version) {
  // variantlib's order (resolver/lib.py, _generate_version_matches): the major, then major.minor,
  // then the whole release; each value is matched as =={value}.*.
  const std::string v(torch_public_version.substr(0, torch_public_version.find('+')));
  std::vector<std::string> values;
  for (std::size_t dot = v.find('.'); dot != std::string::npos; dot = v.find('.', dot + 1)) values.push_back(v.substr(0, dot));
  if (!v.empty()) values.push_back(v);
  return {{"torch", std::move(values)}};
}

}  // namespace wheelfit::model
