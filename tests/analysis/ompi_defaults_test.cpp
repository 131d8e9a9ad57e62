// Open MPI 4.1 coll/tuned fixed rules: table rows at and just below their thresholds, the metric
// per collective, coll/base fallbacks, p = 1, and every choice accepted by the registry.
// Expected ids are read from v4.1.x coll_tuned_decision_fixed.c; each block names its table row.

#include "collsim/analysis/ompi_defaults.hpp"
#include "collsim/core/errors.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <tuple>
#include <vector>

using namespace collsim;
using analysis::ompi41_fixed_rule;
using core::CollectiveKind;

namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

int rule(CollectiveKind c, std::uint32_t p, std::uint64_t m, bool commutative = true) {
  return ompi41_fixed_rule(c, p, m, commutative).id;
}

analysis::LibraryChoice choose(CollectiveKind c, std::uint32_t p, std::uint64_t s,
                               std::uint32_t element_bytes = 4, bool commutative = true) {
  static const auto registry = algorithms::make_default_registry();
  analysis::OmpiCall call{c, p, core::Bytes{s}, commutative, element_bytes};
  auto choice = analysis::ompi41_default(call, registry);
  REQUIRE(choice.has_value());
  return *choice;
}

struct Case {
  std::uint32_t p;
  std::uint64_t m;
  int id;
};

void check_rows(CollectiveKind c, const std::vector<Case>& cases, bool commutative = true) {
  for (const auto& k : cases) {
    INFO(core::to_string(c) << " p=" << k.p << " m=" << k.m
                            << (commutative ? "" : " non-commutative"));
    CHECK(rule(c, k.p, k.m, commutative) == k.id);
  }
}

} // namespace

TEST_CASE("allreduce follows the 4.1 fixed table at and just below each threshold",
          "[analysis][ompi_defaults]") {
  check_rows(CollectiveKind::allreduce,
             {
                 // p < 4: {m<8:4, m<4K:3, m<8K:4, m<16K:3, m<64K:4, m<256K:5, else:6}
                 {2, 7, 4},
                 {2, 8, 3},
                 {3, 4 * kKiB - 1, 3},
                 {3, 4 * kKiB, 4},
                 {3, 16 * kKiB - 1, 3},
                 {3, 64 * kKiB, 5},
                 {3, 256 * kKiB - 1, 5},
                 {3, 256 * kKiB, 6},
                 // p < 8: {m<16:4, m<8K:3, else:6}
                 {5, 15, 4},
                 {5, 16, 3},
                 {7, 8 * kKiB - 1, 3},
                 {7, 8 * kKiB, 6},
                 // p < 16: {m<8K:3, else:6}
                 {8, 8 * kKiB - 1, 3},
                 {15, 8 * kKiB, 6},
                 // p < 32: {m<64:5, m<4K:3, else:6}
                 {16, 63, 5},
                 {31, 64, 3},
                 {31, 4 * kKiB, 6},
                 // p < 64: {m<128:5, else:6}
                 {32, 127, 5},
                 {63, 128, 6},
                 // p < 128: {m<256K:3, else:6}
                 {100, 256 * kKiB - 1, 3},
                 {100, 256 * kKiB, 6},
                 // p < 256: {m<128K:2, m<256K:3, else:6}
                 {200, 128 * kKiB - 1, 2},
                 {200, 128 * kKiB, 3},
                 {255, 256 * kKiB, 6},
                 // p < 512: {m<4K:2, else:6}
                 {256, 4 * kKiB - 1, 2},
                 {511, 4 * kKiB, 6},
                 // p < 2048: {m<2K:2, m<16K:3, else:6}
                 {1024, 2 * kKiB - 1, 2},
                 {1024, 2 * kKiB, 3},
                 {2047, 16 * kKiB, 6},
                 // p < 4096: {m<2K:2, m<4K:5, m<16K:3, else:6}
                 {2048, 2 * kKiB, 5},
                 {4095, 4 * kKiB, 3},
                 // p >= 4096: {m<2K:2, m<16K:5, m<32K:3, else:6}
                 {4096, 16 * kKiB - 1, 5},
                 {8192, 32 * kKiB - 1, 3},
                 {8192, 32 * kKiB, 6},
             });
  check_rows(CollectiveKind::allreduce,
             {
                 // non-commutative p < 4: {m<128K:3, else:1}
                 {3, 128 * kKiB - 1, 3},
                 {3, 128 * kKiB, 1},
                 // p < 8: 3; p < 16: {m<1M:3, else:2}
                 {7, 16 * kMiB, 3},
                 {15, kMiB - 1, 3},
                 {15, kMiB, 2},
                 // p < 128: 3; p < 256: {m<128K:2, m<512K:3, else:2}
                 {127, kMiB, 3},
                 {128, 512 * kKiB - 1, 3},
                 {128, 512 * kKiB, 2},
                 // p < 512: {m<4K:2, m<512K:3, else:2}; else: {m<2K:2, else:3}
                 {300, 4 * kKiB, 3},
                 {512, 2 * kKiB - 1, 2},
                 {512, 16 * kMiB, 3},
             },
             false);
}

TEST_CASE("bcast follows the 4.1 fixed table at and just below each threshold",
          "[analysis][ompi_defaults]") {
  check_rows(CollectiveKind::bcast,
             {
                 // p < 4: {m<32:3, m<256:5, m<512:3, m<1K:7, m<32K:1, m<128K:5, m<256K:2,
                 //         m<512K:1, m<1M:6, else:5}
                 {2, 31, 3},
                 {2, 32, 5},
                 {3, 1023, 7},
                 {3, kKiB, 1},
                 {3, 256 * kKiB - 1, 2},
                 {3, kMiB - 1, 6},
                 {3, kMiB, 5},
                 // p < 8: {m<64:5, m<128:6, m<2K:5, m<8K:6, m<1M:1, else:2}
                 {4, 64, 6},
                 {7, 8 * kKiB, 1},
                 {7, kMiB, 2},
                 // p < 16: {m<8:7, m<64:5, m<4K:7, m<16K:5, m<32K:6, else:1}
                 {8, 7, 7},
                 {8, 8, 5},
                 {15, 32 * kKiB, 1},
                 // p < 32: {m<4K:7, m<1M:6, else:8}
                 {16, 4 * kKiB - 1, 7},
                 {31, kMiB, 8},
                 // p < 64: {m<2K:6, else:7}; p < 128: 7
                 {32, 2 * kKiB - 1, 6},
                 {63, 2 * kKiB, 7},
                 {127, 16 * kMiB, 7},
                 // p < 256: {m<2:6, m<16K:5, m<32K:1, m<64K:5, else:7}
                 {128, 1, 6},
                 {128, 2, 5},
                 {255, 16 * kKiB, 1},
                 {255, 64 * kKiB, 7},
                 // p < 1024: {m<16K:7, m<32K:4, else:7}
                 {256, 16 * kKiB, 4},
                 {1023, 32 * kKiB, 7},
                 // p < 2048: {m<512K:7, else:8}; p < 4096: {m<256K:7, else:8}
                 {1024, 512 * kKiB, 8},
                 {2048, 256 * kKiB - 1, 7},
                 // else: {m<8K:7, m<16K:5, m<256K:7, else:8}
                 {4096, 8 * kKiB, 5},
                 {4096, 256 * kKiB, 8},
             });
}

TEST_CASE("reduce follows the 4.1 fixed table at and just below each threshold",
          "[analysis][ompi_defaults]") {
  check_rows(CollectiveKind::reduce,
             {
                 // p < 4: {m<8:7, m<16:4, m<32:3, m<256K:1, m<512K:3, m<1M:2, else:3}
                 {2, 7, 7},
                 {2, 8, 4},
                 {3, 16, 3},
                 {3, 32, 1},
                 {3, 512 * kKiB, 2},
                 {3, kMiB, 3},
                 // p < 8: {m<4K:4, m<64K:2, m<256K:5, m<512K:1, m<1M:5, else:1}
                 {4, 4 * kKiB - 1, 4},
                 {4, 4 * kKiB, 2},
                 {7, 256 * kKiB, 1},
                 {7, kMiB, 1},
                 // p < 16: {m<8K:4, else:5}; p < 32: {m<4K:4, else:5}; p < 256: 5
                 {15, 8 * kKiB - 1, 4},
                 {16, 4 * kKiB, 5},
                 {255, 1, 5},
                 // p < 512: {m<8K:5, m<16K:6, else:5}
                 {300, 8 * kKiB, 6},
                 {300, 16 * kKiB, 5},
                 // p < 2048: 5; p < 4096: {m<512:5, m<1K:6, m<8K:5, m<16K:6, else:5}
                 {2000, 600, 5},
                 {3000, 600, 6},
                 // else: {m<16:5, m<32:6, m<1K:5, m<2K:6, m<8K:5, m<16K:6, else:5}
                 {5000, 16, 6},
                 {5000, 2 * kKiB - 1, 6},
             });
  check_rows(CollectiveKind::reduce,
             {
                 // non-commutative: p < 4: {m<8:6, else:1}; p < 8: 1
                 {2, 7, 6},
                 {3, 8, 1},
                 {7, 7, 1},
                 // p < 16: {m<1K:6, m<8K:1, m<16K:6, m<256K:1, else:6}
                 {8, kKiB, 1},
                 {8, 16 * kKiB - 1, 6},
                 {8, 256 * kKiB, 6},
                 // p < 128: 6; p < 256: {m<512:6, m<1K:1, else:6}; else: 6
                 {100, kKiB, 6},
                 {200, 512, 1},
                 {2000, 512, 6},
             },
             false);
}

TEST_CASE("allgather follows the 4.1 fixed table at and just below each threshold",
          "[analysis][ompi_defaults]") {
  check_rows(CollectiveKind::allgather,
             {
                 // p == 2: 6; p < 32: 3
                 {2, 16 * kMiB, 6},
                 {3, 16 * kMiB, 3},
                 {31, 0, 3},
                 // p < 64: {m<1K:3, m<64K:5, else:4}
                 {32, kKiB - 1, 3},
                 {32, kKiB, 5},
                 {63, 64 * kKiB, 4},
                 // p < 128: {m<512:3, m<64K:5, else:4}
                 {64, 511, 3},
                 {127, 512, 5},
                 // p < 256: {m<512:3, m<128K:5, m<512K:4, m<1M:5, else:4}
                 {128, 128 * kKiB, 4},
                 {255, 512 * kKiB, 5},
                 {255, kMiB, 4},
                 // p < 512: {m<32:3, m<128:2, m<1K:3, m<128K:5, m<512K:4, m<1M:5, else:4}
                 {256, 32, 2},
                 {511, 128, 3},
                 // p < 1024: {m<64:3, m<256:2, m<2K:3, else:5}
                 {512, 255, 2},
                 {1023, 2 * kKiB, 5},
                 // p < 2048: {m<4:3, m<8:2, m<16:3, m<32:2, m<256:3, m<512:2, m<4K:3, else:5}
                 {1024, 4, 2},
                 {1024, 8, 3},
                 {2047, 511, 2},
                 // p < 4096: {m<32:2, m<128:3, m<512:2, m<4K:3, else:5}
                 {2048, 31, 2},
                 // else: {m<2:3, m<8:2, m<16:3, m<512:2, m<4K:3, else:5}
                 {4096, 1, 3},
                 {4096, 2, 2},
                 {4096, 4 * kKiB, 5},
             });
}

TEST_CASE("reduce_scatter follows the 4.1 fixed table at and just below each threshold",
          "[analysis][ompi_defaults]") {
  check_rows(CollectiveKind::reduce_scatter,
             {
                 // p < 4: {m<64K:3, m<128K:4, else:3}
                 {2, 64 * kKiB - 1, 3},
                 {2, 64 * kKiB, 4},
                 {3, 128 * kKiB, 3},
                 // p < 8: {m<8:1, m<256K:2, else:3}
                 {4, 7, 1},
                 {4, 8, 2},
                 {7, 256 * kKiB, 3},
                 // p < 32: {m<256K:2, else:3}
                 {16, 256 * kKiB - 1, 2},
                 // p < 64: {m<64:1, m<2K:2, m<512K:4, else:3}
                 {32, 2 * kKiB, 4},
                 {63, 512 * kKiB, 3},
                 // p < 128: {m<256:1, m<512:2, m<2K:4, m<4K:2, else:4}
                 {64, 2 * kKiB, 2},
                 {127, 4 * kKiB, 4},
                 // p < 256 {m<256:1, m<512:2, else:4}; p < 512 {m<256:1, m<1K:2, else:4}
                 {200, 512, 4},
                 {300, 512, 2},
                 // p < 1024: {m<512:1, m<2K:2, m<8K:4, m<16K:2, else:4}
                 {1000, 8 * kKiB, 2},
                 // p < 2048: {m<512:1, m<4K:2, m<16K:4, m<32K:2, else:4}
                 {2000, 16 * kKiB, 2},
                 // p < 4096: {m<512:1, m<4K:2, else:4}; else: {m<1K:1, m<8K:2, else:4}
                 {3000, 4 * kKiB, 4},
                 {5000, kKiB - 1, 1},
                 {5000, 8 * kKiB, 4},
             });
  // "Defaulting to non overlapping for non commutative ops."
  check_rows(CollectiveKind::reduce_scatter, {{2, 0, 1}, {64, 16 * kMiB, 1}}, false);
}

TEST_CASE("alltoall follows the 4.1 fixed table at and just below each threshold",
          "[analysis][ompi_defaults]") {
  check_rows(CollectiveKind::alltoall,
             {
                 // p == 2: {m<2:2, m<4:5, m<16:2, m<64:5, m<256:2, m<4K:5, m<32K:2, m<256K:4,
                 //          m<1M:5, else:2}
                 {2, 1, 2},
                 {2, 2, 5},
                 {2, 4 * kKiB, 2},
                 {2, 32 * kKiB, 4},
                 {2, kMiB, 2},
                 // p < 8: {m<8K:4, m<16K:1, m<64K:4, m<512K:1, m<1M:2, else:1}
                 {3, 8 * kKiB - 1, 4},
                 {7, 8 * kKiB, 1},
                 {7, 512 * kKiB, 2},
                 {7, kMiB, 1},
                 // p < 16: {m<256K:4, else:1}
                 {8, 256 * kKiB, 1},
                 // p < 32: {m<4:4, m<512:3, m<8K:4, m<32K:1, m<256K:4, m<512K:1, else:4}
                 {16, 3, 4},
                 {16, 4, 3},
                 {31, 512 * kKiB, 4},
                 // p < 64: {m<512:3, m<512K:1, else:4}
                 {32, 511, 3},
                 {63, 512, 1},
                 // p < 128: {m<1K:3, m<2K:1, m<4K:4, m<256K:1, else:2}
                 {64, 2 * kKiB, 4},
                 {127, 256 * kKiB, 2},
                 // p < 256: {m<1K:3, m<2K:4, m<256K:1, else:2}
                 {128, kKiB, 4},
                 // p < 512: {m<1K:3, m<8K:4, m<32K:1, else:2}
                 {256, 32 * kKiB - 1, 1},
                 // p < 1024: {m<512:3, m<8K:4, m<16K:1, m<128K:4, m<256K:1, else:2}
                 {512, 128 * kKiB, 1},
                 // p < 2048: {m<512:3, m<1K:4, m<2K:1, m<16K:4, m<256K:1, else:4}
                 {1024, 256 * kKiB, 4},
                 // p < 4096: {m<1K:3, m<4K:4, m<8K:1, m<128K:4, else:1}
                 {2048, 128 * kKiB, 1},
                 // else: {m<2K:3, m<8K:4, m<16K:1, m<32K:4, m<64K:1, else:4}
                 {4096, 64 * kKiB - 1, 1},
                 {4096, 64 * kKiB, 4},
             });
}

TEST_CASE("gather, scatter and barrier follow the 4.1 fixed tables", "[analysis][ompi_defaults]") {
  check_rows(CollectiveKind::gather,
             {
                 // p < 4: {m<2:3, m<4:1, m<32K:2, m<64K:1, m<128K:2, else:3}
                 {2, 1, 3},
                 {2, 2, 1},
                 {3, 4, 2},
                 {3, 32 * kKiB, 1},
                 {3, 128 * kKiB, 3},
                 // p < 8: {m<1K:2, m<8K:1, m<32K:2, m<256K:1, else:3}
                 {4, kKiB - 1, 2},
                 {7, 256 * kKiB, 3},
                 // p < 256: 2; p < 512: {m<2K:2, m<8K:1, else:2}; else: 2
                 {255, 8 * kKiB, 2},
                 {256, 2 * kKiB, 1},
                 {511, 8 * kKiB, 2},
                 {512, 4 * kKiB, 2},
             });
  check_rows(CollectiveKind::scatter,
             {
                 // p < 4: {m<2:3, m<128K:1, m<256K:3, else:1}
                 {2, 1, 3},
                 {3, 128 * kKiB, 3},
                 {3, 256 * kKiB, 1},
                 // p < 8: {m<2K:2, m<4K:1, m<8K:2, m<32K:1, m<1M:3, else:1}
                 {5, 2 * kKiB - 1, 2},
                 {5, 32 * kKiB, 3},
                 {7, kMiB, 1},
                 // p < 16: {m<16K:2, m<1M:3, else:1}
                 {13, 16 * kKiB, 3},
                 // p < 32: {m<16K:2, m<32K:1, else:3}
                 {31, 16 * kKiB, 1},
                 // p < 64: {m<512:2, m<8K:3, m<16K:2, else:3}
                 {32, 8 * kKiB, 2},
                 // else: {m<512:2, else:3}
                 {64, 511, 2},
                 {1024, 512, 3},
             });
  // barrier by p only: {p<4:3, p<8:1, p<64:3, p<256:4, p<512:6, p<1024:4, p<4096:6, else:4}
  check_rows(CollectiveKind::barrier, {{2, 0, 3},
                                       {3, 0, 3},
                                       {4, 0, 1},
                                       {8, 0, 3},
                                       {63, 0, 3},
                                       {64, 0, 4},
                                       {256, 0, 6},
                                       {512, 0, 4},
                                       {1024, 0, 6},
                                       {4096, 0, 4}});
}

TEST_CASE("the fired rule is spelled out with its p row and m range", "[analysis][ompi_defaults]") {
  CHECK(ompi41_fixed_rule(CollectiveKind::allreduce, 5, 16).reason ==
        "p < 8, commutative: 16 B <= m < 8 KiB -> 3");
  CHECK(ompi41_fixed_rule(CollectiveKind::allreduce, 5, 8 * kKiB).reason ==
        "p < 8, commutative: m >= 8 KiB -> 6");
  CHECK(ompi41_fixed_rule(CollectiveKind::allgather, 2, 1).reason == "p == 2: any m -> 6");
  CHECK(ompi41_fixed_rule(CollectiveKind::bcast, 5000, 1).reason == "p >= 4096: m < 8 KiB -> 7");
  CHECK(ompi41_fixed_rule(CollectiveKind::barrier, 100, 0).reason == "p < 256 -> 4");
  CHECK(ompi41_fixed_rule(CollectiveKind::reduce, 3, 8, false).reason ==
        "p < 4, non-commutative: m >= 8 B -> 1");
}

TEST_CASE("Open MPI's metric is the whole vector, the per-rank block or the per-peer block",
          "[analysis][ompi_defaults]") {
  using analysis::ompi41_metric;
  using analysis::OmpiCall;
  CHECK(ompi41_metric(OmpiCall{CollectiveKind::allreduce, 8, core::Bytes{kMiB}}) == kMiB);
  CHECK(ompi41_metric(OmpiCall{CollectiveKind::reduce_scatter, 8, core::Bytes{kMiB}}) == kMiB);
  // allgather, gather, scatter: S = p * block; alltoall: S = p * per-peer block.
  CHECK(ompi41_metric(OmpiCall{CollectiveKind::allgather, 64, core::Bytes{64 * kKiB}}) == kKiB);
  CHECK(ompi41_metric(OmpiCall{CollectiveKind::gather, 4, core::Bytes{4 * 300}}) == 300);
  CHECK(ompi41_metric(OmpiCall{CollectiveKind::scatter, 5, core::Bytes{5 * 7}}) == 7);
  CHECK(ompi41_metric(OmpiCall{CollectiveKind::alltoall, 16, core::Bytes{16 * 512}}) == 512);
  CHECK(ompi41_metric(OmpiCall{CollectiveKind::barrier, 16, core::Bytes{kMiB}}) == 0);

  // allgather p < 64 row {m<1K:3, m<64K:5, else:4} is read on the block, not on S: at p = 40,
  // S = 40 KiB - 40 is a block of 1023 B (rule 3, recursive doubling -> Bruck on p = 40), and
  // S = 40 KiB a block of 1 KiB (rule 5, neighbor exchange on even p).
  const auto below = choose(CollectiveKind::allgather, 40, 40 * kKiB - 40);
  CHECK(below.library_name == "ompi:3 recursive_doubling");
  CHECK(below.algorithm == "bruck");
  const auto at = choose(CollectiveKind::allgather, 40, 40 * kKiB);
  CHECK(at.library_name == "ompi:5 neighbor");
  CHECK(at.algorithm == "neighbor_exchange");
  // alltoall p < 64 row {m<512:3, m<512K:1, else:4} on the per-peer block.
  CHECK(choose(CollectiveKind::alltoall, 32, 32 * 511).algorithm == "bruck");
  CHECK(choose(CollectiveKind::alltoall, 32, 32 * 512).algorithm == "linear");
}

TEST_CASE("allreduce choices follow coll/base's fallbacks with segmentation off",
          "[analysis][ompi_defaults]") {
  // p < 4 row, m < 8 -> ring; 1 float < p = 3 elements: recursive doubling.
  auto c = choose(CollectiveKind::allreduce, 3, 4);
  CHECK(c.library_name == "ompi:4 ring");
  CHECK(c.algorithm == "recursive_doubling");
  CHECK(c.reason == "p < 4, commutative: m < 8 B -> 4; ring with count 1 < p = 3 runs "
                    "recursive_doubling");
  // Same row with 1-byte elements: 4 elements >= 3, the ring runs.
  CHECK(choose(CollectiveKind::allreduce, 3, 4, 1).algorithm == "ring");
  // p < 4, 64K <= m < 256K -> segmented ring; segsize 0: the plain ring.
  c = choose(CollectiveKind::allreduce, 3, 128 * kKiB);
  CHECK(c.library_name == "ompi:5 segmented_ring");
  CHECK(c.algorithm == "ring");
  CHECK(c.params.empty());
  // p < 32, m < 64 -> segmented ring -> ring -> count 8 < 20: recursive doubling.
  CHECK(choose(CollectiveKind::allreduce, 20, 32).algorithm == "recursive_doubling");
  // p < 16, m >= 8K -> rabenseifner, which runs with 2048 floats >= 8 = 2^floor(lg 13)...
  CHECK(choose(CollectiveKind::allreduce, 13, 8 * kKiB).algorithm == "rabenseifner");
  // ...but with 4 KiB elements 2 < 8: basic_linear.
  c = choose(CollectiveKind::allreduce, 13, 8 * kKiB, 4096);
  CHECK(c.library_name == "ompi:6 rabenseifner");
  CHECK(c.algorithm == "basic_linear");
  // p < 256, m < 128K -> nonoverlapping: coll/tuned's reduce (p >= 32: binomial) and bcast
  // (p < 256, 2 <= m < 16K: binary_tree), passed on as reduce_bcast's halves.
  c = choose(CollectiveKind::allreduce, 200, kKiB);
  CHECK(c.library_name == "ompi:2 nonoverlapping");
  CHECK(c.algorithm == "reduce_bcast");
  CHECK(c.params == algorithms::RawParams{{"reduce", "binomial"}, {"bcast", "binary_tree"}});
  CHECK_THAT(c.reason, Catch::Contains("ompi:5 binomial then broadcasts with ompi:5 binary_tree"));
  // Non-commutative ops never get ring or rabenseifner.
  CHECK(choose(CollectiveKind::allreduce, 3, kMiB, 4, false).algorithm == "basic_linear");
  CHECK(choose(CollectiveKind::allreduce, 5, kMiB, 4, false).algorithm == "recursive_doubling");
}

TEST_CASE("bcast, reduce and allgather choices reproduce fixed mode's parameters and fallbacks",
          "[analysis][ompi_defaults]") {
  // bcast p < 8, m >= 1M -> chain; faninout 0 is forced to fanout 1, segsize 0.
  auto c = choose(CollectiveKind::bcast, 5, 4 * kMiB);
  CHECK(c.library_name == "ompi:2 chain");
  CHECK(c.algorithm == "chain");
  CHECK(c.params == algorithms::RawParams{{"chains", "1"}, {"segment_size", "0"}});
  // bcast p < 4, m < 32 -> pipeline, unsegmented.
  c = choose(CollectiveKind::bcast, 3, 16);
  CHECK(c.algorithm == "pipeline");
  CHECK(c.params == algorithms::RawParams{{"segment_size", "0"}});
  // bcast p < 128 -> knomial with coll_tuned_bcast_knomial_radix 4.
  c = choose(CollectiveKind::bcast, 100, kMiB);
  CHECK(c.algorithm == "knomial");
  CHECK(c.params == algorithms::RawParams{{"radix", "4"}});
  // bcast p < 1024, 16K <= m < 32K -> split_binary_tree, unsegmented.
  c = choose(CollectiveKind::bcast, 300, 16 * kKiB);
  CHECK(c.algorithm == "split_binary_tree");
  CHECK(c.params == algorithms::RawParams{{"segment_size", "0"}});
  // bcast p < 32, m >= 1M -> scatter_allgather; with 1 MiB elements count 1 < p: linear.
  CHECK(choose(CollectiveKind::bcast, 20, kMiB).algorithm == "scatter_allgather");
  c = choose(CollectiveKind::bcast, 20, kMiB, static_cast<std::uint32_t>(kMiB));
  CHECK(c.library_name == "ompi:8 scatter_allgather");
  CHECK(c.algorithm == "linear");

  // reduce p < 4, 512K <= m < 1M -> chain with fanout 1, unsegmented.
  c = choose(CollectiveKind::reduce, 3, 512 * kKiB);
  CHECK(c.algorithm == "chain");
  CHECK(c.params == algorithms::RawParams{{"chains", "1"}, {"segment_size", "0"}});
  // reduce p < 4, m < 8 -> rabenseifner; 1 float < 2 = 2^floor(lg 3): linear.
  c = choose(CollectiveKind::reduce, 3, 4);
  CHECK(c.library_name == "ompi:7 rabenseifner");
  CHECK(c.algorithm == "linear");
  // reduce p < 8, m < 4K -> binary, unsegmented.
  c = choose(CollectiveKind::reduce, 6, kKiB);
  CHECK(c.algorithm == "binary");
  CHECK(c.params == algorithms::RawParams{{"segment_size", "0"}});
  // Non-commutative reduce p < 16, m < 1K -> in-order binary.
  CHECK(choose(CollectiveKind::reduce, 9, 512, 4, false).algorithm == "in_order_binary");

  // allgather p < 32 -> recursive doubling: runs on p = 8, Bruck (radix 2) on p = 5.
  CHECK(choose(CollectiveKind::allgather, 8, 8 * kKiB).algorithm == "recursive_doubling");
  c = choose(CollectiveKind::allgather, 5, 5 * kKiB);
  CHECK(c.algorithm == "bruck");
  CHECK(c.params == algorithms::RawParams{{"radix", "2"}});
  // allgather p < 64, 1K <= m < 64K -> neighbor exchange; odd p: the ring.
  CHECK(choose(CollectiveKind::allgather, 33, 33 * 2 * kKiB).algorithm == "ring");
  CHECK(choose(CollectiveKind::allgather, 34, 34 * 2 * kKiB).algorithm == "neighbor_exchange");
  CHECK(choose(CollectiveKind::allgather, 2, 2).algorithm == "two_proc");

  // alltoall p < 8, m < 8K -> linear_sync with no request limit; barrier p < 256 -> bruck.
  c = choose(CollectiveKind::alltoall, 4, 4 * kKiB);
  CHECK(c.algorithm == "linear_sync");
  CHECK(c.params == algorithms::RawParams{{"max_outstanding", "0"}});
  c = choose(CollectiveKind::barrier, 100, 0);
  CHECK(c.algorithm == "dissemination");
  CHECK(c.params == algorithms::RawParams{{"radix", "2"}});
  // gather p < 4, m >= 128K -> linear_sync with the whole block as first segment.
  c = choose(CollectiveKind::gather, 3, 3 * 128 * kKiB);
  CHECK(c.algorithm == "linear_sync");
  CHECK(c.params == algorithms::RawParams{{"first_segment", "0"}});
  // Non-commutative reduce_scatter -> non-overlapping.
  CHECK(choose(CollectiveKind::reduce_scatter, 16, kMiB, 4, false).algorithm == "non_overlapping");
}

TEST_CASE("a single rank is served by coll/self: collsim's linear algorithm with no messages",
          "[analysis][ompi_defaults]") {
  const auto registry = algorithms::make_default_registry();
  for (const auto c : core::kAllCollectives) {
    INFO(core::to_string(c));
    const auto choice = choose(c, 1, kKiB);
    CHECK(choice.library_name == "self");
    const auto& algo = registry.find(c, choice.algorithm);
    algorithms::Request req;
    req.collective = c;
    req.ranks = 1;
    req.bytes = core::Bytes{kKiB};
    const auto schedule = registry.generate(algo, req);
    std::size_t sends = 0;
    for (std::size_t op = 0; op < schedule.op_count(); ++op) {
      sends += schedule.kind(static_cast<std::uint32_t>(op)) == core::OpKind::send ? 1 : 0;
    }
    CHECK(sends == 0);
  }
}

TEST_CASE("alltoall of S not a multiple of p and zero ranks have no Open MPI choice",
          "[analysis][ompi_defaults]") {
  const auto registry = algorithms::make_default_registry();
  using analysis::OmpiCall;
  CHECK_FALSE(
      analysis::ompi41_default(OmpiCall{CollectiveKind::alltoall, 3, core::Bytes{1000}}, registry));
  CHECK_FALSE(
      analysis::ompi41_default(OmpiCall{CollectiveKind::bcast, 0, core::Bytes{8}}, registry));
  CHECK_THROWS_AS(analysis::ompi41_default(
                      OmpiCall{CollectiveKind::bcast, 4, core::Bytes{8}, true, 0}, registry),
                  core::UsageError);
}

TEST_CASE("every Open MPI 4.1 algorithm id has a collsim algorithm, and no later id exists",
          "[analysis][ompi_defaults]") {
  const auto registry = algorithms::make_default_registry();
  const std::vector<std::pair<CollectiveKind, int>> counts{
      {CollectiveKind::allreduce, 6},      {CollectiveKind::bcast, 9},
      {CollectiveKind::reduce, 7},         {CollectiveKind::allgather, 6},
      {CollectiveKind::reduce_scatter, 4}, {CollectiveKind::alltoall, 5},
      {CollectiveKind::gather, 3},         {CollectiveKind::scatter, 3},
      {CollectiveKind::barrier, 6}};
  for (const auto& [c, n] : counts) {
    for (int id = 1; id <= n; ++id) {
      INFO(core::to_string(c) << " id " << id);
      CHECK_FALSE(analysis::ompi41_algorithm_name(c, id).empty());
      CHECK(registry.try_find(c, "ompi:" + std::to_string(id)) != nullptr);
    }
    CHECK(analysis::ompi41_algorithm_name(c, n + 1).empty());
  }
  // 4.1's allgather id 2 is "bruck" (main: "bruck-k-fanout"); sparbit (7) came later.
  CHECK(analysis::ompi41_algorithm_name(CollectiveKind::allgather, 2) == "bruck");
}

TEST_CASE("every Open MPI 4.1 choice is accepted by the registry for its request",
          "[analysis][ompi_defaults]") {
  const auto registry = algorithms::make_default_registry();
  const std::vector<std::uint32_t> ranks{1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64, 100, 128, 257, 1024};
  const std::vector<std::uint64_t> sizes{0, 1, 8, 1000, 64 * kKiB, kMiB, 16 * kMiB};
  for (const auto c : core::kAllCollectives) {
    for (const bool commutative : {true, false}) {
      for (const auto p : ranks) {
        for (const auto s : sizes) {
          INFO(core::to_string(c) << " p=" << p << " S=" << s << " commutative=" << commutative);
          const auto choice = analysis::ompi41_default(
              analysis::OmpiCall{c, p, core::Bytes{s}, commutative}, registry);
          if (!choice) {
            CHECK(c == CollectiveKind::alltoall);
            CHECK(s % p != 0);
            continue;
          }
          const auto& algo = registry.find(c, choice->algorithm);
          CHECK(algo.name == choice->algorithm);
          algorithms::Request req;
          req.collective = c;
          req.ranks = p;
          req.bytes = core::Bytes{s};
          req.params = algorithms::resolve_params(algo, choice->params);
          CHECK(req.params.size() == choice->params.size()); // every parameter is the algorithm's
          CHECK(registry.refusal(algo, req).empty());
        }
      }
    }
  }
}
