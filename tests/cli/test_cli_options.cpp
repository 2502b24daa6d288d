// The CLI against the option table (wheelfit/api/options.hpp): its usage text is the table's,
// the bash completion offers each command's options from the table, and bad values of the
// table's kinds and ranges are refused with exit 2 and the flag named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "support/cli_support.hpp"
#include "support/test_support.hpp"
#include "wheelfit/api/options.hpp"

namespace fs = std::filesystem;
namespace opt = wheelfit::api::options;
using namespace wheelfit::test;

namespace {

struct Command {
  const char* name;
  unsigned bit;
};
constexpr Command kCommands[] = {{"resolve", opt::kResolve}, {"download", opt::kDownload}, {"mirror", opt::kMirror},
                                 {"explain", opt::kExplain}, {"doctor", opt::kDoctor},     {"detect", opt::kDetect},
                                 {"cache", opt::kCache},     {"plugins", opt::kPlugins}, {"check", opt::kCheck}};

CliRun run_cli(const std::vector<std::string>& args) {
  return run_program("env -u WHEELFIT_USER_AGENT -u WHEELFIT_PROXY_AUTH -u WHEELFIT_RETRY_BACKOFF_MS", built_wheelfit(), args);
}

// Runs `script` in bash with the completion script sourced; its stdout.
std::string with_completion(const std::string& script) {
  const fs::path completion = source_dir() / "apps" / "wheelfit" / "completion" / "wheelfit.bash";
  const auto r = run_program("", "/bin/bash", {"-c", "source " + shell_quote(completion.string()) + "; " + script});
  REQUIRE(r.code == 0);
  return r.out;
}

std::set<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> out;
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

}  // namespace

TEST_CASE("wheelfit --help prints the option table's usage text", "[cli][options]") {
  const auto r = run_cli({"--help"});
  CHECK(r.code == 0);
  CHECK(r.out == opt::usage());
  const auto bare = run_cli({});
  CHECK(bare.code == 2);  // no command: the usage, exit 2
  CHECK(bare.out == opt::usage());
}

TEST_CASE("the bash completion offers each command's options of the option table", "[cli][options][posix]") {
  for (const Command& c : kCommands) {
    std::set<std::string> values, switches;
    for (const opt::Option& row : opt::table()) {
      if (row.flag.empty() || !(row.commands & c.bit)) continue;
      auto& into = row.kind == opt::Kind::toggle ? switches : values;
      into.emplace(row.flag);
      if (!row.alias.empty()) into.emplace(row.alias);
    }
    CAPTURE(c.name);
    const std::string name = c.name;
    CHECK(words_of(with_completion("_wheelfit_options " + name + "; echo \"$values\"")) == values);
    CHECK(words_of(with_completion("_wheelfit_options " + name + "; echo \"$switches\"")) == switches);
  }
}

TEST_CASE("the bash completion completes each option's value as the option table says", "[cli][options][posix]") {
  TempDir dir;
  fs::create_directory(dir.path() / "folder");
  write_file(dir.path() / "file.txt", "");
  for (const opt::Option& row : opt::table()) {
    if (row.flag.empty() || row.kind == opt::Kind::toggle) continue;
    for (const std::string_view flag : {row.flag, row.alias}) {
      if (flag.empty()) continue;
      CAPTURE(flag);
      const auto offered = words_of(with_completion("cd " + shell_quote(dir.path().string()) +
                                                    "; cur=''; COMPREPLY=(); _wheelfit_value " + std::string(flag) +
                                                    "; echo \"${COMPREPLY[@]}\""));
      switch (row.complete) {
        case opt::Complete::files: CHECK(offered == std::set<std::string>{"file.txt", "folder"}); break;
        case opt::Complete::dirs: CHECK(offered == std::set<std::string>{"folder"}); break;
        case opt::Complete::words: CHECK(offered == words_of(std::string(row.words))); break;
        case opt::Complete::nothing: CHECK(offered.empty()); break;
      }
    }
  }
}

TEST_CASE("wheelfit refuses a number outside its option's range, naming the flag", "[cli][options]") {
  for (const opt::Option& row : opt::table()) {
    if (row.flag.empty() || row.kind != opt::Kind::number || !(row.commands & opt::kResolve)) continue;
    const std::string flag(row.flag);
    const std::string range = " from " + std::to_string(row.lo) + " to " + std::to_string(row.hi);
    for (const std::string& value : {std::to_string(row.hi + 1), std::to_string(row.lo - 1), std::string("1x")}) {
      CAPTURE(flag, value);
      const auto r = run_cli({"resolve", "x.toml", flag, value});
      CHECK(r.code == 2);
      CHECK_THAT(r.err, Catch::Contains(flag + ": '" + value + "' is not a whole number" + range));
    }
  }
}

TEST_CASE("wheelfit refuses values of the wrong kind and options a command does not take", "[cli][options]") {
  struct Row {
    std::vector<std::string> args;
    std::string message;
  };
  const auto row = GENERATE(values<Row>({
      {{"resolve", "x.toml", "--cache-max-size", "lots"}, "--cache-max-size: "},
      {{"resolve", "x.toml", "--cert="}, "--cert: give a CA bundle (PEM) or a folder of hashed certificates"},
      {{"resolve", "x.toml", "--proxy-auth", "kerberos"}, "--proxy-auth"},
      {{"resolve", "x.toml", "--user-agent="}, "--user-agent / WHEELFIT_USER_AGENT: must be one non-empty line"},
      {{"resolve", "x.toml", "--json=yes"}, "--json: takes no value"},
      {{"resolve", "x.toml", "--index", "a", "--index", "b"}, "--index: given twice"},
      {{"explain", "w.whl", "--jobs", "4"}, "unknown option --jobs"},
      {{"explain", "w.whl", "--machine", "a", "--machine", "b"}, "--machine: given twice"},
      {{"download", "x.toml", "-o", "pixi.toml"}, "unknown option -o"},
      {{"detect", "--site", "s"}, "unknown option --site"},
      {{"cache", "info", "--jobs", "2"}, "unknown option --jobs"},
  }));
  CAPTURE(row.args);
  const auto r = run_cli(row.args);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains(row.message));
}
