// packages.json read for the requested projects only (parse_packages_json(body, source, only);
// decision 0020): one pass of Boost.JSON's SAX parser over the whole body, which checks its syntax
// everywhere, reading the top level's facts and the requested records and only parsing the rest.
//
// Three readers, each falling back to the next when the document is out of the ordinary:
// 1. direct: a requested record is read straight into its PackagesJsonEntry (no DOM). Anything
//    a record of the farm never holds (a repeated key, a value of the wrong kind, a missing field,
//    a bad sha256) stops it: the record's error must read as the whole read's, so
// 2. records as DOM: each requested record is built as a json::value and read by the whole read's
//    own code (add_packages_entry), so it fails with the same message.
// Both stop when the document is unusual above the records (the top level not an object, a
// repeated top-level or project key, a project key that is empty or another key's PEP 503 name, a
// record that is not an object, packages not an object, schema or repo missing or wrong):
// 3. the whole read, which names the problem.
//
// What a record that was not asked for is checked for: its JSON syntax (every byte is parsed,
// depth limit included), that it is an object and that its key is a project name of its own.
// Its inside (torch_free, its wheels and their fields) is not checked, and its wheels are not in
// the result.

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "json_reader.hpp"
#include "page_text.hpp"
#include "packages_json_records.hpp"
#include "wheelfit/index/links.hpp"
#include "wheelfit/util/safe_text.hpp"

namespace wheelfit::index {
namespace {

namespace json = boost::json;

/// The SAX handler of readers 1 and 2 (`direct` chooses). After the parse: `stopped` when the
/// next reader must read the document; else the header's values and the records read.
class SelectHandler {
 public:
  // The DOM parser's limits (boost/json/detail/handler.hpp), so every reader fails alike.
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  SelectHandler(const std::unordered_set<std::string>& wanted, bool direct, std::string_view source)
      : wanted_(wanted), direct_(direct), source_(source) {
    st_.reset(sp_);
  }

  bool stopped = false;
  std::optional<json::value> schema, repo;
  bool saw_packages = false;
  std::vector<std::pair<std::string, json::value>> records;         ///< reader 2, in document order
  std::vector<std::pair<std::string, PackagesJsonEntry>> entries;  ///< reader 1, in document order

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }

  bool on_object_begin(json::error_code& ec) {
    if (!capturing_ && !begin_value(Kind::object, ec)) return false;
    ++depth_;
    return true;
  }
  bool on_object_end(std::size_t n, json::error_code& ec) {
    --depth_;
    if (capturing_) {
      st_.push_object(n);
      finish_if_done();
      return true;
    }
    if (in_wheel_ && depth_ == kWheelsDepth) return end_wheel(ec);
    if (in_record_ && depth_ == kPackagesDepth) {
      in_record_ = false;
      if (!saw_wheels_) return stop(ec);
      entries.emplace_back(std::move(record_key_), std::move(entry_));
    }
    return true;
  }
  bool on_array_begin(json::error_code& ec) {
    if (!capturing_ && !begin_value(Kind::array, ec)) return false;
    ++depth_;
    return true;
  }
  bool on_array_end(std::size_t n, json::error_code&) {
    --depth_;
    if (capturing_) {
      st_.push_array(n);
      finish_if_done();
    } else if (in_wheels_ && depth_ == kRecordDepth) {
      in_wheels_ = false;
    }
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    if (capturing_) st_.push_chars(s);
    else if (names_keys()) key_.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code& ec) {
    if (capturing_) {
      st_.push_key(s);
      return true;
    }
    if (!names_keys()) return true;
    key_.append(s.data(), s.size());
    return on_named_key(ec);
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code& ec) {
    if (!in_scalar_) {
      in_scalar_ = true;
      if (!capturing_ && !begin_value(Kind::string, ec)) return false;
    }
    if (capturing_) st_.push_chars(s);
    else if (collecting_) text_.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code& ec) {
    if (!scalar(Kind::string, ec, [&] { st_.push_string(s); })) return false;
    if (!collecting_) return true;
    text_.append(s.data(), s.size());
    return take_string(ec);
  }
  bool on_number_part(json::string_view, json::error_code& ec) {
    if (in_scalar_) return true;
    in_scalar_ = true;
    return capturing_ || begin_value(Kind::other, ec);
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code& ec) {
    return scalar(Kind::other, ec, [&] { st_.push_int64(i); });
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code& ec) {
    return scalar(Kind::other, ec, [&] { st_.push_uint64(u); });
  }
  bool on_double(double d, json::string_view, json::error_code& ec) {
    return scalar(Kind::other, ec, [&] { st_.push_double(d); });
  }
  bool on_bool(bool b, json::error_code& ec) {
    if (!scalar(Kind::boolean, ec, [&] { st_.push_bool(b); })) return false;
    if (in_record_ && depth_ == kRecordDepth && member_ == Member::torch_free) entry_.torch_free = b;
    return true;
  }
  bool on_null(json::error_code& ec) {
    return scalar(Kind::null, ec, [&] { st_.push_null(); });
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }

 private:
  enum class Kind { object, array, string, boolean, null, other };
  enum class Slot { schema, repo, record };
  /// What the key before a value of a record or a wheel names (reader 1).
  enum class Member { other, torch_free, wheels, filename, url, sha256 };
  // depth_ inside the top object, packages, a record, its wheels array, one wheel.
  static constexpr std::size_t kTopDepth = 1, kPackagesDepth = 2, kRecordDepth = 3, kWheelsDepth = 4, kWheelDepth = 5;

  /// Keys the handler reads itself (the rest are only parsed).
  [[nodiscard]] bool names_keys() const {
    return depth_ == kTopDepth || (depth_ == kPackagesDepth && in_packages_) ||
           (in_record_ && depth_ == kRecordDepth) || (in_wheel_ && depth_ == kWheelDepth);
  }

  /// The last event of a scalar value (a string's or number's final part, true, null).
  template <class Push>
  bool scalar(Kind kind, json::error_code& ec, Push push) {
    const bool started = std::exchange(in_scalar_, false);
    if (!started && !capturing_ && !begin_value(kind, ec)) return false;
    if (capturing_) {
      push();
      finish_if_done();
    }
    return true;
  }

  /// A key the handler reads, whole in key_.
  bool on_named_key(json::error_code& ec) {
    if (depth_ == kTopDepth) return top_keys_.insert(key_).second || stop(ec);  // the DOM keeps the last
    if (depth_ == kPackagesDepth) {
      std::string name = detail::normalize_project_name(key_);
      // Empty, or another key's project (a repeated key too): the whole read names it.
      if (name.empty() || !names_.insert(name).second) return stop(ec);
      pending_wanted_ = wanted_.count(name) != 0;
      return true;
    }
    const std::string key = std::exchange(key_, {});
    if (depth_ == kRecordDepth) {
      member_ = key == "torch_free" ? Member::torch_free : key == "wheels" ? Member::wheels : Member::other;
      if (member_ == Member::torch_free && std::exchange(saw_torch_free_, true)) return stop(ec);
      if (member_ == Member::wheels && std::exchange(saw_wheels_, true)) return stop(ec);
      return true;
    }
    for (const auto& k : wheel_keys_) {
      if (k == key) return stop(ec);
    }
    wheel_keys_.push_back(key);
    member_ = key == "filename" ? Member::filename : key == "url" ? Member::url : key == "sha256" ? Member::sha256 : Member::other;
    return true;
  }

  /// A value begins where the handler is not capturing: decides what becomes of it.
  bool begin_value(Kind kind, json::error_code& ec) {
    switch (depth_) {
      case 0: return kind == Kind::object || stop(ec);
      case kTopDepth: {
        const std::string key = std::exchange(key_, {});
        in_packages_ = key == "packages";  // another member's container: its keys are not read
        if (key == "schema") return capture(Slot::schema);
        if (key == "repo") return capture(Slot::repo);
        if (in_packages_) saw_packages = true;
        return !in_packages_ || kind == Kind::object || stop(ec);
      }
      case kPackagesDepth:
        if (!in_packages_) return true;
        if (kind != Kind::object) return stop(ec);
        if (!pending_wanted_) key_.clear();
        else if (!direct_) return capture(Slot::record);
        else begin_record();
        return true;
      default: return !in_record_ || record_value(kind, ec);
    }
  }

  /// Reader 1: a value inside a requested record.
  bool record_value(Kind kind, json::error_code& ec) {
    if (depth_ == kRecordDepth) {
      if (member_ == Member::torch_free) return kind == Kind::boolean || kind == Kind::null || stop(ec);
      if (member_ != Member::wheels) return true;
      in_wheels_ = true;
      return kind == Kind::array || stop(ec);
    }
    if (depth_ == kWheelsDepth && in_wheels_) {
      if (kind != Kind::object) return stop(ec);
      in_wheel_ = true;
      wheel_ = {};
      wheel_.fields.reserve(fields_seen_);  // one allocation: a farm's wheels all have the same fields
      wheel_keys_.clear();
      return true;
    }
    if (depth_ != kWheelDepth || !in_wheel_) return true;
    if (member_ == Member::filename || member_ == Member::url) {
      if (kind != Kind::string) return stop(ec);
    } else if (member_ == Member::sha256) {
      if (kind == Kind::null) return true;
      if (kind != Kind::string) return stop(ec);
    } else if (kind != Kind::string) {
      return true;  // a descriptive field that is not a string: not kept
    }
    collecting_ = true;
    text_.clear();
    return true;
  }

  void begin_record() {
    in_record_ = true;
    record_key_ = std::exchange(key_, {});
    entry_ = {};
    saw_torch_free_ = saw_wheels_ = false;
  }

  /// Reader 1: a string of a wheel, whole in text_.
  bool take_string(json::error_code& ec) {
    collecting_ = false;
    switch (member_) {
      case Member::filename: wheel_.filename = std::move(text_); break;
      case Member::url:
        if (!util::url_token_problem(text_).empty()) return stop(ec);  // the DOM reader names it
        wheel_.url = std::move(text_);
        break;
      case Member::sha256:
        if (!detail::is_sha256_hex(text_)) return stop(ec);
        for (char& c : text_) c = detail::to_lower_ascii(c);
        wheel_.sha256 = std::move(text_);
        break;
      default: wheel_.fields.emplace_back(wheel_keys_.back(), std::move(text_)); break;
    }
    text_ = {};
    return true;
  }

  /// Reader 1: a wheel's object closed.
  bool end_wheel(json::error_code& ec) {
    in_wheel_ = false;
    const auto has = [&](std::string_view k) { return std::find(wheel_keys_.begin(), wheel_keys_.end(), k) != wheel_keys_.end(); };
    if (!has("filename") || !has("url")) return stop(ec);
    // A relative url (a mirror's "files/x.whl") is relative to packages.json itself.
    if (wheel_.url.find("://") == std::string::npos) wheel_.url = resolve_url(source_, wheel_.url);
    fields_seen_ = wheel_.fields.size();
    entry_.wheels.push_back(std::move(wheel_));
    return true;
  }

  bool capture(Slot slot) {
    capturing_ = true;
    capture_depth_ = depth_;
    slot_ = slot;
    return true;
  }

  /// After a captured value's event: when the value is whole, it goes to its slot.
  void finish_if_done() {
    if (depth_ != capture_depth_) return;
    capturing_ = false;
    json::value v = st_.release();
    st_.reset(sp_);
    if (slot_ == Slot::schema) schema = std::move(v);
    else if (slot_ == Slot::repo) repo = std::move(v);
    else records.emplace_back(std::exchange(key_, {}), std::move(v));
  }

  bool stop(json::error_code& ec) {
    stopped = true;
    ec = json::error::syntax;  // any error: the parse ends here and the next reader reads the body
    return false;
  }

  const std::unordered_set<std::string>& wanted_;
  const bool direct_;
  const std::string_view source_;
  json::storage_ptr sp_ = json::make_shared_resource<json::monotonic_resource>();
  json::value_stack st_;
  std::size_t depth_ = 0;          ///< containers open around the next event
  std::size_t capture_depth_ = 0;  ///< depth_ where the captured value began
  bool capturing_ = false;
  Slot slot_ = Slot::schema;
  bool in_scalar_ = false;    ///< between a string's or number's first part and its last
  bool in_packages_ = false;  ///< the open container at depth 2 is the packages object
  bool pending_wanted_ = false;
  std::string key_;
  std::unordered_set<std::string> top_keys_, names_;
  // Reader 1's record.
  bool in_record_ = false, in_wheels_ = false, in_wheel_ = false, collecting_ = false;
  bool saw_torch_free_ = false, saw_wheels_ = false;
  Member member_ = Member::other;
  std::string record_key_, text_;
  std::vector<std::string> wheel_keys_;
  std::size_t fields_seen_ = 0;  ///< the last wheel's fields
  PackagesJsonEntry entry_;
  PackagesJsonWheel wheel_;
};

/// Reader 1 (`direct`) or 2: the result, or nullopt when the next reader must read the body.
std::optional<Expected<PackagesJson>> read_selected(std::string_view body, std::string_view source,
                                                    const std::unordered_set<std::string>& wanted, bool direct) {
  // The DOM parser's steps (json::stream_parser::write, then finish), so a syntax error, a
  // truncated body or nesting past the depth limit fails at the same offset with the same words.
  json::basic_parser<SelectHandler> parser(json::parse_options{}, wanted, direct, source);
  json::error_code ec;
  const std::size_t consumed = parser.write_some(true, body.data(), body.size(), ec);
  if (!ec && consumed < body.size()) ec = json::error::extra_data;
  if (!ec) parser.write_some(false, nullptr, 0, ec);
  SelectHandler& h = parser.handler();
  if (h.stopped) return std::nullopt;
  const detail::JsonReporter r{source};
  if (ec) return Expected<PackagesJson>(r.invalid_json(consumed, ec));
  if (!h.saw_packages || !h.schema) return std::nullopt;

  auto repo = detail::read_packages_header(&*h.schema, h.repo ? &*h.repo : nullptr, r);
  if (!repo) return std::nullopt;
  PackagesJson result;
  result.repo = std::move(*repo);
  for (auto& [key, entry] : h.entries) result.packages.emplace(detail::normalize_project_name(key), std::move(entry));
  for (const auto& [key, value] : h.records) {
    if (auto added = detail::add_packages_entry(result, key, value, r); !added) return Expected<PackagesJson>(added.error());
  }
  result.build_lookup();
  return Expected<PackagesJson>(std::move(result));
}

}  // namespace

Expected<PackagesJson> parse_packages_json(std::string_view body, std::string_view source,
                                           const std::vector<std::string>& only) {
  std::unordered_set<std::string> wanted;
  for (const auto& n : only) wanted.insert(detail::normalize_project_name(n));
  if (auto read = read_selected(body, source, wanted, true)) return std::move(*read);
  if (auto read = read_selected(body, source, wanted, false)) return std::move(*read);
  auto whole = parse_packages_json(body, source);
  if (!whole) return whole;
  std::erase_if(whole->packages, [&](const auto& kv) { return wanted.count(kv.first) == 0; });
  whole->build_lookup();
  return whole;
}

}  // namespace wheelfit::index
