// `collsim explain`: a library's default for one call, collsim's fastest, and the regret, as users
// run it on the shipped presets; the default's time is what `collsim sim` gives for the same
// algorithm, and Open MPI's choice is what analysis::ompi41_default says.

#include "cli_test_support.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/ompi_defaults.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using collsim::testing::run_collsim;
using nlohmann::json;

json explain_json(const std::string& args) {
  const auto o = run_collsim("explain " + args + " --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  return json::parse(o.out);
}

double time_us(const json& j) {
  return j.at("time_us").get<double>();
}

/// The time `collsim sim` gives for one algorithm with parameters ("--param a=b ...").
double sim_time_us(const std::string& args) {
  const auto o = run_collsim("sim " + args + " --format json --links 0");
  INFO(o.err);
  REQUIRE(o.code == 0);
  return json::parse(o.out).at("results").at(0).at("time_us").get<double>();
}

/// What every explanation must satisfy: the ranking is sorted, starts with the fastest, the default
/// is in it at default_rank, and regret and speedup follow from the printed times.
void check_consistent(const json& j) {
  const json& ranking = j.at("ranking");
  REQUIRE(!ranking.empty());
  CHECK(ranking.size() <= 5);
  json first = ranking.at(0);
  first.erase("rank");
  CHECK(first == j.at("fastest"));
  for (std::size_t i = 1; i < ranking.size(); ++i) {
    CHECK(time_us(ranking[i - 1]) <= time_us(ranking[i]));
    CHECK(ranking[i].at("rank") == i + 1);
  }
  const double t_default = time_us(j.at("library_default"));
  const double t_best = time_us(j.at("fastest"));
  CHECK(t_best <= t_default);
  CHECK(j.at("regret_pct").get<double>() >= 0.0);
  CHECK(j.at("regret_pct").get<double>() ==
        Approx(100.0 * (t_default - t_best) / t_best).epsilon(1e-12));
  CHECK(j.at("speedup").get<double>() == Approx(t_default / t_best).epsilon(1e-12));
  const auto rank = j.at("default_rank").get<std::size_t>();
  if (rank <= ranking.size()) {
    CHECK(ranking.at(rank - 1).at("default") == true);
  }
}

} // namespace

TEST_CASE("collsim explain on one DGX A100: NCCL picks ring LL for a 1 MiB allreduce",
          "[cli][explain]") {
  const json j = explain_json("--scenario dgx-a100 --collective allreduce --ranks 8 --bytes 1MiB");
  CHECK(j.at("library") == "nccl"); // auto: the ranks are on GPUs
  CHECK(j.at("engine") == "loggp");
  CHECK(j.at("bytes") == 1048576);
  const json& def = j.at("library_default");
  CHECK(def.at("library_name") == "Ring/LL");
  CHECK(def.at("algorithm") == "nccl_ring");
  CHECK(def.at("params").at("protocol") == "ll");
  const json& nccl = def.at("nccl");
  CHECK(def.at("params").at("channels") == std::to_string(nccl.at("channels").get<int>()));
  CHECK(nccl.at("inputs").at("ranks") == 8);
  CHECK(nccl.at("inputs").at("nodes") == 1);
  CHECK(nccl.at("inputs").at("compute_capability") == 80);
  CHECK(!nccl.at("inputs").at("compute_capability_from").get<std::string>().empty());
  // NCCL's own table: the chosen pair is the cheapest eligible entry; NVLS is off on A100.
  double cheapest = 1e300;
  bool nvls_disabled = false;
  for (const json& e : nccl.at("cost_table")) {
    if (e.contains("time_us")) {
      cheapest = std::min(cheapest, e.at("time_us").get<double>());
    } else if (e.at("algorithm") == "NVLS") {
      nvls_disabled = !e.at("disabled").get<std::string>().empty();
    }
  }
  CHECK(nccl.at("estimated_us").get<double>() == cheapest);
  CHECK(nvls_disabled);
  // The simulated default is what `collsim sim` gives for the same algorithm and parameters.
  CHECK(time_us(def) ==
        Approx(sim_time_us("--scenario dgx-a100 --algorithm nccl_ring --ranks 8 --sizes 1MiB "
                           "--param protocol=ll --param channels=" +
                           def.at("params").at("channels").get<std::string>()))
            .epsilon(1e-9));
  // Only NCCL's algorithms compete, at the channel count NCCL chose.
  for (const json& r : j.at("ranking")) {
    const std::string a = r.at("algorithm");
    CHECK((a == "nccl_ring" || a == "nccl_tree"));
    CHECK(r.at("params").at("channels") == def.at("params").at("channels"));
  }
  check_consistent(j);
}

TEST_CASE("collsim sim --algorithm auto runs explain's library default, NCCL's on GPUs and Open "
          "MPI's on CPU cores",
          "[cli][explain][auto]") {
  struct Case {
    std::string scenario, collective, ranks, bytes;
  };
  for (const Case& c :
       {Case{"dgx-a100", "allreduce", "8", "1MiB"}, Case{"dgx-h100", "allreduce", "16", "1GiB"},
        Case{"dgx-h100", "allgather", "8", "64KiB"}, Case{"qiming", "allreduce", "64", "8KiB"},
        Case{"qiming", "bcast", "64", "1MiB"}}) {
    INFO(c.scenario << " " << c.collective << " " << c.ranks << " " << c.bytes);
    const json e = explain_json("--scenario " + c.scenario + " --collective " + c.collective +
                                " --ranks " + c.ranks + " --bytes " + c.bytes);
    const json& def = e.at("library_default");
    const auto o = run_collsim("sim --scenario " + c.scenario + " --collective " + c.collective +
                               " --algorithm auto --ranks " + c.ranks + " --sizes " + c.bytes +
                               " --format json --links 0");
    INFO(o.err);
    REQUIRE(o.code == 0);
    const json row = json::parse(o.out).at("results").at(0);
    CHECK(row.at("algorithm") == "auto");
    // The params column names the chosen algorithm, then its parameters as explain prints them.
    std::string expected = "algorithm=" + def.at("algorithm").get<std::string>();
    for (const auto& [name, value] : def.at("params").items()) {
      expected += "," + name + "=" + value.get<std::string>();
    }
    CHECK(row.at("params") == expected);
    CHECK(time_us(row) == Approx(time_us(def)).epsilon(1e-9));
  }
}

TEST_CASE("collsim sim --algorithm auto takes no --param and says why", "[cli][explain][auto]") {
  const auto o = run_collsim("sim --scenario dgx-a100 --algorithm auto --ranks 8 --sizes 1MiB "
                             "--param protocol=ll");
  CHECK(o.code == 2);
  CHECK(o.err.find("no algorithm of this study takes a parameter 'protocol'") != std::string::npos);
  CHECK(o.err.find("`auto` runs the library's own parameters") != std::string::npos);
}

TEST_CASE("collsim explain on one DGX H100 at 512 KiB: NCCL's ring LL is also collsim's fastest, "
          "NVLS next",
          "[cli][explain]") {
  // NCCL's model keeps Ring/LL to 512 KiB. collsim's NVLS pays NCCL's 25 us and its three-stage
  // pipeline's fill (docs/stacks.md: the reduce and gather stages wait for the one 16 KiB chunk
  // a channel, 2 x 512 KiB x 9/8 / 315 GB/s = 3.7 us more), so 16 channels of LL steps win. Until
  // 2026-12-07 NVLS came without the fill and was collsim's fastest here (a positive regret).
  const json j =
      explain_json("--scenario dgx-h100 --collective allreduce --ranks 8 --bytes 512KiB");
  CHECK(j.at("library_default").at("library_name") == "Ring/LL");
  CHECK(j.at("default_rank").get<int>() == 1);
  CHECK(j.at("regret_pct").get<double>() == 0.0);
  REQUIRE(j.at("ranking").size() > 1);
  CHECK(j.at("ranking").at(0).at("algorithm") == "nccl_ring");
  CHECK(j.at("ranking").at(1).at("algorithm") == "nvls");
  check_consistent(j);
}

TEST_CASE("collsim explain on a CPU cluster: Open MPI 4.1's fixed rule, as ompi41_default says",
          "[cli][explain]") {
  const json j = explain_json("--scenario qiming --collective allreduce --ranks 64 --bytes 8KiB");
  CHECK(j.at("library") == "ompi"); // auto: the ranks are on CPU cores
  const collsim::algorithms::Registry registry = collsim::algorithms::make_default_registry();
  collsim::analysis::OmpiCall call;
  call.ranks = 64;
  call.bytes = collsim::core::Bytes{8192};
  const auto expected = collsim::analysis::ompi41_default(call, registry);
  REQUIRE(expected.has_value());
  const json& def = j.at("library_default");
  CHECK(def.at("library") == expected->library);
  CHECK(def.at("library_name") == "ompi:3 recursive_doubling");
  CHECK(def.at("library_name") == expected->library_name);
  CHECK(def.at("reason") == "p < 128, commutative: m < 256 KiB -> 3");
  CHECK(def.at("reason") == expected->reason);
  CHECK(def.at("algorithm") == expected->algorithm);
  CHECK(!def.contains("nccl"));
  CHECK(time_us(def) ==
        Approx(sim_time_us("--scenario qiming --algorithm recursive_doubling --ranks 64 --sizes "
                           "8KiB"))
            .epsilon(1e-9));
  for (const json& r : j.at("ranking")) {
    CHECK(r.at("algorithm").get<std::string>().rfind("nccl_", 0) != 0);
  }
  check_consistent(j);
}

TEST_CASE("collsim explain finds Open MPI's 8 B allreduce on 512 CPU ranks slower than the best",
          "[cli][explain]") {
  const json j = explain_json("--scenario qiming --collective allreduce --ranks 512 --bytes 8B");
  CHECK(j.at("library_default").at("algorithm") == "reduce_bcast");
  CHECK(j.at("fastest").at("algorithm") != "reduce_bcast");
  CHECK(j.at("regret_pct").get<double>() > 0.0);
  check_consistent(j);
}

TEST_CASE("collsim explain --commutative false takes Open MPI's non-commutative rules and drops "
          "algorithms that need a commutative operation",
          "[cli][explain]") {
  const json j = explain_json("--scenario qiming --collective allreduce --ranks 64 --bytes 1MiB "
                              "--commutative false --top 100");
  CHECK(j.at("commutative") == false);
  const collsim::algorithms::Registry registry = collsim::algorithms::make_default_registry();
  collsim::analysis::OmpiCall call;
  call.ranks = 64;
  call.bytes = collsim::core::Bytes{1 << 20};
  call.commutative = false;
  const auto expected = collsim::analysis::ompi41_default(call, registry);
  REQUIRE(expected.has_value());
  CHECK(j.at("library_default").at("library_name") == expected->library_name);
  CHECK(j.at("library_default").at("reason") == expected->reason);
  CHECK(j.at("ranking").size() == j.at("candidates").get<std::size_t>());
  for (const json& r : j.at("ranking")) {
    const std::string a = r.at("algorithm");
    CHECK(a != "segmented_ring");
    CHECK(a != "rab2");
    CHECK(a != "k_reduce_scatter_allgather");
  }
  const json all = explain_json("--scenario qiming --collective allreduce --ranks 64 --bytes 1MiB "
                                "--top 100");
  CHECK(all.at("ranking").size() > j.at("ranking").size());
}

TEST_CASE("collsim explain --library both explains NCCL's and Open MPI's default, in that order",
          "[cli][explain]") {
  const json j = explain_json(
      "--scenario dgx-a100 --collective allreduce --ranks 16 --bytes 4MiB --library both");
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 2);
  CHECK(j[0].at("library") == "nccl");
  CHECK(j[1].at("library") == "ompi");
  check_consistent(j[0]);
  check_consistent(j[1]);
}

TEST_CASE("collsim explain runs on the simgrid engine", "[cli][explain]") {
  const json j = explain_json(
      "--scenario qiming --collective allreduce --ranks 64 --bytes 8KiB --engine simgrid");
  CHECK(j.at("engine") == "simgrid");
  check_consistent(j);
}

TEST_CASE("collsim explain prints the default, NCCL's cost table, the ranking and the regret",
          "[cli][explain]") {
  const auto o =
      run_collsim("explain --scenario dgx-a100 --collective allreduce --ranks 8 --bytes 1MiB");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("# collsim explain: allreduce of 1 MiB (1048576 B) over 8 ranks, scenario "
                   "'dgx-a100', engine loggp\n") == 0);
  CHECK(o.out.find("# default: NCCL 2.30.7 tuning model\n") != std::string::npos);
  CHECK(o.out.find("#   picks Ring/LL: Ring/LL is the cheapest in NCCL's cost table") !=
        std::string::npos);
  CHECK(o.out.find("  <- chosen\n") != std::string::npos);
  CHECK(o.out.find("disabled: no NVLS") != std::string::npos);
  CHECK(o.out.find("  <- default\n") != std::string::npos);
  CHECK(o.out.find("\n# regret: ") != std::string::npos);
}

TEST_CASE("collsim explain rejects bad input with one line and exit code 2", "[cli][explain]") {
  struct Case {
    const char* args;
    const char* err;
  };
  const Case cases[] = {
      {"--scenario dgx-a100 --collective allredux --ranks 8 --bytes 1MiB",
       "collsim: error: unknown collective 'allredux' (did you mean 'allreduce'?); valid values "
       "are: allreduce, reduce, bcast, allgather, reduce_scatter, alltoall, gather, scatter, "
       "barrier\n"},
      {"--scenario dgx-a100 --collective allreduce --ranks 8 --bytes 1MiB --library mvapich",
       "collsim: error: unknown library 'mvapich' (did you mean 'mpich'?); valid values are: "
       "auto, ompi, ompi5, nccl, ucc, hcoll, mpich, both\n"},
      {"--scenario dgx-a100 --collective allreduce --ranks 300 --bytes 1MiB",
       "collsim: error: the system has 32 nodes x 8 ranks per node = 256 rank slots but 300 ranks "
       "were requested\n"},
      {"--scenario dgx-a100 --collective allreduce --ranks 8 --bytes 1MiX",
       "collsim: error: --bytes: expected a size like '64 KiB', '1 MB' or '8 B', got '1MiX'\n"},
      {"--scenario dgx-a100 --collective allreduce --ranks 8,16 --bytes 1MiB",
       "collsim: error: --ranks: explain takes one rank count, got '8,16'\n"},
      {"--scenario qiming --collective allreduce --ranks 8 --bytes 1MiB --library nccl",
       "collsim: error: --library nccl: NCCL runs on GPUs, and scenario 'qiming' places its ranks "
       "on CPU cores; use --library ompi\n"},
      {"--scenario dgx-a100 --collective barrier --ranks 8 --bytes 0B --library nccl",
       "collsim: error: NCCL has no barrier; use --library ompi\n"},
      {"--scenario dgx-a100 --collective allreduce --ranks 8 --bytes 1MiB --engine analytic",
       "collsim: error: unknown engine 'analytic'; valid values are: loggp, simgrid\n"},
      {"--scenario dgx-a100 --collective allreduce --ranks 8 --bytes 1MiB --commutative maybe",
       "collsim: error: --commutative: expected true or false, got 'maybe'\n"},
      {"--scenario qiming --collective alltoall --ranks 3 --bytes 1000B",
       "collsim: error: Open MPI's alltoall of 1000 B over 3 ranks has no uniform form collsim "
       "can generate (the size must be a multiple of the ranks)\n"},
  };
  for (const Case& c : cases) {
    const auto o = run_collsim(std::string("explain ") + c.args);
    CAPTURE(c.args);
    CHECK(o.code == 2);
    CHECK(o.out.empty());
    CHECK(o.err == c.err);
  }
}

TEST_CASE("docs/library-defaults.md shows the real output of its collsim explain examples",
          "[cli][explain][docs]") {
  std::ifstream f(std::string(COLLSIM_SOURCE_DIR) + "/docs/library-defaults.md");
  REQUIRE(f);
  const std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::size_t examples = 0;
  for (auto start = doc.find("$ collsim explain "); start != std::string::npos;
       start = doc.find("$ collsim explain ", start + 1)) {
    const auto nl = doc.find('\n', start);
    const std::string command = doc.substr(start + 2, nl - start - 2);
    const auto block_end = doc.find("```", nl);
    REQUIRE(block_end != std::string::npos);
    const auto o = run_collsim(command.substr(std::string("collsim ").size()));
    CAPTURE(command);
    REQUIRE(o.code == 0);
    INFO("the example is stale: paste the command's current output into docs/library-defaults.md");
    CHECK(o.out == doc.substr(nl + 1, block_end - nl - 1));
    ++examples;
  }
  CHECK(examples == 2);
}
