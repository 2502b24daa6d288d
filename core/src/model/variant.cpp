// PEP 825 variants: the variants.json reader and the variant ordering (variant.hpp).
#include "wheelfit/model/variant.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
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

  // The caps (variant.hpp): `n` items of `what` ("values") where at most `cap` may be, "per" each
  // ("a feature may have").
  [[nodiscard]] std::optional<Unexpected> over_cap(const std::string& path, std::size_t n, std::size_t cap, std::string_view what,
                                                   std::string_view per) const {
    if (n <= cap) return std::nullopt;
    return fail(path, std::to_string(n) + " " + std::string(what) + ", more than the " + std::to_string(cap) + " " +
                          std::string(per) + " (a cap of this reader)");
  }

  // An array of names (`values` false: namespaces or features, `cap` of them) or of values.
  Expected<std::vector<std::string>> strings(const json::value& v, const std::string& path, bool values,
                                             std::size_t cap = kMaxVariantValues, std::string_view per = "a feature may have") const {
    if (!v.is_array()) return kind(path, "an array of strings", v);
    if (auto e = over_cap(path, v.as_array().size(), cap, values ? "values" : "names", per)) return *e;
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
    if (auto e = over_cap(path, (*obj)->size(), kMaxVariantNamespaces, "namespaces", "a properties object may name")) return *e;
    VariantProperties out;
    for (const auto& [ns, features] : **obj) {
      const std::string at = (path.empty() ? "" : path + ".") + std::string(view(ns));
      if (!valid_name(view(ns))) return fail(at, "'" + std::string(view(ns)) + "' is not a variant namespace (^[a-z0-9_]+$)");
      auto fobj = object(features, at);
      if (!fobj) return fobj.error();
      if (auto e = over_cap(at, (*fobj)->size(), kMaxVariantFeatures, "features", "a namespace may have")) return *e;
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
  auto order = r.strings(*ns, "default-priorities.namespace", false, kMaxVariantNamespaces, "a file may order");
  if (!order) return order.error();
  f.namespace_order = std::move(*order);
  if (const json::value* feat = (*pobj)->if_contains("feature")) {
    auto fobj = r.object(*feat, "default-priorities.feature");
    if (!fobj) return fobj.error();
    if (auto e = r.over_cap("default-priorities.feature", (*fobj)->size(), kMaxVariantNamespaces, "namespaces", "a file may order")) {
      return *e;
    }
    for (const auto& [k, v] : **fobj) {
      auto list = r.strings(v, "default-priorities.feature." + std::string(view(k)), false, kMaxVariantFeatures, "a namespace may have");
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
  if (auto e = r.over_cap("variants", (*vobj)->size(), kMaxVariantLabels, "labels", "a variants file may list")) return *e;
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

std::atomic<std::size_t> g_orders_built{0};

// `items` ranked by first appearance, counting every entry (a repeated one keeps its first rank
// and still takes a place): the index the first match of a linear search would give. Returns
// the next free rank.
template <class Range>
int rank_all(std::unordered_map<std::string_view, int>& ranks, const Range& items, int next) {
  for (const auto& item : items) ranks.try_emplace(item, next++);
  return next;
}

// `items` appended where missing (a list grown by append-if-absent).
template <class Range>
int rank_missing(std::unordered_map<std::string_view, int>& ranks, const Range& items, int next) {
  for (const auto& item : items)
    if (ranks.try_emplace(item, next).second) ++next;
  return next;
}

// The entry `name` of a list of (name, ...) pairs: the first, as a linear search finds it.
template <class List>
const typename List::value_type* first_named(const List& list, std::string_view name) {
  auto it = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.first == name; });
  return it == list.end() ? nullptr : &*it;
}

}  // namespace

std::size_t VariantOrder::built() noexcept { return g_orders_built.load(std::memory_order_relaxed); }

VariantOrder::VariantOrder(const VariantsFile* file, const VariantSupport& support, std::string file_problem)
    : file_(file), support_(support), file_problem_(std::move(file_problem)) {
  g_orders_built.fetch_add(1, std::memory_order_relaxed);
  if (!file_) return;
  // Namespaces in the file's order, abi_dependency last when it does not order it; a namespace
  // only a label names (a file built in code; the reader refuses one) after them.
  int rank = 0;
  for (const auto& ns : file_->namespace_order) add_namespace(ns, rank++);
  if (!namespaces_.count("abi_dependency")) add_namespace("abi_dependency", rank++);
  for (const auto& [label, properties] : file_->variants)
    for (const auto& [ns, features] : properties)
      if (!namespaces_.count(ns)) add_namespace(ns, rank++);
}

void VariantOrder::add_namespace(std::string_view ns, int rank) {
  auto [it, fresh] = namespaces_.try_emplace(ns);
  if (!fresh) return;
  Namespace& n = it->second;
  n.rank = rank;
  n.from_file = support_.overridden.count(ns) == 0 && first_named(file_->static_properties, ns);
  const auto* supplier = first_named(n.from_file ? file_->static_properties : support_.properties, ns);
  if (!supplier) return;
  n.supplied = &supplier->second;
  add_features(ns, n);
}

void VariantOrder::add_features(std::string_view ns, Namespace& n) const {
  // Features: the file's default-priorities.feature, then the supplier's, in order.
  std::unordered_map<std::string_view, int> feature_rank;
  int next = 0;
  if (auto fo = file_->feature_order.find(ns); fo != file_->feature_order.end()) next = rank_all(feature_rank, fo->second, next);
  const auto values_of = file_->value_order.find(ns);
  for (const auto& [feature, values] : *n.supplied) {
    if (feature_rank.try_emplace(feature, next).second) ++next;
    // A feature the supplier lists twice: its first list is the supported one, and what the
    // second appends to the order ranks after every value of the first.
    auto [it, fresh] = n.features.try_emplace(feature);
    if (!fresh) continue;
    Feature& f = it->second;
    f.rank = feature_rank.at(feature);
    f.supported = &values;
    if (auto d = support_.devices.find(std::string(ns) + " :: " + feature); d != support_.devices.end()) f.devices = &d->second;
    // Values: the file's default-priorities.property, then the supplier's, in order.
    std::unordered_map<std::string_view, int> ranks;
    int vnext = 0;
    if (values_of != file_->value_order.end()) {
      if (auto vo = values_of->second.find(feature); vo != values_of->second.end()) vnext = rank_all(ranks, vo->second, vnext);
    }
    rank_missing(ranks, values, vnext);
    for (const auto& v : values) f.value_rank.try_emplace(v, ranks.at(v));
  }
}

std::string VariantOrder::origin_of(std::string_view ns, const Namespace& n) const {
  if (n.from_file) return "static-properties of " + file_->source;
  auto it = support_.origin.find(ns);
  return it == support_.origin.end() ? std::string("?") : it->second;
}

std::optional<VariantFailure> VariantOrder::judge_feature(std::string_view ns, const Namespace* n, const std::string& feature,
                                                          const std::vector<std::string>& values, std::array<int, 3>& key) const {
  const auto wheel = [&] { return std::string(ns) + " :: " + feature + " :: " + util::join(values, ", "); };
  if (!n || !n->supplied) return VariantFailure{wheel(), "no provider for namespace '" + std::string(ns) + "' on this machine"};
  auto fit = n->features.find(feature);
  if (fit == n->features.end() || fit->second.supported->empty()) {
    return VariantFailure{wheel(), "not supported: " + origin_of(ns, *n) + " supports no value of '" + std::string(ns) + " :: " +
                                       feature + "'"};
  }
  const Feature& f = fit->second;
  // The best value of the feature: the first in the ordered list that the wheel has and the
  // machine supports.
  int best = -1;
  for (const auto& v : values) {
    if (auto r = f.value_rank.find(v); r != f.value_rank.end() && (best < 0 || r->second < best)) best = r->second;
  }
  if (best < 0) {
    std::string machine = "not supported: " + origin_of(ns, *n) + " supports " + util::join(*f.supported, ", ");
    if (f.devices && !f.devices->empty()) {
      std::vector<std::string> targets;
      for (const auto& [target, serving] : *f.devices) targets.push_back(target);
      machine += " (GPUs " + support_.device_prefix + util::join(targets, ", ") + ")";
    }
    return VariantFailure{wheel(), std::move(machine)};
  }
  // The every-device rule, where the provider says which values serve each device.
  if (f.devices) {
    std::vector<std::string> unserved;
    for (const auto& device : *f.devices) {  // (target, the values serving it)
      const auto& serving = device.second;
      const bool served = std::any_of(values.begin(), values.end(), [&](const std::string& val) {
        return std::find(serving.begin(), serving.end(), val) != serving.end();
      });
      if (!served) unserved.push_back(support_.device_prefix + device.first);
    }
    if (!unserved.empty()) {
      return VariantFailure{wheel(), "not every GPU is served: " + util::join(unserved, ", ") + " runs none of them (" +
                                         origin_of(ns, *n) + " judges the highest GPU; wheelfit requires every GPU)"};
    }
  }
  key = {n->rank, f.rank, best};
  return std::nullopt;
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
    auto n = namespaces_.find(ns);
    const Namespace* known = n == namespaces_.end() ? nullptr : &n->second;
    for (const auto& [feature, values] : features) {
      std::array<int, 3> key{};
      if (auto failure = judge_feature(ns, known, feature, values, key)) v.failures.push_back(std::move(*failure));
      else v.key.push_back(key);
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
