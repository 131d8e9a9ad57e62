// core/layout.hpp and core/imbalance.hpp: the v-collectives' displacements, their checks, the
// text form of counts, and the counts and skew specs as users write them (issue 21).

#include "collsim/core/errors.hpp"
#include "collsim/core/imbalance.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/verify.hpp"

#include <catch2/catch.hpp>

using namespace collsim::core;

namespace {

/// A 3-rank alltoallv by direct exchange with these sendcounts (row-major), as a generator
/// writes it: copy the own block, receive from everyone, send to everyone.
Schedule direct_alltoallv(const std::vector<std::uint64_t>& counts, bool swap_offsets = false) {
  ScheduleHeader h;
  h.collective = CollectiveKind::alltoall;
  h.ranks = 3;
  h.counts = counts;
  h.bytes = Bytes{counts_bytes(h.collective, 3, counts)};
  const BlockLayout lay(h);
  h.data_bytes = lay.data_bytes();
  Schedule s(h);
  for (Rank r = 0; r < 3; ++r) {
    s.begin_rank(r);
    s.copy({Buffer::data, lay.send_offset(r, r), lay.count(r, r)},
           {Buffer::data, lay.recv_offset(r, r), lay.count(r, r)});
    for (Rank q = 0; q < 3; ++q) {
      if (q != r) {
        std::uint64_t at = lay.recv_offset(q, r);
        if (swap_offsets && r == 2 && q == 0) {
          at = lay.recv_offset(1, r); // rank 0's bytes land where rank 1's belong
        }
        s.recv(q, {Buffer::data, at, lay.count(q, r)});
      }
    }
    for (Rank q = 0; q < 3; ++q) {
      if (q != r) {
        s.send(q, {Buffer::data, lay.send_offset(r, q), lay.count(r, q)});
      }
    }
  }
  s.finish();
  return s;
}

} // namespace

TEST_CASE("BlockLayout: blocks at the counts' displacements, uniform at block_range",
          "[core][layout]") {
  const BlockLayout v(CollectiveKind::allgather, 4, 10, {3, 0, 5, 2});
  CHECK(v.varying());
  CHECK(v.block(0) == std::pair<std::uint64_t, std::uint64_t>{0, 3});
  CHECK(v.block(1) == std::pair<std::uint64_t, std::uint64_t>{3, 0});
  CHECK(v.block(2) == std::pair<std::uint64_t, std::uint64_t>{3, 5});
  CHECK(v.block(3) == std::pair<std::uint64_t, std::uint64_t>{8, 2});
  CHECK(v.data_bytes() == 10);
  const BlockLayout u(CollectiveKind::allgather, 4, 10, {});
  CHECK_FALSE(u.varying());
  CHECK(u.block(1) == block_range(10, 4, 1));
}

TEST_CASE("BlockLayout: alltoallv send and receive displacements", "[core][layout]") {
  // Row i = what rank i sends to ranks 0, 1, 2.
  const std::vector<std::uint64_t> c{1, 2, 3, //
                                     4, 0, 6, //
                                     7, 8, 0};
  const BlockLayout l(CollectiveKind::alltoall, 3, 15, c);
  CHECK(l.input_bytes() == 15); // the largest row (rank 2's 7 + 8 + 0)
  CHECK(l.count(1, 2) == 6);
  CHECK(l.send_offset(1, 2) == 4);
  CHECK(l.send_offset(2, 1) == 7);
  // Rank 2's output, after the input region: from rank 0 (3 bytes), rank 1 (6), rank 2 (0).
  CHECK(l.recv_offset(0, 2) == 15 + 0);
  CHECK(l.recv_offset(1, 2) == 15 + 3);
  CHECK(l.recv_offset(2, 2) == 15 + 9);
  CHECK(l.output_bytes() == 12); // column sums 12, 10, 9
  CHECK(l.data_bytes() == 27);
}

TEST_CASE("counts_problem: one clear reason per misfit", "[core][layout]") {
  CHECK(counts_problem(CollectiveKind::allgather, 3, 6, {1, 2, 3}).empty());
  CHECK(counts_problem(CollectiveKind::allgather, 3, 6, {}).empty());
  CHECK(counts_problem(CollectiveKind::allreduce, 3, 6, {1, 2, 3}) ==
        "allreduce has no v-variant: per-rank counts apply to allgather, gather, scatter, "
        "reduce_scatter and alltoall");
  CHECK(counts_problem(CollectiveKind::gather, 3, 6, {1, 2}) ==
        "2 counts for gatherv on 3 ranks, which takes 3");
  CHECK(counts_problem(CollectiveKind::alltoall, 2, 6, {1, 2, 3}) ==
        "3 counts for alltoallv on 2 ranks, which takes 4 (ranks x ranks)");
  CHECK(counts_problem(CollectiveKind::scatter, 3, 7, {1, 2, 3}) ==
        "the counts add up to 6 bytes but the size is 7 bytes");
  CHECK(counts_problem(CollectiveKind::alltoall, 2, 4, {1, 2, 3, 0}) ==
        "the counts add up to 3 bytes in the largest row but the size is 4 bytes");
  CHECK(counts_problem(CollectiveKind::allgather, 1, 1ULL << 50, {1ULL << 50}) ==
        "a count is larger than 2^48 bytes");
}

TEST_CASE("the symbolic checker knows alltoallv: a correct exchange passes, a misplaced block "
          "fails",
          "[core][layout][verify]") {
  const std::vector<std::uint64_t> c{1, 2, 3, 4, 0, 6, 7, 8, 0};
  const auto ok = check_semantics(direct_alltoallv(c));
  INFO(ok.summary());
  CHECK(ok.ok());
  const auto bad = check_semantics(direct_alltoallv(c, true));
  REQUIRE_FALSE(bad.ok());
  INFO(bad.summary());
  CHECK(bad.summary().find("rank 2") != std::string::npos);
}

TEST_CASE("counts survive the schedule text form, and bad counts are refused at their line",
          "[core][layout][schedule]") {
  const Schedule s = direct_alltoallv({0, 0, 5, 0, 0, 5, 0, 0, 5});
  const std::string text = print_schedule(s);
  CHECK(text.find("\ncounts 0 0 5 0 0 5 0 0 5\n") != std::string::npos);
  CHECK(parse_schedule(text) == s);
  std::string wrong = text;
  wrong.replace(wrong.find("counts 0 0 5"), 12, "counts 0 0 6");
  try {
    (void)parse_schedule(wrong, "x.txt");
    FAIL("expected a ScheduleError");
  } catch (const ScheduleError& e) {
    CHECK(std::string(e.what()).starts_with("x.txt:7:"));
    CHECK(std::string(e.what()).find("the counts add up to 6 bytes in the largest row but the "
                                     "size is 5 bytes") != std::string::npos);
  }
}

TEST_CASE("collective names: v-names and neighbourhood names", "[core][layout]") {
  const auto v = parse_collective_name("alltoallv");
  REQUIRE(v);
  CHECK(v->kind == CollectiveKind::alltoall);
  CHECK(v->v);
  CHECK_FALSE(v->neighbor);
  CHECK(parse_collective_name("reduce_scatterv")->kind == CollectiveKind::reduce_scatter);
  CHECK(parse_collective_name("allgather")->v == false);
  const auto n = parse_collective_name("neighbor_allgatherv");
  REQUIRE(n);
  CHECK(n->kind == CollectiveKind::alltoall);
  CHECK(n->neighbor);
  CHECK(parse_collective_name("neighbour_alltoall")->neighbor);
  CHECK_FALSE(parse_collective_name("allreducev"));
  CHECK_FALSE(parse_collective_name("neighbor_bcast"));
  CHECK(collective_display_name(CollectiveKind::gather, true) == "gatherv");
}

TEST_CASE("counts specs parse, and each mistake gets one message", "[core][imbalance]") {
  const auto z = parse_counts_spec("zipf:1.2");
  REQUIRE(z.ok());
  CHECK(z.value.kind == CountsSpec::Kind::zipf);
  CHECK(z.value.parameter == 1.2);
  const auto n = parse_counts_spec("normal:0.5,seed=7");
  REQUIRE(n.ok());
  CHECK(n.value.seed == 7);
  const auto c = parse_counts_spec("cart:4x2x8,periodic");
  REQUIRE(c.ok());
  CHECK(c.value.dims == std::vector<std::uint32_t>{4, 2, 8});
  CHECK(c.value.periodic);
  CHECK(parse_counts_spec("one:3").value.rank == 3);
  CHECK(parse_counts_spec("moe:hist.txt").value.path == "hist.txt");
  CHECK(parse_counts_spec("zipf").error ==
        "zipf needs a number from 0 to 100 after ':' (the exponent, e.g. zipf:1.2), got ''");
  CHECK(parse_counts_spec("cart:8x0").error ==
        "cart needs the grid's dims, each at least 1, e.g. cart:8x8 or cart:4x4x4, got '8x0'");
  CHECK(parse_counts_spec("pareto:2").error ==
        "unknown counts 'pareto': expected uniform, zipf:S, normal:CV, one:R, file:PATH, "
        "moe:PATH, cart:DxD[,periodic], graph:PATH or sparse:D");
  CHECK(parse_counts_spec("zipf:1,sead=2").error ==
        "unknown counts option 'sead' (the only option is seed=N)");
  CHECK(parse_counts_spec("uniform,periodic").error ==
        "unknown counts option 'periodic' (the only option is seed=N)");
}

TEST_CASE("skew specs parse, and each mistake gets one message", "[core][imbalance]") {
  const auto l = parse_skew_spec("late:1ms@5");
  REQUIRE(l.ok());
  CHECK(l.value.kind == SkewSpec::Kind::late);
  CHECK(l.value.time.value == Approx(1e-3));
  CHECK(l.value.late_rank == 5);
  const auto k = parse_skew_spec("late:250us,k=4,seed=2");
  REQUIRE(k.ok());
  CHECK(k.value.late_ranks == 4);
  CHECK(parse_skew_spec("uniform:100us").value.kind == SkewSpec::Kind::uniform);
  CHECK(parse_skew_spec("late:1parsec").error ==
        "late needs a duration from 0 to 1 hour after ':', e.g. late:1ms, got '1parsec'");
  CHECK(parse_skew_spec("late:1ms@5,k=2").error ==
        "bad value '2' for k (k=K needs late:T without @R and K >= 1)");
  CHECK(parse_skew_spec("early:1ms").error ==
        "unknown skew 'early': expected none, uniform:T, normal:T, late:T[@R], late:T,k=K or "
        "file:PATH");
}
