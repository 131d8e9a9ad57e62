#include "algorithm_test_support.hpp"
#include "collsim/algorithms/registry.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace collsim;

namespace {
algorithms::Request alltoall_request(std::uint32_t p, std::uint64_t n) {
  algorithms::Request req = testing::allreduce_request(p, n);
  req.collective = core::CollectiveKind::alltoall;
  return req;
}
core::Schedule bruck(std::uint32_t p, std::uint64_t n) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "bruck"), alltoall_request(p, n));
}
algorithms::Request radix_request(std::uint32_t p, std::uint64_t n, std::int64_t radix) {
  algorithms::Request req = alltoall_request(p, n);
  req.params["radix"] = radix;
  return req;
}
core::Schedule k_brucks(std::uint32_t p, std::uint64_t n, std::int64_t radix) {
  const auto reg = algorithms::make_default_registry();
  return reg.generate(reg.find(core::CollectiveKind::alltoall, "mpich:k_brucks"),
                      radix_request(p, n, radix));
}

/// The peers rank r receives from, in program order.
std::vector<core::Rank> recv_peers(const core::Schedule& s, core::Rank r) {
  std::vector<core::Rank> out;
  for (core::OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
    if (s.kind(id) == core::OpKind::recv) {
      out.push_back(s.peer(id));
    }
  }
  return out;
}

/// The most messages on one chain of dependencies (a receive waits for its matching send): the
/// number of latencies on the critical path when local copies are free.
std::uint32_t message_rounds(const core::Schedule& s) {
  const core::Matching m = core::match_messages(s);
  std::vector<std::uint32_t> depth(s.op_count(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (core::Rank r = 0; r < s.ranks(); ++r) {
      const core::OpId base = s.rank_begin(r);
      for (core::OpId id = base; id < s.rank_end(r); ++id) {
        std::uint32_t d = 0;
        for (const std::uint32_t dep : s.deps(id)) {
          d = std::max(d, depth[base + dep]);
        }
        if (s.kind(id) == core::OpKind::recv && m.partner[id] != core::kNoMatch) {
          d = std::max(d, depth[m.partner[id]] + 1);
        }
        if (d != depth[id]) {
          depth[id] = d;
          changed = true;
        }
      }
    }
  }
  return depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end());
}
} // namespace

TEST_CASE("bruck alltoall sends lg p messages of n/2 bytes to r + 2^k on a power of two",
          "[algorithms][alltoall][bruck]") {
  const std::uint32_t p = 8;
  const auto t = testing::traffic(bruck(p, 64));
  for (core::Rank r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 1) % p, (r + 2) % p, (r + 4) % p});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{32, 32, 32});
  }
}

TEST_CASE("bruck alltoall sends the blocks whose index has bit k set, on any p",
          "[algorithms][alltoall][bruck]") {
  // p = 5: round 0 carries blocks 1, 3; round 1 blocks 2, 3; round 2 block 4.
  const auto t = testing::traffic(bruck(5, 50));
  for (const auto& rank : t) {
    CHECK(rank.send_lengths == std::vector<std::uint64_t>{20, 20, 10});
  }
  const auto reg = algorithms::make_default_registry();
  const auto c =
      reg.cost(reg.find(core::CollectiveKind::alltoall, "mpich:brucks"), alltoall_request(5, 50));
  REQUIRE(c.has_value());
  CHECK(c->alpha_terms == 3.0);
  CHECK(c->beta_bytes == 50.0);
}

TEST_CASE("bruck alltoall reserves exactly its packing copies and dependencies",
          "[algorithms][alltoall][bruck]") {
  // p = 4, rank r != 0: own block, 2 rotation copies; round 0: 2 packs, send, recv, 2 unpacks;
  // round 1: pack, send, recv, unpack; 3 output copies = 16 operations (rank 0: one rotation copy).
  // Dependencies: round 0 packs 2 each (1 on rank 0), send 2, unpacks 2 each; round 1 pack 2,
  // send 1, recv 2, unpack 2; outputs 1 each = 20 (rank 0: 18).
  const core::Schedule s = bruck(4, 40);
  CHECK(s.op_count() == 15 + 3 * 16);
  CHECK(s.dep_count() == 18 + 3 * 20);
  CHECK(s.header().tmp_bytes == 120);
  CHECK(bruck(1, 7).op_count() == 1);
}

TEST_CASE("bruck alltoall refuses rank counts whose schedule would not fit, before generating",
          "[algorithms][alltoall][bruck]") {
  // The p - 1 output copies per rank alone make p(p-1) operations: 40000 ranks need more than
  // 2^30. The refusal names the exact count, computed in closed form.
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "bruck");
  algorithms::Request req = alltoall_request(40000, 40000);
  CHECK(reg.refusal(algo, req) ==
        "the schedule would need 4801279999 operations; a schedule holds at most 1073741824");
  for (const std::uint32_t p : {2U, 3U, 5U, 13U, 64U}) {
    CAPTURE(p);
    req = alltoall_request(p, 0);
    CHECK(reg.refusal(algo, req).empty());
  }
}

TEST_CASE("radix-3 bruck alltoall on 9 ranks sends digit d of phase j to r + d 3^j, three blocks "
          "each",
          "[algorithms][alltoall][bruck]") {
  // Phase 0 (delta 1): digit 1 = blocks {1, 4, 7}, digit 2 = {2, 5, 8}; phase 1 (delta 3): digit 1
  // = {3, 4, 5}, digit 2 = {6, 7, 8}. (k-1) ceil(log_3 9) = 4 messages of 3 blocks of 10 bytes.
  const core::Schedule s = k_brucks(9, 90, 3);
  const auto t = testing::traffic(s);
  // Rank 4: to 4+1, 4+2, 4+3, 4+6 = 1 (mod 9); from 4-1, 4-2, 4-3, 4-6 = 7 (mod 9).
  CHECK(t[4].send_peers == std::vector<core::Rank>{5, 6, 7, 1});
  CHECK(recv_peers(s, 4) == std::vector<core::Rank>{3, 2, 1, 7});
  for (core::Rank r = 0; r < 9; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers ==
          std::vector<core::Rank>{(r + 1) % 9, (r + 2) % 9, (r + 3) % 9, (r + 6) % 9});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{30, 30, 30, 30});
    CHECK(t[r].recvs == 4);
  }
  // A (90) and two slots per digit of MPICH's 3^(2-1) = 3 blocks: 90 + 2 * 2 * 30.
  CHECK(s.header().tmp_bytes == 210);
}

TEST_CASE("radix-3 bruck alltoall on 10 ranks sends no message for a digit value without blocks",
          "[algorithms][alltoall][bruck]") {
  // p - 1 = 9 = 100 in base 3: three phases (delta 1, 3, 9). Phase 2 has blocks only for digit 1
  // (block 9); MPICH's loop stops at the first digit value with d delta >= p ("nothing is to be
  // sent"), so there is no message for digit 2: 5 messages, not (k-1) 3 = 6.
  const core::Schedule s = k_brucks(10, 100, 3);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 10; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers == std::vector<core::Rank>{(r + 1) % 10, (r + 2) % 10, (r + 3) % 10,
                                                     (r + 6) % 10, (r + 9) % 10});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{30, 30, 30, 30, 10});
    CHECK(t[r].recvs == 5);
  }
  CHECK(recv_peers(s, 4) == std::vector<core::Rank>{3, 2, 1, 8, 5});
  // Slots of 3^(3-1) = 9 blocks: 100 + 2 * 2 * 90.
  CHECK(s.header().tmp_bytes == 460);
  // Zero bytes keep every message (MPICH posts zero-byte sends and receives).
  const auto empty = testing::traffic(k_brucks(10, 0, 3));
  CHECK(empty[0].sends == 5);
  CHECK(empty[0].send_bytes == 0);
}

TEST_CASE("radix-4 bruck alltoall on 5 ranks sends three messages, then one",
          "[algorithms][alltoall][bruck]") {
  // p - 1 = 4 = 10 in base 4: phase 0 sends blocks 1, 2, 3 to r+1, r+2, r+3; phase 1 only block 4
  // to r+4 (digits 2 and 3 have none).
  const core::Schedule s = k_brucks(5, 50, 4);
  const auto t = testing::traffic(s);
  for (core::Rank r = 0; r < 5; ++r) {
    CAPTURE(r);
    CHECK(t[r].send_peers ==
          std::vector<core::Rank>{(r + 1) % 5, (r + 2) % 5, (r + 3) % 5, (r + 4) % 5});
    CHECK(t[r].send_lengths == std::vector<std::uint64_t>{10, 10, 10, 10});
  }
  CHECK(recv_peers(s, 0) == std::vector<core::Rank>{4, 3, 2, 1});
  // 50 + 2 * 3 slots of 4^(2-1) = 4 blocks. Operations per rank: own block, 2 rotation copies
  // (rank 0: 1), phase 0: 3 x (pack, send, recv, unpack), phase 1: 4 more, 4 output copies = 23
  // (22). Dependencies: phase-0 packs 2 each (rank 0: 1), sends and unpacks 1 and 2 each, the
  // phase-1 pack 2, its send 1, its receive the 3 phase-0 unpacks, its unpack 2, outputs 1 each
  // = 27 (24).
  CHECK(s.header().tmp_bytes == 290);
  CHECK(s.op_count() == 22 + 4 * 23);
  CHECK(s.dep_count() == 24 + 4 * 27);
}

TEST_CASE("bruck alltoall takes a radix in from 2 to 1024, answers to mpich:k_brucks and declares "
          "ceil(log_k p) a + (n/p) sum of blocks b",
          "[algorithms][alltoall][bruck]") {
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "mpich:k_brucks");
  CHECK(algo.name == "bruck");
  CHECK(&reg.find(core::CollectiveKind::alltoall, "mpich:brucks") == &algo);
  REQUIRE(algo.params.size() == 1);
  CHECK(algo.params[0].name == "radix");
  CHECK(algo.params[0].default_value == 2);
  algorithms::Request req = radix_request(8, 64, 1);
  CHECK(reg.refusal(algo, req) == "parameter 'radix' = 1 is out of range [2, 1024]");
  req = radix_request(8, 64, 1025);
  CHECK(reg.refusal(algo, req) == "parameter 'radix' = 1025 is out of range [2, 1024]");
  // p = 9, k = 3: 2 phases, 4 messages of 3 blocks; p = 10: 3 phases, 13 blocks; p = 16, k = 4:
  // 2 phases, 6 messages of 4 blocks = (k-1)/k n log_k p.
  const auto c9 = reg.cost(algo, radix_request(9, 90, 3));
  REQUIRE(c9.has_value());
  CHECK(c9->alpha_terms == 2.0);
  CHECK(c9->beta_bytes == 120.0);
  const auto c10 = reg.cost(algo, radix_request(10, 100, 3));
  REQUIRE(c10.has_value());
  CHECK(c10->alpha_terms == 3.0);
  CHECK(c10->beta_bytes == 130.0);
  const auto c16 = reg.cost(algo, radix_request(16, 128, 4));
  REQUIRE(c16.has_value());
  CHECK(c16->alpha_terms == 2.0);
  CHECK(c16->beta_bytes == 192.0);
  // A radix of at least p is one phase of p-1 direct messages.
  const auto direct = reg.cost(algo, radix_request(7, 70, 1024));
  REQUIRE(direct.has_value());
  CHECK(direct->alpha_terms == 1.0);
  CHECK(direct->beta_bytes == 60.0);
  // The refusal's closed-form operation count (checked by brute force: runs of each digit value).
  req = radix_request(40000, 40000, 3);
  CHECK(reg.refusal(algo, req) ==
        "the schedule would need 4801599999 operations; a schedule holds at most 1073741824");
}

TEST_CASE("radix-4 bruck alltoall on 16 ranks needs 2 message rounds where radix 2 needs 4",
          "[algorithms][alltoall][bruck]") {
  // 8 bytes per block. (The algorithms tests do not link an engine; tests/engines times declared
  // closed forms. Here the latency term is the longest chain of messages.)
  const core::Schedule k2 = k_brucks(16, 128, 2);
  const core::Schedule k4 = k_brucks(16, 128, 4);
  CHECK(message_rounds(k2) == 4);
  CHECK(message_rounds(k4) == 2);
  CHECK(message_rounds(k_brucks(16, 128, 16)) == 1);
  const auto t2 = testing::traffic(k2);
  const auto t4 = testing::traffic(k4);
  for (core::Rank r = 0; r < 16; ++r) {
    CAPTURE(r);
    CHECK(t2[r].send_lengths == std::vector<std::uint64_t>{64, 64, 64, 64});
    CHECK(t4[r].send_lengths == std::vector<std::uint64_t>{32, 32, 32, 32, 32, 32});
  }
}

TEST_CASE("bruck alltoall of every radix 2..5 implements alltoall without races on 1..40 ranks",
          "[algorithms][alltoall][bruck]") {
  // The registry-wide conformance runs the default radix only. check_semantics runs validate()
  // (structure, matching, deadlock, and the race check of every pair of operations that touch the
  // same bytes) before executing the schedule symbolically.
  const auto reg = algorithms::make_default_registry();
  const auto& algo = reg.find(core::CollectiveKind::alltoall, "bruck");
  std::size_t checked = 0;
  for (std::uint32_t p = 1; p <= 40; ++p) {
    for (std::int64_t radix = 2; radix <= 5; ++radix) {
      for (const std::uint64_t n :
           {std::uint64_t{0}, std::uint64_t{p}, std::uint64_t{3} * p, std::uint64_t{1000} * p}) {
        algorithms::Request req = radix_request(p, n, radix);
        REQUIRE(reg.refusal(algo, req).empty());
        const core::VerifyReport report = core::check_semantics(reg.generate(algo, req));
        if (!report.ok()) {
          FAIL_CHECK(
              fmt::format("radix {} on {} ranks, {} bytes:\n{}", radix, p, n, report.summary()));
        }
        ++checked;
      }
    }
  }
  CHECK(checked == 40 * 4 * 4);
}
