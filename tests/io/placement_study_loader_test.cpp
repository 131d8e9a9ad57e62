// Placement study files (issue 20; io/placement_study_loader.hpp, docs/placement.md "Studies"):
// the shipped study, a variant case, and one positioned error per mistake.

#include "collsim/io/placement_study_loader.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

using namespace collsim;

namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = std::string(COLLSIM_SOURCE_DIR) + "/build/" + name;
  std::ofstream(path) << text;
  return path;
}

/// The message of loading `text`.
std::string error_of(const std::string& text) {
  const std::string path = write("study_error.yaml", text);
  try {
    (void)io::load_placement_study(path);
  } catch (const core::ScenarioError& e) {
    std::remove(path.c_str());
    const std::string m = e.what();
    return m.substr(m.find("study_error.yaml"));
  }
  std::remove(path.c_str());
  return "no error";
}

} // namespace

TEST_CASE("placement study: the shipped NUMA study", "[io][placement]") {
  const io::PlacementStudySpec s = io::load_placement_study(std::string(COLLSIM_SOURCE_DIR) +
                                                            "/studies/placement-numa-halo.yaml");
  CHECK(s.name == "NUMA placement of a 3D halo exchange");
  REQUIRE(s.cases.size() == 4);
  CHECK(s.cases[0].label == "ASPIRE 2A, 64 ranks");
  CHECK(s.cases[0].scenario.name == "nscc-aspire2a");
  CHECK(s.cases[0].pattern == "halo3d:4x4x4:64KiB");
  CHECK(s.cases[0].method == "anneal");
  CHECK(s.cases[3].scenario.name == "qiming");
}

TEST_CASE("placement study: a case derived from a base, with a collective", "[io][placement]") {
  const std::string path =
      write("study_variant.yaml", "name: v\ncases:\n  - label: cyclic\n    base: qiming\n"
                                  "    topology: {placement: {order: cyclic}}\n"
                                  "    collective: allreduce\n    algorithm: ring\n"
                                  "    bytes: 1MiB\n    ranks: 64\n    method: greedy\n"
                                  "    objective: hop-bytes\n    params: {segment_size: 8KiB}\n");
  const io::PlacementStudySpec s = io::load_placement_study(path);
  std::remove(path.c_str());
  REQUIRE(s.cases.size() == 1);
  const io::PlacementCase& c = s.cases[0];
  CHECK(c.scenario.name == "cyclic");
  CHECK(c.scenario.topology.system.placement.order == "cyclic");
  CHECK(c.collective == "allreduce");
  CHECK(c.algorithm == "ring");
  CHECK(c.bytes == "1MiB");
  CHECK(c.ranks == 64);
  CHECK(c.method == "greedy");
  CHECK(c.objective == "hop-bytes");
  CHECK(c.params == std::vector<std::string>{"segment_size=8KiB"});
}

TEST_CASE("placement study: each mistake is one error at its place", "[io][placement][errors]") {
  const std::string head = "name: e\ncases:\n  - label: a\n    scenario: qiming\n";
  CHECK(error_of("name: e\ncaes: []\n") ==
        "study_error.yaml:2:1: error: caes: unknown key 'caes' (did you mean 'cases'?); valid "
        "values are: name, description, cases");
  CHECK(error_of("name: e\n") ==
        "study_error.yaml:1:1: error: cases: missing required key 'cases' (the placements to "
        "study)");
  CHECK(error_of("cases: []\n") ==
        "study_error.yaml:1:8: error: cases: expected a list of cases, at least one");
  CHECK(error_of("cases:\n  - scenario: qiming\n    pattern: halo2d:2x2:1KiB\n") ==
        "study_error.yaml:2:5: error: cases[0]: missing required key 'label'");
  CHECK(error_of(head + "    pattern: halo2d:2x2:1KiB\n    workload: w.yaml\n") ==
        "study_error.yaml:3:5: error: cases[0]: a case places exactly one of 'pattern', "
        "'workload' or 'collective'");
  CHECK(error_of(head + "    pattern: halo2d:2x2:1KiB\n    method: magic\n") ==
        "study_error.yaml:6:13: error: cases[0].method: unknown placement method 'magic'; valid "
        "values are: greedy, anneal, scotch, mip, exhaustive");
  CHECK(error_of(head + "    pattern: halo2d:2x2:1KiB\n    ranks: 4\n") ==
        "study_error.yaml:6:12: error: cases[0].ranks: a pattern has its own ranks: 'ranks' goes "
        "with workload or collective");
  CHECK(error_of(head + "    collective: allreduce\n    ranks: 4\n") ==
        "study_error.yaml:3:5: error: cases[0]: a collective case needs 'bytes'");
  CHECK(error_of(head + "    collective: allreduce\n    bytes: 1KiB\n    ranks: 1\n") ==
        "study_error.yaml:7:12: error: cases[0].ranks: expected a rank count of at least 2, got "
        "'1'");
  CHECK(error_of(head + "    pattern: halo2d:2x2:1KiB\n    nodes: 2\n") ==
        "study_error.yaml:6:5: error: cases[0].nodes: a case names a whole scenario with "
        "'scenario'; to change keys of it, write 'base' instead");
  CHECK(error_of("cases:\n  - label: a\n    pattern: halo2d:2x2:1KiB\n") ==
        "study_error.yaml:2:5: error: cases[0]: a case needs 'scenario' (a preset or a file) or "
        "'base' and the keys it changes");
}
