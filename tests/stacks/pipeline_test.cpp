// split_messages keeps every schedule correct: cut into pieces, each registered algorithm still
// passes validate and check_semantics (odd rank counts, 1 rank, tiny and uneven sizes), and
// forwarding waits piece by piece.

#include "collsim/stacks/pipeline.hpp"

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim;

namespace {

std::uint32_t messages(const core::Schedule& s) {
  std::uint32_t n = 0;
  for (core::OpId id = 0; id < s.op_count(); ++id) {
    n += s.kind(id) == core::OpKind::send ? 1 : 0;
  }
  return n;
}

} // namespace

TEST_CASE("every algorithm cut into three pieces per message still computes its collective",
          "[stacks][pipeline]") {
  const auto registry = algorithms::make_default_registry();
  const stacks::PieceRule three = [](std::uint64_t) { return 3U; };
  std::size_t checked = 0;
  for (const auto* algo : registry.list()) {
    for (const std::uint32_t p : {1U, 2U, 3U, 5U, 8U}) {
      for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{7} * p, std::uint64_t{4096}}) {
        algorithms::Request req;
        req.collective = algo->collective;
        req.ranks = p;
        req.bytes = core::Bytes{n};
        if (!registry.refusal(*algo, req).empty()) {
          continue;
        }
        const core::Schedule s = registry.generate(*algo, req);
        const core::Schedule cut = stacks::split_messages(s, three);
        INFO(algo->name << " p=" << p << " n=" << n);
        const auto report = core::check_semantics(cut);
        CHECK(report.summary() == "");
        CHECK(cut.header() == s.header());
        ++checked;
      }
    }
  }
  CHECK(checked > 500);
}

TEST_CASE("a forwarded message waits for its own piece, not for the whole message",
          "[stacks][pipeline]") {
  // Rank 0 sends 12 bytes to 1, which forwards them to 2.
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = 3;
  h.bytes = core::Bytes{12};
  h.data_bytes = 12;
  core::Schedule s(h);
  s.begin_rank(0);
  s.send(1, {core::Buffer::data, 0, 12});
  s.begin_rank(1);
  const auto got = s.recv(0, {core::Buffer::data, 0, 12});
  s.send(2, {core::Buffer::data, 0, 12}, {got});
  s.begin_rank(2);
  s.recv(1, {core::Buffer::data, 0, 12});
  s.finish();
  const core::Schedule cut = stacks::split_messages(s, [](std::uint64_t) { return 2U; });
  REQUIRE(cut.op_count() == 8);
  CHECK(messages(cut) == 4);
  // Rank 1: recv [0,6), recv [6,12), send [0,6) after the first recv, send [6,12) after the second.
  const core::OpId b = cut.rank_begin(1);
  CHECK(cut.target(b) == core::Range{core::Buffer::data, 0, 6});
  CHECK(cut.target(b + 1) == core::Range{core::Buffer::data, 6, 6});
  CHECK(std::vector<std::uint32_t>(cut.deps(b + 2).begin(), cut.deps(b + 2).end()) ==
        std::vector<std::uint32_t>{0});
  CHECK(std::vector<std::uint32_t>(cut.deps(b + 3).begin(), cut.deps(b + 3).end()) ==
        std::vector<std::uint32_t>{1});
  CHECK(core::check_semantics(cut).ok());
}

TEST_CASE("a dependency on a message over another range waits for all its pieces",
          "[stacks][pipeline]") {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::bcast;
  h.ranks = 2;
  h.bytes = core::Bytes{8};
  h.data_bytes = 8;
  core::Schedule s(h);
  s.begin_rank(0);
  const auto a = s.send(1, {core::Buffer::data, 0, 4});
  s.send(1, {core::Buffer::data, 4, 4}, {a});
  s.begin_rank(1);
  s.recv(0, {core::Buffer::data, 0, 4});
  s.recv(0, {core::Buffer::data, 4, 4});
  s.finish();
  const core::Schedule cut = stacks::split_messages(s, [](std::uint64_t) { return 2U; });
  const core::OpId second = cut.rank_begin(0) + 2;
  CHECK(std::vector<std::uint32_t>(cut.deps(second).begin(), cut.deps(second).end()) ==
        std::vector<std::uint32_t>{0, 1});
  CHECK(std::vector<std::uint32_t>(cut.deps(second + 1).begin(), cut.deps(second + 1).end()) ==
        std::vector<std::uint32_t>{0, 1});
  CHECK(core::check_semantics(cut).ok());
}
