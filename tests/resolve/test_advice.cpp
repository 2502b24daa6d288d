// The advice search, --combo, --no-fallback and a fresh environment's tier 1 (resolver.hpp).
#include <catch2/catch.hpp>

#include "support/backend_support.hpp"
#include "support/resolve_support.hpp"
#include "wheelfit/resolve/resolver.hpp"

using namespace wheelfit;
using resolve::Suggestion;
using resolve::TierOutcome;

namespace {

const std::string x86_advice = "cp312-cp312-manylinux_2_28_x86_64.whl";

// "pkg-1.0+<label>-cp312-cp312-manylinux_2_28_x86_64.whl" for each label.
std::vector<test::Anchor> wheels(const std::string& pkg, const std::vector<std::string>& labels,
                                 const std::string& tags = x86_advice) {
  std::vector<test::Anchor> out;
  for (const auto& l : labels) out.push_back({pkg + "-1.0+" + l + "-" + tags});
  return out;
}

model::Combo combo(const std::string& text) {
  auto c = semantics::parse_combo_str(test::cuda_policy().notation(), text);
  REQUIRE(c);
  return *c;
}

std::string str(const model::Combo& c) { return test::cuda_policy().combo_str(c); }

struct Run {
  index::IndexSnapshot snap;
  config::Workspace ws;
  machine::Machine m;
  std::optional<model::Combo> requested = {};
  bool fallback = true;

  resolve::Resolution go() const {
    resolve::Inputs in{ws, m, test::cuda_policy(), snap, "cuda"};
    in.combo = requested;
    in.fallback = fallback;
    auto r = resolve::resolve(in);
    REQUIRE(r);
    return std::move(*r);
  }
};

std::vector<std::string> combos_of(const std::vector<Suggestion>& s) {
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back(str(x.combo) + (x.python ? " py" + x.python->str() : ""));
  return out;
}

}  // namespace

TEST_CASE("advice: when only a newer torch covers everything, it is suggested with what to install", "[resolve][advice]") {
  // torch 2.8.0+cu128 (tier 1 and the x86_64 fallback are both cu12.8/torch2.8); a is built for
  // 2.10 and 2.11, b only for 2.10: cu12.8/torch2.10 covers both.
  Run run{test::snapshot({{"a", wheels("a", {"cu128torch2.10", "cu128torch2.11"})}, {"b", wheels("b", {"cu128torch2.10"})}}),
          test::workspace({"a", "b"}), test::h100()};
  const auto r = run.go();
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.advice);
  REQUIRE(combos_of(r.advice->suggestions).at(0) == "cu12.8/torch2.10");
  const auto& s = r.advice->suggestions[0];
  CHECK(s.kind == Suggestion::Kind::combo);
  CHECK(s.covers == std::vector<std::string>{"a (cp312)", "b (cp312)"});
  REQUIRE(s.pins.size() == 3);
  CHECK(s.pins[0].name == "torch");
  CHECK(s.pins[0].version == "==2.10.*");
  CHECK(s.pins[0].index == "https://download.pytorch.org/whl/cu128");
  CHECK_FALSE(s.driver_upgrade);
  CHECK(r.advice->near_misses.empty());
}

TEST_CASE("advice: best first by newest torch, then the line closest to the machine's", "[resolve][advice]") {
  // The machine's line is cu12.8 (its torch's label).
  Run run{test::snapshot({{"a", wheels("a", {"cu126torch2.10", "cu128torch2.10", "cu130torch2.9", "cu128torch2.8"})},
                          {"b", wheels("b", {"cu126torch2.10", "cu128torch2.10", "cu130torch2.9"})}}),
          test::workspace({"a", "b"}), test::h100()};
  const auto r = run.go();
  REQUIRE(r.advice);
  const auto got = combos_of(r.advice->suggestions);
  REQUIRE(got.size() >= 3);
  CHECK(std::vector<std::string>(got.begin(), got.begin() + 3) ==
        std::vector<std::string>{"cu12.8/torch2.10", "cu12.6/torch2.10", "cu13.0/torch2.9"});
}

TEST_CASE("advice: a combo the driver cannot run is suggested with the driver upgrade it needs", "[resolve][advice]") {
  Run run{test::snapshot({{"a", wheels("a", {"cu130torch2.10"})}}), test::workspace({"a"}),
          test::h100_with({{"driver_line", "12.8"}, {"driver_version", ""}})};
  const auto r = run.go();
  REQUIRE(r.advice);
  REQUIRE(r.advice->suggestions.size() >= 1);
  const auto& s = r.advice->suggestions[0];
  CHECK(str(s.combo) == "cu13.0/torch2.10");
  REQUIRE(s.driver_upgrade);
  CHECK(s.driver_upgrade->machine == "driver supports CUDA 12.8");
}

TEST_CASE("advice: combos the driver runs come before those that need a driver upgrade", "[resolve][advice]") {
  // Issue 20 item 20: torch 2.7.1+cu126 on a CUDA 12.6 driver; cu13.0/torch2.9 has the newer
  // torch but needs a driver upgrade, so cu12.6/torch2.8 (and any other line the driver runs) is
  // listed first, and the report's first way out says so.
  const auto facts = test::Facts{{"torch", "2.7.1+cu126"}, {"driver_line", "12.6"}, {"driver_version", ""}};
  struct Row {
    std::string name;
    std::vector<std::string> labels;   // a's combos
    std::vector<std::string> order;    // the suggestions, best first
  };
  const std::vector<Row> rows{
      {"a newer torch behind an upgrade", {"cu130torch2.9", "cu126torch2.8"}, {"cu12.6/torch2.8", "cu13.0/torch2.9"}},
      {"two that run, one that does not", {"cu130torch2.10", "cu126torch2.8", "cu128torch2.9"},
       {"cu12.8/torch2.9", "cu12.6/torch2.8", "cu13.0/torch2.10"}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Run run{test::snapshot({{"a", wheels("a", row.labels)}}), test::workspace({"a"}), test::h100_with(facts)};
    const auto r = run.go();
    REQUIRE_FALSE(r.ok());
    REQUIRE(r.advice);
    const auto got = combos_of(r.advice->suggestions);
    REQUIRE(got.size() >= row.order.size());
    CHECK(std::vector<std::string>(got.begin(), got.begin() + static_cast<long>(row.order.size())) == row.order);
    for (std::size_t i = 0; i < row.order.size(); ++i) {
      INFO(row.order[i]);
      CHECK(r.advice->suggestions[i].driver_upgrade.has_value() == (i + 1 == row.order.size()));
    }
  }
}

TEST_CASE("advice: another Python is a suggestion of its own, after the combos that keep it", "[resolve][advice]") {
  const std::string py311 = "cp311-cp311-manylinux_2_28_x86_64.whl";
  auto pages = wheels("a", {"cu128torch2.10"}, py311);
  for (auto& w : wheels("a", {"cu128torch2.9"})) pages.push_back(w);
  Run run{test::snapshot({{"a", pages}}), test::workspace({"a"}), test::h100()};
  const auto r = run.go();
  REQUIRE(r.advice);
  const auto got = combos_of(r.advice->suggestions);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == "cu12.8/torch2.9");             // keeps Python 3.12
  CHECK(got[1] == "cu12.8/torch2.10 py3.11");      // the newer torch needs 3.11
  CHECK(r.advice->suggestions[1].kind == Suggestion::Kind::python);
  CHECK(r.advice->suggestions[1].covers == std::vector<std::string>{"a (cp311)"});
}

TEST_CASE("advice: when no combo covers everything, each near miss names the package that rules it out",
          "[resolve][advice]") {
  struct Row {
    std::string name;
    std::vector<std::pair<std::string, std::vector<test::Anchor>>> pages;
    std::string missing;  // in the first near miss
  };
  const std::vector<Row> rows{
      {"b is built for aarch64 only",
       {{"a", wheels("a", {"cu128torch2.10"})},
        {"b", wheels("b", {"cu128torch2.10"}, "cp312-cp312-manylinux_2_28_aarch64.whl")}},
       "b (cp312): no cu12.8/torch2.10 wheel for cp312 on linux"},
      {"b is not on the index",
       {{"a", wheels("a", {"cu128torch2.10"})}},
       "b (cp312): not published on this index"},
      {"b needs a newer glibc",
       {{"a", wheels("a", {"cu128torch2.10"})},
        {"b", wheels("b", {"cu128torch2.10"}, "cp312-cp312-manylinux_2_39_x86_64.whl")}},
       "b (cp312): no cu12.8/torch2.10 wheel for cp312 on linux"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Run run{test::snapshot(row.pages), test::workspace({"a", "b"}), test::h100()};
    const auto r = run.go();
    REQUIRE(r.advice);
    CHECK(r.advice->suggestions.empty());
    REQUIRE_FALSE(r.advice->near_misses.empty());
    const auto& miss = r.advice->near_misses[0];
    CHECK(str(miss.combo) == "cu12.8/torch2.10");
    REQUIRE(miss.missing.size() == 1);
    CHECK_THAT(miss.missing[0], Catch::StartsWith(row.missing));
  }
}

TEST_CASE("--combo is the only tier, judged like any other; --no-fallback skips tier 2", "[resolve][advice][combo]") {
  const auto snap = test::snapshot({{"a", wheels("a", {"cu126torch2.7", "cu130torch2.10"})}});
  struct Row {
    std::string name;
    std::optional<std::string> requested;
    bool fallback;
    std::vector<std::pair<std::string, std::string>> facts;
    bool ok;
    std::string tier0, reason;  // the first tier's name and (a part of) its reason
  };
  const std::vector<Row> rows{
      {"a combo the index has", "cu12.6/torch2.7", true, {}, true, "requested", ""},
      {"a combo the driver cannot run", "cu13.0/torch2.10", true, {{"driver_line", "12.8"}, {"driver_version", ""}}, false,
       "requested", "driver supports CUDA 12.8"},
      {"a combo the index lacks", "cu12.8/torch2.9", true, {}, false, "requested", "not covered: a (cp312)"},
      {"no fallback", std::nullopt, false, {}, false, "bootstrap", "not covered"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Run run{snap, test::workspace({"a"}), test::h100_with(row.facts)};
    if (row.requested) run.requested = combo(*row.requested);
    run.fallback = row.fallback;
    const auto r = run.go();
    CHECK(r.ok() == row.ok);
    CHECK(r.tiers.at(0).tier == row.tier0);
    if (row.requested) {
      CHECK(r.tiers.size() == 1);
      CHECK(r.tiers[0].chosen == "--combo " + *row.requested);
      if (row.ok) CHECK(str(*r.combo) == *row.requested);
    } else {
      REQUIRE(r.tiers.size() == 2);
      CHECK(r.tiers[1].reason == "--no-fallback");
    }
    CHECK_THAT(r.tiers[0].reason, Catch::Contains(row.reason));
  }
}

TEST_CASE("parse_combo_str reads the backend's notation and refuses anything else", "[resolve][advice][combo]") {
  const auto& n = test::cuda_policy().notation();
  CHECK(str(*semantics::parse_combo_str(n, "cu12.8/torch2.8")) == "cu12.8/torch2.8");
  CHECK(str(*semantics::parse_combo_str(n, "CU13.0/Torch2.10")) == "cu13.0/torch2.10");
  for (const std::string bad : {"", "cu12.8", "12.8/torch2.8", "cu12.8/2.8", "cu12.x/torch2.8", "cu12.8/torch2", "cu12.8/torch2.8.1",
                                "rocm6.3/torch2.7"}) {
    INFO(bad);
    auto c = semantics::parse_combo_str(n, bad);
    REQUIRE_FALSE(c);
    CHECK(c.error().code == Errc::invalid_input);
    CHECK_THAT(c.error().message, Catch::Contains("cu12.8/torch2.8"));
  }
}

TEST_CASE("a fresh environment: tier 1 is the newest combo this machine runs that covers everything", "[resolve][advice]") {
  struct Row {
    std::string name;
    std::vector<std::pair<std::string, std::string>> facts;
    std::string chosen;  // the tier-1 combo
  };
  const auto snap = test::snapshot({{"a", wheels("a", {"cu126torch2.9", "cu128torch2.10", "cu130torch2.11"})},
                                    {"b", wheels("b", {"cu126torch2.9", "cu128torch2.10", "cu130torch2.11"})}});
  const std::vector<Row> rows{
      {"a CUDA 13 driver runs the newest", {{"torch", ""}}, "cu13.0/torch2.11"},
      {"a CUDA 12.8 driver cannot run cu13.0", {{"torch", ""}, {"driver_line", "12.8"}, {"driver_version", ""}},
       "cu12.8/torch2.10"},
      {"a Turing GPU (7.5) is covered by every list", {{"torch", ""}, {"gpus", "7.5"}}, "cu13.0/torch2.11"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Run run{snap, test::workspace({"a", "b"}), test::h100_with(row.facts)};
    const auto r = run.go();
    REQUIRE(r.ok());
    CHECK(*r.tier == "bootstrap");
    CHECK(str(*r.combo) == row.chosen);
    CHECK_THAT(r.tiers[0].chosen, Catch::StartsWith("no torch installed"));
    CHECK_FALSE(r.advice);  // resolved: no advice
  }
}
