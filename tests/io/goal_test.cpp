// LogGOPSim GOAL export and import (issue 22, io/goal.hpp): every registered algorithm's schedule
// survives write_goal -> read_goal unchanged, a hand-written GOAL file imports as LogGOPSim's
// grammar means it, and every kind of bad input is one positioned error.

#include "registry_schedules.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"
#include "collsim/io/goal.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace collsim;

namespace {

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(COLLSIM_TEST_DATA_DIR) + "/goal/" + name, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string import_error(const std::string& text) {
  try {
    (void)io::read_goal(text, "t.goal");
  } catch (const core::ScheduleError& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("every registered algorithm's schedule survives GOAL export and import unchanged",
          "[io][goal][interchange]") {
  io::GoalExportOptions rates;
  rates.reduce_bandwidth = core::Bandwidth{100e9};
  rates.copy_bandwidth = core::Bandwidth{200e9};
  std::size_t round_trips = 0;
  std::size_t with_agents = 0;
  testing::for_each_registered_schedule(
      {1, 2, 5, 8, 16},
      [&](const algorithms::AlgorithmInfo& algo, std::uint32_t p, const core::Schedule& s) {
        const io::GoalImport back = io::read_goal(io::write_goal(s, rates), "round-trip.goal");
        CHECK(back.with_data);
        if (core::print_schedule(back.schedule) != core::print_schedule(s)) {
          FAIL_CHECK(fmt::format("{} {} on {} ranks changed in the GOAL round trip",
                                 core::to_string(algo.collective), algo.name, p));
        }
        ++round_trips;
        with_agents += s.header().agents.empty() ? 0 : 1;
      });
  CHECK(round_trips > 400);
  CHECK(with_agents > 0);
}

TEST_CASE("GOAL export writes what LogGOPSim reads: program order as irequires, a reduction as "
          "a calc after its receive",
          "[io][goal][interchange]") {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::allreduce;
  h.ranks = 2;
  h.bytes = core::Bytes{1000};
  h.data_bytes = 1000;
  h.algorithm = "pair";
  core::Schedule s(h);
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    const std::uint32_t sent = s.send(1 - r, {core::Buffer::data, 0, 1000});
    s.set_stream(1);
    s.recv_reduce(1 - r, {core::Buffer::data, 0, 1000}, {sent});
  }
  s.finish();
  io::GoalExportOptions rates;
  rates.reduce_bandwidth = core::Bandwidth{1e9}; // 1000 B: 1000 ns
  const std::string goal = io::write_goal(s, rates);
  CHECK(goal.find("num_ranks 2\n") != std::string::npos);
  CHECK(goal.find("rank 1 {\n// collsim:   l0: send data[0..1000) to 0\nl0: send 1000b to 0 tag "
                  "0\n// collsim:   l1: recv_reduce data[0..1000) from 0 stream 1 requires l0\n"
                  "l1: recv 1000b from 0 tag 0 cpu 1\nl1 requires l0\nl1r: calc 1000 cpu 1\n"
                  "l1r requires l1\n}\n") != std::string::npos);
  // Without its comments it is plain GOAL: the receive and its reduction are two operations.
  std::string plain;
  std::istringstream in(goal);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("// collsim:")) {
      plain += line + "\n";
    }
  }
  const io::GoalImport imported = io::read_goal(plain, "plain.goal");
  CHECK_FALSE(imported.with_data);
  CHECK(imported.schedule.op_count() == 6);
  CHECK(core::validate(imported.schedule).ok());
}

TEST_CASE("a hand-written GOAL file imports as LogGOPSim's grammar means it",
          "[io][goal][interchange]") {
  io::GoalImportOptions options;
  options.collective = core::CollectiveKind::bcast;
  options.bytes = core::Bytes{1024};
  const io::GoalImport g =
      io::read_goal(read_data("pingpong_calc.goal"), "pingpong_calc.goal", options);
  CHECK_FALSE(g.with_data);
  // requires and irequires put rank 1's receive first; each message has bytes of its own, and
  // its GOAL tag as its collsim tag.
  CHECK(core::print_schedule(g.schedule) == "collsim-schedule 1\n"
                                            "collective bcast\n"
                                            "algorithm goal\n"
                                            "ranks 3\n"
                                            "bytes 1024\n"
                                            "root 0\n"
                                            "buffers data=2048 tmp=0\n"
                                            "rank 0 {\n"
                                            "  l0: send data[0..1024) to 1 tag 7\n"
                                            "  l1: recv data[1024..2048) from 1 tag 8 requires l0\n"
                                            "  l2: calc 2000ns requires l1\n"
                                            "}\n"
                                            "rank 1 {\n"
                                            "  l0: recv data[0..1024) from 0 tag 7\n"
                                            "  l1: send data[1024..2048) to 0 tag 8 requires l0\n"
                                            "  l2: calc 500ns stream 1\n"
                                            "}\n"
                                            "rank 2 {\n"
                                            "  l0: calc 100ns stream 1\n"
                                            "}\n");
  CHECK(core::validate(g.schedule).ok());
}

TEST_CASE("bad GOAL input is one positioned error", "[io][goal][interchange][errors]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"rank 0 {\n}\n", "t.goal:1:1: error: expected 'num_ranks N' first, got 'rank'"},
      {"", "t.goal:1:1: error: no 'num_ranks N': not a GOAL schedule"},
      {"num_ranks 0\n", "t.goal:1:11: error: num_ranks 0 is not in 1..16777216"},
      {"num_ranks 2\nrank 1 {\n}\n",
       "t.goal:2:6: error: expected rank 0 (ranks come in order from 0, none missing), got rank 1"},
      {"num_ranks 1\nrank 0 {\n}\nrank 1 {\n}\n",
       "t.goal:4:6: error: rank 1 is beyond num_ranks 1"},
      {"num_ranks 2\nrank 0 {\n}\n", "t.goal:3:1: error: num_ranks is 2 but the file has 1 rank "
                                     "block"},
      {"num_ranks 1\nrank 0 {\ncalc 5\n", "t.goal:3:1: error: rank 0 has no closing '}'"},
      {"num_ranks 1\nrank 0 {\na: calc 5\na requires b\n}\n",
       "t.goal:4:12: error: label 'b' is not defined before this line (labels are per rank)"},
      {"num_ranks 1\nrank 0 {\na: calc 5\na: calc 6\n}\n",
       "t.goal:4:1: error: label 'a' is defined twice in this rank (first at line 3)"},
      {"num_ranks 2\nrank 0 {\nsend 8x to 1\n}\nrank 1 {\n}\n",
       "t.goal:3:6: error: expected a size in bytes such as 1024b, got '8x'"},
      {"num_ranks 2\nrank 0 {\nrecv 8b from -1\n}\nrank 1 {\n}\n",
       "t.goal:3:14: error: a receive from any source (-1): collsim matches each receive with one "
       "named sender"},
      {"num_ranks 2\nrank 0 {\nsend 8b to 1 cpu 1 tag 3\n}\nrank 1 {\n}\n",
       "t.goal:3:20: error: 'tag' out of place: options come in the order tag, cpu, nic"},
      {"num_ranks 2\nrank 0 {\nsend 8b to 1 cpu 256\n}\nrank 1 {\n}\n",
       "t.goal:3:18: error: cpu 256: collsim runs at most 256 issue streams per rank"},
      {"num_ranks 1\nrank 0 {\nbarrier\n}\n",
       "t.goal:3:1: error: expected send, recv or calc, got 'barrier'"},
      {"num_ranks 1\nrank 0 {\ncalc 5 }\n}\n", "t.goal:3:8: error: unexpected '}' (one item per "
                                               "line)"},
      {"num_ranks 2\nrank 0 {\nsend 8b to 2\n}\nrank 1 {\n}\n",
       "t.goal:3:1: error: rank 2 does not exist (num_ranks 2)"},
      {"num_ranks 2\nrank 0 {\na: send 8b to 1\nb: calc 1\na requires b\nb requires a\n}\nrank 1 "
       "{\nrecv 8b from 0\n}\n",
       "t.goal:3:4: error: rank 0: this operation is on a cycle of requires/irequires"},
      {"num_ranks 2\nrank 0 {\nsend 8b to 1\n}\nrank 1 {\nrecv 8b from 0\nrecv 8b from 0\n}\n",
       "t.goal:7:1: error: rank 1 receives 2 messages from rank 0, which sends it 1"},
      {"num_ranks 2\nrank 0 {\nsend 8b to 1\n}\nrank 1 {\nrecv 9b from 0\n}\n",
       "t.goal:6:1: error: this receive of 9 B is rank 1's message 1 from rank 0, whose send (line "
       "3) has 8 B (collsim matches in order per pair of ranks)"},
      // Tags past collsim's 256 fall back to matching per pair, which pairs these crosswise.
      {"num_ranks 2\nrank 0 {\nsend 8b to 1 tag 300\nsend 8b to 1 tag 301\n}\nrank 1 {\nrecv 8b "
       "from 0 tag 301\nrecv 8b from 0 tag 300\n}\n",
       "t.goal:7:1: error: tag 301 here, but the send it meets in collsim's in-order matching per "
       "pair of ranks (line 3) has tag 300: LogGOPSim would pair by tag"},
      {"num_ranks 2\nrank 0 {\nsend 8b to 1\n}\nrank 1 {\n}\n",
       "t.goal:3:1: error: rank 0 sends 1 message to rank 1, which receives 0"},
  };
  for (const auto& [text, message] : cases) {
    CAPTURE(text);
    CHECK(import_error(text) == message);
  }
}

TEST_CASE("a collsim GOAL file whose operations were edited is refused at the edit",
          "[io][goal][interchange][errors]") {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = 2;
  h.bytes = core::Bytes{64};
  h.data_bytes = 64;
  core::Schedule s(h);
  s.begin_rank(0);
  s.send(1, {core::Buffer::data, 0, 64});
  s.begin_rank(1);
  s.recv(0, {core::Buffer::data, 0, 64});
  s.finish();
  std::string goal = io::write_goal(s);
  const auto at = goal.find("send 64b to 1");
  REQUIRE(at != std::string::npos);
  goal.replace(at, 13, "send 32b to 1");
  CHECK(import_error(goal).find(": error: this operation disagrees with its `// collsim:` line "
                                "(send 64b to 1); delete the `// collsim:` lines to import the "
                                "GOAL operations alone") != std::string::npos);
  // A broken comment is reported where it is, in the GOAL file.
  std::string bad = io::write_goal(s);
  const auto data = bad.find("data[0..64) to 1");
  bad.replace(data, 16, "data[0..64 to 1");
  const std::string e = import_error(bad);
  CHECK(e.starts_with("t.goal:"));
  CHECK(e.find(": error: in its `// collsim:` line: ") != std::string::npos);
}

TEST_CASE("GOAL tags become collsim's connection tags, so crossed tags pair as in LogGOPSim",
          "[io][goal]") {
  const io::GoalImport g =
      io::read_goal("num_ranks 2\nrank 0 {\nsend 8b to 1 tag 1\nsend 16b to 1 tag 2\n}\nrank 1 "
                    "{\nrecv 16b from 0 tag 2\nrecv 8b from 0 tag 1\n}\n",
                    "t.goal");
  CHECK(g.schedule.tag(0) == 1);
  CHECK(g.schedule.tag(2) == 2);
  CHECK(core::validate(g.schedule).summary() == "");
}
