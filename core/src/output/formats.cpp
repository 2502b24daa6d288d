// The output formats' table (output/formats.hpp): its rows and the lock writers' shared reading
// of the answer.
#include "wheelfit/output/formats.hpp"

#include <algorithm>
#include <filesystem>

#include "wheelfit/util/secrets.hpp"

namespace wheelfit::output {
namespace {

LockedWheel locked(const answer::File& f, const ViewPlace* view) {
  LockedWheel w{.name = f.project,
                .version = f.version,
                .filename = f.filename,
                .size = f.size,  // the index's (PEP 700) or, in a view, the fetched file's: never guessed
                .sha256 = f.sha256,
                .variant_label = f.variant_label,
                .variants_json = f.variants_json};
  if (!view) {
    w.location = util::strip_credentials(f.url);
    return w;
  }
  w.relative = view->relative;
  w.location = view->location(f);
  return w;
}

/// A view's first comment: how an installer takes the file from the view.
std::string view_note(const Target& t, std::string_view how) {
  return "The wheels of machine " + t.machine.name + " as this mirror serves them" + std::string(how);
}

Expected<std::string> write_requirements(const Target& t) {
  auto comments = lock_comments(t);
  if (t.view) {
    const std::string url = t.view->url.empty() ? std::string("<this folder's URL>") : t.view->url;
    comments.insert(comments.begin(), view_note(t, ": pip install --require-hashes --no-deps --index-url " + url +
                                                       " -r requirements.txt"));
  }
  return requirements_txt(locked_wheels(t), t.view != nullptr, comments);
}

Expected<std::string> write_pylock(const Target& t) {
  auto comments = lock_comments(t);
  if (t.view) comments.insert(comments.begin(), view_note(t, " (PEP 751): uv pip install -r pylock.toml"));
  std::optional<std::string> python;
  if (t.machine.python) python = "==" + *t.machine.python + ".*";
  return pylock_toml(locked_wheels(t), python, comments);
}

Expected<std::string> write_pixi(const Target& t) {
  if (t.view && t.view->url.empty()) return std::string();  // by version from the view's URL, which it needs
  if (!t.resolution || !t.context || !t.resolution->ok()) return unexpected(Errc::invalid_input, "nothing resolved: no manifest to write");
  if (!t.view) return pixi_manifest(*t.resolution, *t.context, t.pins);
  auto text = pixi_manifest(*t.resolution, *t.context, PixiPins{t.view->url, t.view->torch_locked});
  return text ? std::move(*text) : std::string();  // a view's pixi.toml is left out, as it always was
}

Expected<std::string> write_report(const Target& t) {
  if (!t.resolution || !t.context) return unexpected(Errc::invalid_input, "no resolution to report");
  return human_report(*t.resolution, *t.context);
}

Expected<std::string> write_json(const Target& t) {
  if (!t.resolution || !t.context) return unexpected(Errc::invalid_input, "no resolution to report");
  return json_report(*t.resolution, *t.context);
}

// pip's and PEP 751's names; any other name is a pixi manifest, as -o always wrote.
bool requirements_name(std::string_view name) { return name.starts_with("requirements") && name.ends_with(".txt"); }
bool pylock_name(std::string_view name) {
  return name == "pylock.toml" || (name.starts_with("pylock.") && name.ends_with(".toml"));
}

}  // namespace

std::vector<LockedWheel> locked_wheels(const Target& t) {
  std::vector<LockedWheel> out;
  for (const std::size_t i : t.machine.picks) out.push_back(locked(t.answer.files[i], t.view));
  if (!t.view) return out;
  for (const std::size_t i : t.machine.torch) {  // the machine's torch family, mirrored (--with-torch)
    LockedWheel w = locked(t.answer.files[i], t.view);
    w.variant_label.reset();
    w.variants_json.reset();
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<std::string> lock_comments(const Target& t) {
  std::vector<std::string> out;
  if (!t.machine.resolved) return out;
  out.push_back(t.machine.generated);
  // A view with the torch family: the pins are locked above, from the mirror.
  if (!t.view || !t.view->torch_locked) out.insert(out.end(), t.machine.unlocked.begin(), t.machine.unlocked.end());
  if (t.view && !t.machine.torch_set_aside.empty()) {
    out.push_back("--with-torch set this machine's torch family aside: " + t.machine.torch_set_aside);
  }
  return out;
}

FormatTable::FormatTable() {
  rows_.push_back({"pixi", nullptr, "pixi.toml", write_pixi, true});
  rows_.push_back({"requirements", requirements_name, "requirements.txt", write_requirements});
  rows_.push_back({"pylock", pylock_name, "pylock.toml", write_pylock});
  rows_.push_back({"report", nullptr, "", write_report});
  rows_.push_back({"json", nullptr, "", write_json});
}

const Format* FormatTable::named(std::string_view name) const {
  for (const auto& f : rows_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Expected<const Format*> FormatTable::for_output(const std::string& path, const std::optional<std::string>& format) const {
  if (format) {
    const Format* f = named(*format);
    if (f && !f->view_file.empty()) return f;
    std::string names;
    for (const auto* l : locks()) names += (names.empty() ? "" : ", ") + l->name;
    return unexpected(Errc::usage, "--format: '" + *format + "' is not one of " + names);
  }
  const std::string name = std::filesystem::path(path).filename().string();
  const Format* fallback = nullptr;
  for (const auto* l : locks()) {
    if (l->takes && l->takes(name)) return l;
    if (l->fallback && !fallback) fallback = l;
  }
  if (!fallback) return unexpected(Errc::usage, "-o: no output format takes '" + name + "'");
  return fallback;
}

std::vector<const Format*> FormatTable::locks() const {
  std::vector<const Format*> out;
  for (const auto& f : rows_) {
    if (!f.view_file.empty()) out.push_back(&f);
  }
  return out;
}

Expected<void> FormatTable::add(Format format) {
  if (format.name.empty() || named(format.name)) {
    return unexpected(Errc::invalid_input, "output format '" + format.name + "': the table has one of that name");
  }
  if (!format.write) return unexpected(Errc::invalid_input, "output format '" + format.name + "': no writer");
  rows_.push_back(std::move(format));
  return {};
}

bool FormatTable::remove(std::string_view name) {
  const auto it = std::find_if(rows_.begin(), rows_.end(), [&](const Format& f) { return f.name == name; });
  if (it == rows_.end()) return false;
  rows_.erase(it);
  return true;
}

FormatTable& formats() {
  static FormatTable table;
  return table;
}

}  // namespace wheelfit::output
