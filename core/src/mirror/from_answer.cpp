// A mirror's snapshot from an answer (mirror/mirror.hpp): its files and its views' lock files.
#include <algorithm>

#include "wheelfit/mirror/mirror.hpp"
#include "wheelfit/model/wheel.hpp"
#include "wheelfit/output/formats.hpp"
#include "wheelfit/util/log.hpp"
#include "wheelfit/util/text.hpp"

namespace wheelfit::mirror {
namespace {

/// "linux", "linux_aarch64", "windows", "macos", or the tags as written.
std::string platform_field(const std::string& plat) {
  if (plat.find("win") != std::string::npos) return "windows";
  if (plat.find("macosx") != std::string::npos) return "macos";
  if (plat.find("linux") != std::string::npos) return plat.find("aarch64") != std::string::npos ? "linux_aarch64" : "linux";
  return plat;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> name_fields(const std::string& filename) {
  auto wheel = model::WheelName::parse(filename);
  if (!wheel) return {};
  std::vector<std::string> platforms;
  for (const auto& p : wheel->platforms) platforms.push_back(p.tag);
  const std::string py = util::join(wheel->python_tags, ".");
  const std::string abi = util::join(wheel->abi_tags, ".");
  const auto digits = py.find_first_of("0123456789");
  return {{"version", wheel->version.public_version().str()},
          {"python", digits == std::string::npos ? py : py.substr(digits)},
          {"abi", abi.starts_with("cp") && abi != "cp" ? std::string("cp") : abi},
          {"platform", platform_field(util::join(platforms, "."))}};
}

void take_delivered(answer::Answer& answer, const std::vector<deliver::Delivered>& delivered) {
  for (std::size_t i = 0; i < answer.files.size() && i < delivered.size(); ++i) {
    answer.files[i].sha256 = delivered[i].sha256;
    answer.files[i].size = delivered[i].bytes;
  }
}

std::vector<File> files_of(const answer::Answer& answer, const std::vector<deliver::Delivered>& delivered) {
  std::vector<File> out;
  for (std::size_t i = 0; i < answer.files.size() && i < delivered.size(); ++i) {
    const auto& w = answer.files[i];
    const auto& f = delivered[i];
    out.push_back(File{.project = w.project,
                       .filename = f.filename,
                       .sha256 = f.sha256,
                       .size = f.bytes,
                       .anchors = w.anchors,
                       .requires_python = w.requires_python,
                       .machines = w.machines,
                       .verified = f.verified,
                       // The upstream's packages.json fields as it gave them; from the file name where it gave none.
                       .fields = w.fields.empty() ? name_fields(f.filename) : w.fields,
                       .yanked = w.yanked,
                       .yank_reason = w.yank_reason});
  }
  return out;
}

std::vector<ViewFile> view_files(const answer::Answer& answer, const answer::Machine& machine, const ViewSource& source,
                                 const std::optional<std::string>& base_url, bool torch_locked) {
  output::ViewPlace place;
  place.relative = !base_url;
  // From machines/<name>/ the shared files/ is two folders up. A URL is percent-encoded; a path
  // (PEP 751) is the file's own name.
  place.location = [&base_url](const answer::File& f) {
    return base_url ? file_href(f.filename, base_url, 0) : "../../files/" + f.filename;
  };
  place.torch_locked = torch_locked;
  if (base_url) {
    place.url = *base_url;
    while (!place.url.empty() && place.url.back() == '/') place.url.pop_back();
    place.url += "/machines/" + machine.name + "/";
  }
  const output::Target target{answer, machine, source.resolution, source.context, {}, &place};
  std::vector<ViewFile> out;
  for (const output::Format* format : output::formats().locks()) {
    // A lock file that would carry a value as something else is not written (decision 0021).
    auto text = format->write(target);
    if (!text) log::warn("mirror: machine " + machine.name + ": " + text.error().message);
    else if (!text->empty()) out.push_back({format->view_file, std::move(*text)});
  }
  return out;
}

}  // namespace wheelfit::mirror
