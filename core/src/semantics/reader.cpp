// The installed policy reader (reader.hpp).

#include "wheelfit/semantics/reader.hpp"

#include <atomic>

#include "wheelfit/util/read_file.hpp"

namespace wheelfit::semantics {
namespace {

std::atomic<FormatReader>& installed() {
  static std::atomic<FormatReader> reader{nullptr};
  return reader;
}

}  // namespace

Expected<void> install_reader(FormatReader reader) {
  if (!reader) return unexpected(Errc::invalid_input, "install_reader: no reader given");
  FormatReader none = nullptr;
  if (installed().compare_exchange_strong(none, reader) || none == reader) return {};
  return unexpected(Errc::invalid_input, "install_reader: another policy reader is installed already");
}

Expected<Policy> read(std::string_view text, std::string_view source, std::shared_ptr<const DeviceRules> rules) {
  const FormatReader reader = installed().load();
  if (!reader) {
    return unexpected(Errc::unsupported, std::string(source) +
                                             ": no policy format is installed (call "
                                             "wheelfit::policies::register_format() at start-up)");
  }
  return reader(text, source, std::move(rules));
}

Expected<Policy> read_file(const std::string& path, std::shared_ptr<const DeviceRules> rules) {
  auto text = util::read_file(path, kMaxFileBytes, "a policy file");
  if (!text) return text.error();
  return read(*text, path, std::move(rules));
}

}  // namespace wheelfit::semantics
