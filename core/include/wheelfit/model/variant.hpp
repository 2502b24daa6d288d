#pragma once
// PEP 825 wheel variants: a package version's variant properties (its index-level
// {name}-{version}-variants.json), the properties a machine supports, and PEP 825's "Variant
// ordering": which variants are compatible and which of them is preferred.
//
// A property is "namespace :: feature :: value". A variant is compatible when, for every
// (namespace, feature) of its properties, at least one of its values is supported; compatible
// variants are ordered by their features' best supported values (namespace, feature, value
// priorities); the null variant (no properties) comes after every other, a non-variant wheel after
// it. Supported values come from three places, in this precedence for a namespace: the machine's
// own `variant_properties` (a profile or override), the file's `static-properties` (schema 0.0.3),
// the native providers (the backend's, and the core's `abi_dependency`).

#include <array>
#include <cstddef>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "wheelfit/util/expected.hpp"

namespace wheelfit::model {

/// Features and their values, in order: [(feature, [value, ...]), ...].
using FeatureValues = std::vector<std::pair<std::string, std::vector<std::string>>>;
/// Namespaces and their features, in order.
using VariantProperties = std::vector<std::pair<std::string, FeatureValues>>;

/// "ns :: feature :: value" for each property, in order.
std::vector<std::string> property_strings(const VariantProperties& p);
/// The values of (ns, feature), or nullptr.
const std::vector<std::string>* find_values(const VariantProperties& p, std::string_view ns, std::string_view feature);
/// Whether `ns` appears.
bool has_namespace(const VariantProperties& p, std::string_view ns);

/// The schema versions this reader follows: 0.0.x (with providers and static-properties, what
/// indexes served through 2026) and 0.1.x (PEP 825 as provisionally accepted).
struct VariantSchema {
  int major = 0, minor = 0, patch = 0;
  [[nodiscard]] std::string str() const;
  [[nodiscard]] bool known() const noexcept { return major == 0 && (minor == 0 || minor == 1); }
};

/// What one properties object or variants file may hold (parse_variants_json,
/// parse_variant_properties): namespaces per object (and in default-priorities.namespace),
/// features per namespace, values per feature, labels per file. More is Errc::invalid_input
/// naming the file, the JSON path and the cap. Far above any index's file (PyTorch's: a dozen
/// labels, three namespaces, a few dozen values a feature), they bound what a file can ask of a
/// resolve (decision 0024).
inline constexpr std::size_t kMaxVariantNamespaces = 64;
inline constexpr std::size_t kMaxVariantFeatures = 64;
inline constexpr std::size_t kMaxVariantValues = 256;
inline constexpr std::size_t kMaxVariantLabels = 1024;

/// One package version's {name}-{version}-variants.json.
struct VariantsFile {
  std::string source;                ///< where it was read from (URL), for messages
  VariantSchema schema;
  std::vector<std::string> namespace_order;  ///< default-priorities.namespace
  /// default-priorities.feature / .property (0.0.x): priorities that come before the supported ones.
  std::map<std::string, std::vector<std::string>, std::less<>> feature_order;
  std::map<std::string, std::map<std::string, std::vector<std::string>, std::less<>>, std::less<>> value_order;
  /// static-properties (0.0.x): the supported values of ahead-of-time namespaces, in priority order.
  VariantProperties static_properties;
  /// label -> its properties.
  std::map<std::string, VariantProperties, std::less<>> variants;
};

/// Parses a variants.json body. Malformed JSON, a wrong shape, an invalid namespace, feature,
/// value or label are Errc::invalid_input naming `source` and the JSON path; a "$schema" whose
/// version this reader does not know is Errc::unsupported naming the version (the package's
/// variants are then incompatible; its null variant stays compatible).
Expected<VariantsFile> parse_variants_json(std::string_view body, std::string_view source);

/// Parses {"<namespace>": {"<feature>": ["<value>", ...]}} (a profile's variant_properties, a
/// provider's "properties"), keeping the order written. Errors name `source` and the JSON path.
Expected<VariantProperties> parse_variant_properties(std::string_view json_text, std::string_view source);
/// The same object as compact JSON text.
std::string variant_properties_json(const VariantProperties& p);

/// What a machine supports, as providers computed it.
struct VariantSupport {
  /// Supported values, best first, features in priority order.
  VariantProperties properties;
  /// namespace -> who supplied it ("backend cuda", "profile m.toml", "torch 2.9.0").
  std::map<std::string, std::string, std::less<>> origin;
  /// "ns :: feature" -> per device target, the values that serve that one device: a variant must
  /// then serve every device with one of its values (wheelfit's every-GPU rule).
  std::map<std::string, std::vector<std::pair<std::string, std::vector<std::string>>>, std::less<>> devices;
  /// Namespaces set by the machine's own variant_properties: a file's static-properties do not
  /// replace them.
  std::set<std::string, std::less<>> overridden;
  std::string device_prefix;         ///< the backend's, before targets in messages ("sm ")
  std::string torch;                 ///< the torch `abi_dependency :: torch` came from ("" none)
  std::vector<std::string> notes;    ///< how lists were computed, facts that were unknown

  /// Replaces (or adds) namespace `ns` with `features`, supplied by `who`.
  void set_namespace(const std::string& ns, FeatureValues features, const std::string& who);
};

/// One property a variant needs that the machine does not support.
struct VariantFailure {
  std::string wheel;    ///< "nvidia :: sm_arch :: 100_real, 120_real"
  std::string machine;  ///< "supported: 90_real, 90_virtual (backend cuda)"
};

/// The ordering context of one package version: the file's priorities merged with what is
/// supported (PEP 825 steps 1-3), with a map for each lookup. Build once per (file, support),
/// in time linear in the file's priorities and the supported lists; judge each label against it
/// (linear in the label's properties). `file` and `support` must outlive it. Immutable once
/// built: judge() may be called from several threads.
class VariantOrder {
 public:
  /// `file` may be nullptr (no variants file, or an unreadable one): then only the null variant
  /// is compatible and every other label fails with `file_problem`.
  VariantOrder(const VariantsFile* file, const VariantSupport& support, std::string file_problem = {});

  /// How one label fares: compatible (with a rank to order by) or the properties that fail.
  struct Verdict {
    bool compatible = false;
    std::vector<VariantFailure> failures;
    /// The sorted best-value property keys (PEP 825 steps 4-6); empty for null.
    std::vector<std::array<int, 3>> key;
    std::vector<std::string> properties;  ///< the label's properties ("ns :: feature :: value")
  };
  [[nodiscard]] Verdict judge(std::string_view label) const;

  /// How many orders this process has built (every constructor call, from any thread): a
  /// diagnostic, so that a test and the benchmark can tell an order built once per (file,
  /// support) from one built per wheel.
  [[nodiscard]] static std::size_t built() noexcept;

 private:
  /// A supported feature: its rank among its namespace's features, and each supported value's
  /// rank in the value order (the file's default-priorities.property, then the supplier's order).
  struct Feature {
    int rank = 0;
    const std::vector<std::string>* supported = nullptr;  ///< the supplier's list (for messages)
    std::unordered_map<std::string_view, int> value_rank;  ///< supported values only
    /// The every-device rule's lists (VariantSupport::devices), or nullptr.
    const std::vector<std::pair<std::string, std::vector<std::string>>>* devices = nullptr;
  };
  /// A namespace: its rank in the namespace order and, when something supplies it, its features.
  struct Namespace {
    int rank = 0;
    bool from_file = false;  ///< supplied by the file's static-properties, not the providers
    const FeatureValues* supplied = nullptr;  ///< nullptr: no supplier
    std::unordered_map<std::string_view, Feature> features;
  };
  const VariantsFile* file_;
  const VariantSupport& support_;
  std::string file_problem_;
  std::unordered_map<std::string_view, Namespace> namespaces_;

  void add_namespace(std::string_view ns, int rank);
  void add_features(std::string_view ns, Namespace& n) const;
  [[nodiscard]] std::string origin_of(std::string_view ns, const Namespace& n) const;
  /// The failure of (ns, feature) with the wheel's `values`, or nullopt with its key in `key`.
  [[nodiscard]] std::optional<VariantFailure> judge_feature(std::string_view ns, const Namespace* n, const std::string& feature,
                                                            const std::vector<std::string>& values, std::array<int, 3>& key) const;
};

/// PEP 825's order between two wheels' variants (labels; nullopt = a non-variant wheel), given
/// their verdicts (both compatible): negative when `a` is preferred. Variants by key (a lower key
/// at the first difference wins; when one is a prefix of the other, the longer wins), then by
/// label; null after every variant; a non-variant wheel after null.
int compare_variants(const std::optional<std::string>& a, const VariantOrder::Verdict* va,
                     const std::optional<std::string>& b, const VariantOrder::Verdict* vb);

/// The core's own provider, `abi_dependency :: torch`: the values a torch version supports, in
/// variantlib's order, least specific first ("2", "2.9", "2.9.0"); a local label is ignored.
FeatureValues abi_dependency_torch(std::string_view torch_public_version);

}  // namespace wheelfit::model
