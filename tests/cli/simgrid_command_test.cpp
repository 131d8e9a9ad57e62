// `--engine simgrid`, `--links`, `--trace` and `topology export --format simgrid` as users run
// them.

#include "cli_test_support.hpp"

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using collsim::testing::run_collsim;
using collsim::testing::slurp;

} // namespace

TEST_CASE("collsim sim --engine simgrid gives loggp's closed form on the textbook platform",
          "[cli][simgrid]") {
  const auto o = run_collsim("sim --scenario scenarios/textbook.yaml --algorithm ring --ranks 16 "
                             "--sizes 64MiB --engine simgrid --format json");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  const auto& row = j.at("results").at(0);
  CHECK(row.at("engine") == "simgrid");
  // The README's closed form: 2(p-1)a + 2(p-1)/p n b + (p-1)/p n g = 15788.6 us.
  CHECK(row.at("time_us").get<double>() == Approx(15788.6).epsilon(1e-5));
  // A full mesh has no shared links to report.
  CHECK(j.at("link_loads").at(0).at("links").empty());
}

TEST_CASE("collsim sim --engine simgrid lists the most loaded links", "[cli][simgrid]") {
  const auto o = run_collsim("sim --scenario juwels-booster --algorithm ring --ranks 16 "
                             "--sizes 64MiB --engine simgrid --links 3");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("# most loaded links: ring, 16 ranks, 64 MiB, engine simgrid") !=
        std::string::npos);
  // Four nodes of four GPUs: the ring leaves every node through one NIC, at its 25 GB/s.
  CHECK(o.out.find("     ib       25.00") != std::string::npos);
  std::size_t shown = 0;
  for (std::size_t p = o.out.find("     ib       25.00"); p != std::string::npos;
       p = o.out.find("     ib       25.00", p + 1)) {
    ++shown;
  }
  CHECK(shown == 3);
}

TEST_CASE("collsim sim --trace writes a Chrome trace with both engines", "[cli][trace]") {
  for (const std::string engine : {"loggp", "simgrid"}) {
    const std::string path = "build-trace-" + engine + ".json";
    const auto o = run_collsim("sim --scenario juwels-booster --algorithm ring --ranks 8 --sizes "
                               "1MiB --engine " +
                               engine + " --trace " + path + " --links 0");
    INFO(o.err);
    REQUIRE(o.code == 0);
    const std::string full = std::string(COLLSIM_SOURCE_DIR) + "/" + path;
    const auto j = nlohmann::json::parse(slurp(full));
    std::remove(full.c_str());
    CHECK(j.at("otherData").at("engine") == engine);
    CHECK(j.at("otherData").at("ranks") == 8);
    std::size_t ops = 0;
    std::size_t links = 0;
    double end = 0.0;
    for (const auto& e : j.at("traceEvents")) {
      if (e.at("ph") == "X") {
        (e.at("pid") == 1 ? ops : links) += 1;
        end = std::max(end, e.at("ts").get<double>() + e.at("dur").get<double>());
      }
    }
    // Ring allreduce: 2(p-1) steps of a send and a receive-reduce or receive per rank.
    CHECK(ops == 8 * 2 * 7 * 2);
    CHECK(links > 0);
    CHECK(end == Approx(j.at("otherData").at("time_us").get<double>()).epsilon(1e-6));
  }
}

TEST_CASE("collsim sim --trace wants exactly one run", "[cli][trace]") {
  const auto o = run_collsim("sim --scenario textbook --algorithm ring --ranks 8,16 --sizes 1MiB "
                             "--trace t.json");
  CHECK(o.code == 2);
  CHECK(o.err.find("--trace records one run: give one algorithm, one --ranks value and one "
                   "--sizes value (got 1 algorithms, 2 rank counts, 1 sizes)") !=
        std::string::npos);
}

TEST_CASE("collsim topology export --format simgrid writes a platform smpirun loads",
          "[cli][simgrid]") {
  const auto o = run_collsim("topology export scenarios/textbook.yaml --ranks 4 --format simgrid");
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("<zone id=\"collsim\" routing=\"Full\">") != std::string::npos);
  CHECK(o.out.find(
            "<link id=\"up0\" bandwidth=\"10000000000Bps\" latency=\"1.9999999999999999e-06s\"") !=
        std::string::npos);
  CHECK(
      o.out.find("<route src=\"p3\" dst=\"p2\" symmetrical=\"NO\"><link_ctn id=\"up3\"/><link_ctn "
                 "id=\"dn2\"/></route>") != std::string::npos);
}
