// The composition pass (algorithms/compose.hpp) on its own: rank maps, data and scratch offsets,
// block maps, per-rank chaining, exact counts, and the helpers the hierarchical algorithms share.

#include "../../algorithms/compose.hpp"
#include "hierarchy_test_support.hpp"

#include <catch2/catch.hpp>
#include <memory>

using namespace collsim;
using algorithms::compose::Composition;
using algorithms::compose::Placement;

namespace {

constexpr core::Range data(std::uint64_t offset, std::uint64_t length) {
  return {core::Buffer::data, offset, length};
}
constexpr core::Range tmp(std::uint64_t offset, std::uint64_t length) {
  return {core::Buffer::tmp, offset, length};
}

/// Two ranks: rank 0 sends data[0..4) to rank 1, which receives it into tmp[0..4) and reduces it
/// into data[0..4).
std::shared_ptr<const core::Schedule> send_and_reduce() {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::reduce;
  h.ranks = 2;
  h.bytes = core::Bytes{4};
  h.root = 1;
  h.data_bytes = 4;
  h.tmp_bytes = 4;
  core::Schedule s(h);
  s.begin_rank(0);
  s.send(1, data(0, 4));
  s.begin_rank(1);
  const auto got = s.recv(0, tmp(0, 4));
  s.reduce(tmp(0, 4), data(0, 4), {got});
  s.finish();
  return std::make_shared<const core::Schedule>(std::move(s));
}

core::ScheduleHeader header(core::CollectiveKind c, std::uint32_t ranks, std::uint64_t bytes) {
  core::ScheduleHeader h;
  h.collective = c;
  h.ranks = ranks;
  h.bytes = core::Bytes{bytes};
  h.data_bytes = bytes;
  return h;
}

std::shared_ptr<const core::Schedule> generate(core::CollectiveKind c, const std::string& name,
                                               std::uint32_t ranks, std::uint64_t bytes,
                                               core::Rank root = 0) {
  const auto reg = algorithms::make_default_registry();
  return std::make_shared<const core::Schedule>(
      reg.generate(reg.find(c, name), testing::request(c, ranks, bytes, root)));
}

} // namespace

TEST_CASE("a placement maps sub ranks to full ranks and shifts data and scratch ranges",
          "[algorithms][compose]") {
  Composition c(4);
  c.add(Placement{send_and_reduce(), {3, 1}, 8, 16, {}});
  CHECK(c.tmp_bytes() == 20);
  const core::Schedule s = c.build(header(core::CollectiveKind::reduce, 4, 12));
  CHECK(s.header().tmp_bytes == 20);
  CHECK(s.op_count() == 3);
  CHECK(s.rank_end(0) == s.rank_begin(0));
  CHECK(s.rank_end(2) == s.rank_begin(2));
  const core::Op send = s.op(s.rank_begin(3));
  CHECK(send.kind == core::OpKind::send);
  CHECK(send.peer == 1);
  CHECK(send.target == data(8, 4));
  const core::Op recv = s.op(s.rank_begin(1));
  CHECK(recv.kind == core::OpKind::recv);
  CHECK(recv.peer == 3);
  CHECK(recv.target == tmp(16, 4));
  const core::Op red = s.op(s.rank_begin(1) + 1);
  CHECK(red.kind == core::OpKind::reduce);
  CHECK(red.source == tmp(16, 4));
  CHECK(red.target == data(8, 4));
  CHECK(red.deps == std::vector<std::uint32_t>{0});
}

TEST_CASE("a placement's first operations wait for what the rank's previous placement left "
          "unfinished",
          "[algorithms][compose]") {
  // Placement A on ranks {0, 1}, then B on ranks {1, 0} (roles swapped), then A again on {2, 1}.
  Composition c(3);
  c.add(Placement{send_and_reduce(), {0, 1}, 0, 0, {}});
  c.add(Placement{send_and_reduce(), {1, 0}, 0, 4, {}});
  c.add(Placement{send_and_reduce(), {2, 1}, 4, 8, {}});
  const core::Schedule s = c.build(header(core::CollectiveKind::reduce, 3, 8));
  CHECK(s.header().tmp_bytes == 12);
  // Rank 0: send (A), then recv (B) waiting for the send, then B's reduce waiting for its recv.
  REQUIRE(s.rank_end(0) - s.rank_begin(0) == 3);
  CHECK(s.op(s.rank_begin(0) + 1).kind == core::OpKind::recv);
  CHECK(s.op(s.rank_begin(0) + 1).deps == std::vector<std::uint32_t>{0});
  CHECK(s.op(s.rank_begin(0) + 2).deps == std::vector<std::uint32_t>{1});
  // Rank 1: recv, reduce (A); send (B) waits for A's sink, the reduce; recv (A again) waits for
  // B's sink, the send; its reduce waits for that recv only.
  REQUIRE(s.rank_end(1) - s.rank_begin(1) == 5);
  CHECK(s.op(s.rank_begin(1) + 2).kind == core::OpKind::send);
  CHECK(s.op(s.rank_begin(1) + 2).deps == std::vector<std::uint32_t>{1});
  CHECK(s.op(s.rank_begin(1) + 3).deps == std::vector<std::uint32_t>{2});
  CHECK(s.op(s.rank_begin(1) + 4).deps == std::vector<std::uint32_t>{3});
  CHECK(s.op(s.rank_begin(1) + 4).target == data(4, 4));
  CHECK(s.op(s.rank_begin(1) + 4).source == tmp(8, 4));
  // Rank 2 starts with nothing to wait for.
  CHECK(s.op(s.rank_begin(2)).deps.empty());
  CHECK(c.counts().ops == s.op_count());
  CHECK(c.counts().deps == s.dep_count());
  CHECK(core::validate(s).ok());
}

TEST_CASE("a reduce-scatter composed with an allgather is a correct, race-free allreduce",
          "[algorithms][compose]") {
  using core::CollectiveKind;
  for (const std::uint32_t p : {2U, 5U, 8U}) {
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{1003}}) {
      CAPTURE(p, n);
      std::vector<core::Rank> all(p);
      for (core::Rank r = 0; r < p; ++r) {
        all[r] = p - 1 - r; // sub rank r on full rank p-1-r
      }
      for (const auto& [rs, ag] : {std::pair{"ring", "ring"}, std::pair{"pairwise", "bruck"},
                                   std::pair{"recursive_halving", "linear"}}) {
        Composition c(p);
        const auto first = generate(CollectiveKind::reduce_scatter, rs, p, n);
        const auto second = generate(CollectiveKind::allgather, ag, p, n);
        c.add(Placement{first, all, 0, 0, {}});
        c.add(Placement{second, all, 0, first->header().tmp_bytes, {}});
        const core::Schedule s = c.build(header(CollectiveKind::allreduce, p, n));
        INFO(rs << " + " << ag);
        CHECK(c.counts().ops == s.op_count());
        CHECK(c.counts().deps == s.dep_count());
        CHECK(core::check_semantics(s).summary() == "");
      }
    }
  }
}

TEST_CASE("a block map stretches whole blocks onto shards of different sizes",
          "[algorithms][compose]") {
  using core::CollectiveKind;
  // A linear gather of 3 blocks of 2 bytes to rank 0, mapped onto shards of 5, 2 and 1 bytes.
  Composition c(3);
  c.add(Placement{generate(CollectiveKind::gather, "linear", 3, 6), {0, 1, 2}, 0, 0, {0, 5, 7, 8}});
  CHECK(c.problem() == "");
  const core::Schedule s = c.build(header(CollectiveKind::gather, 3, 8));
  const auto t = testing::traffic(s);
  CHECK(t[0].recv_bytes == 3);
  CHECK(t[1].send_lengths == std::vector<std::uint64_t>{2});
  CHECK(t[2].send_lengths == std::vector<std::uint64_t>{1});
  CHECK(s.op(s.rank_begin(1)).target == data(5, 2));
  CHECK(s.op(s.rank_begin(2)).target == data(7, 1));
  // Equally spaced bounds are a plain shift.
  Composition shift(3);
  shift.add(
      Placement{generate(CollectiveKind::gather, "linear", 3, 6), {0, 1, 2}, 0, 0, {4, 6, 8, 10}});
  CHECK(shift.placements()[0].block_bounds.empty());
  CHECK(shift.placements()[0].data_offset == 4);
}

TEST_CASE("a block map refuses sub-schedules that split blocks or use scratch",
          "[algorithms][compose]") {
  using core::CollectiveKind;
  Composition scratch(3);
  scratch.add(
      Placement{generate(CollectiveKind::allgather, "bruck", 3, 6), {0, 1, 2}, 0, 0, {0, 5, 7, 8}});
  CHECK(scratch.problem() == "bruck uses scratch space, which cannot be mapped onto nodes "
                             "holding different numbers of ranks");
  // Two blocks of 2 bytes; rank 0 sends the middle two bytes, half of each block.
  core::ScheduleHeader h = header(CollectiveKind::allgather, 2, 4);
  h.algorithm = "halves";
  core::Schedule halves(h);
  halves.begin_rank(0);
  halves.send(1, data(1, 2));
  halves.begin_rank(1);
  halves.recv(0, data(1, 2));
  halves.finish();
  Composition split(2);
  split.add(Placement{
      std::make_shared<const core::Schedule>(std::move(halves)), {0, 1}, 0, 0, {0, 3, 4}});
  CHECK(split.problem() == "halves splits blocks, which cannot be mapped onto nodes holding "
                           "different numbers of ranks");
}

TEST_CASE("node helpers: leaders, shards and the consecutive-ranks rule", "[algorithms][compose]") {
  const core::Topology topo = testing::cluster_topology(10);
  const auto req = testing::request(core::CollectiveKind::gather, 10, 1000, 6, &topo);
  const auto layout = algorithms::detail::node_layout(req);
  REQUIRE(layout.nodes() == 3);
  CHECK(algorithms::compose::leaders(layout, 6) == std::vector<core::Rank>{0, 6, 8});
  CHECK(algorithms::compose::leaders(layout, 0) == std::vector<core::Rank>{0, 4, 8});
  CHECK(algorithms::compose::node_bounds(layout, 1003) ==
        std::vector<std::uint64_t>{0, 403, 803, 1003});
  CHECK(algorithms::compose::consecutive_nodes_refusal(layout) == "");
  CHECK_FALSE(algorithms::compose::one_rank_per_node(layout));
  algorithms::detail::NodeLayout odd;
  odd.members = {{0, 2}, {1, 3}};
  odd.node = {0, 1, 0, 1};
  odd.local = {0, 0, 1, 1};
  CHECK(algorithms::compose::consecutive_nodes_refusal(odd) ==
        "the ranks of each node must be consecutive (a node holds ranks 0, 2), so that a node's "
        "blocks form one shard");
  CHECK(algorithms::compose::one_rank_per_node(
      algorithms::detail::node_layout(testing::request(core::CollectiveKind::gather, 5, 10))));
}

TEST_CASE("every level choice names a registered algorithm of its collective",
          "[algorithms][compose]") {
  const auto reg = algorithms::make_default_registry();
  for (const auto c : core::kAllCollectives) {
    for (const auto& choice : algorithms::compose::level_choices(c)) {
      INFO(core::to_string(c) << " " << choice.name);
      const algorithms::AlgorithmInfo info = choice.describe();
      CHECK(info.name == choice.name);
      CHECK(info.collective == c);
      CHECK(reg.try_find(c, choice.name) != nullptr);
    }
  }
  const auto p =
      algorithms::compose::level_param("inter", core::CollectiveKind::gather, "linear", "help");
  CHECK(p.choices == std::vector<std::string>{"linear", "binomial", "linear_sync"});
  CHECK(p.default_value == 0);
  CHECK(p.max == 2);
}
