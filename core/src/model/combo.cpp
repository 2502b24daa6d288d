#include "wheelfit/model/combo.hpp"

#include <algorithm>
#include <cctype>

#include "wheelfit/util/text.hpp"

namespace wheelfit::model {
namespace {

using util::ascii_lower;

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// "2.8" (dotted, exactly major.minor) or legacy dot-less "28" / "210" (first digit = major).
std::optional<NumericVersion> parse_torch_part(std::string_view s) {
  if (s.find('.') != std::string_view::npos) {
    auto v = NumericVersion::parse(s);
    if (!v || v->parts().size() != 2) return std::nullopt;
    return *v;
  }
  if (!all_digits(s) || s.size() < 2 || s.size() > 3) return std::nullopt;
  return NumericVersion({static_cast<std::uint32_t>(s[0] - '0'),
                         static_cast<std::uint32_t>(std::stoul(std::string(s.substr(1))))});
}

}  // namespace

std::string Combo::str() const { return "cu" + cuda.str() + "/torch" + torch.str(); }

std::optional<NumericVersion> parse_cuda_tag(std::string_view tag) {
  const std::string s = ascii_lower(tag);
  if (s.size() < 4 || s.size() > 5 || s.compare(0, 2, "cu") != 0) return std::nullopt;
  std::string_view digits = std::string_view(s).substr(2);
  if (!all_digits(digits)) return std::nullopt;
  return NumericVersion({static_cast<std::uint32_t>(std::stoul(std::string(digits.substr(0, digits.size() - 1)))),
                         static_cast<std::uint32_t>(digits.back() - '0')});
}

std::optional<Combo> parse_combo_label(std::string_view local_label) {
  if (local_label.starts_with('+')) local_label.remove_prefix(1);  // "+cu128torch2.8" as printed
  const std::string s = ascii_lower(local_label);
  std::string_view v(s);
  // cu<digits>torch<torch>
  if (v.starts_with("cu")) {
    auto pos = v.find("torch");
    if (pos == std::string_view::npos) return std::nullopt;
    auto cuda = parse_cuda_tag(v.substr(0, pos));
    auto torch = parse_torch_part(v.substr(pos + 5));
    if (!cuda || !torch) return std::nullopt;
    return Combo{*cuda, *torch};
  }
  // pt<torch>cu<digits>
  if (v.starts_with("pt")) {
    auto pos = v.find("cu");
    if (pos == std::string_view::npos) return std::nullopt;
    auto torch = parse_torch_part(v.substr(2, pos - 2));
    auto cuda = parse_cuda_tag(v.substr(pos));
    if (!cuda || !torch) return std::nullopt;
    return Combo{*cuda, *torch};
  }
  return std::nullopt;
}

std::optional<TorchBuild> parse_torch_label(std::string_view local_label) {
  if (local_label.starts_with('+')) local_label.remove_prefix(1);  // "+cu128" as printed after a version
  const std::string s = ascii_lower(local_label);
  if (s == "cpu") return TorchBuild{"cpu", {}};
  // The CUDA tag is the first segment: "cu121.with.pypi.cudnn" (torch 2.1 PyPI builds) is CUDA 12.1.
  if (auto cuda = parse_cuda_tag(std::string_view(s).substr(0, s.find('.')))) return TorchBuild{"cuda", *cuda};
  if (s.starts_with("rocm")) {
    auto v = NumericVersion::parse(std::string_view(s).substr(4));
    if (v) return TorchBuild{"rocm", *v};
  }
  return std::nullopt;
}

}  // namespace wheelfit::model
