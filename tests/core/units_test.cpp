#include "collsim/core/collective.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/sizes.hpp"
#include "collsim/core/units.hpp"

#include <catch2/catch.hpp>

using namespace collsim::core;

TEST_CASE("sizes use decimal prefixes for KB/MB/GB and binary ones for KiB/MiB/GiB",
          "[core][units]") {
  CHECK(parse_bytes("64 KiB").value == Bytes{65536});
  CHECK(parse_bytes("1MiB").value == Bytes{1048576});
  CHECK(parse_bytes("1 GiB").value == Bytes{1ULL << 30});
  CHECK(parse_bytes("1 GB").value == Bytes{1000000000});
  CHECK(parse_bytes("1.5 KB").value == Bytes{1500});
  CHECK(parse_bytes("8B").value == Bytes{8});
  CHECK(parse_bytes("1000").value == Bytes{1000});
  CHECK(parse_bytes("0 B").value == Bytes{0});
}

TEST_CASE("bad sizes give a reason that quotes the input", "[core][units]") {
  CHECK(parse_bytes("64 KiBs").error ==
        "expected a size like '64 KiB', '1 MB' or '8 B', got '64 KiBs'");
  CHECK(parse_bytes("-1 KiB").error == "a size cannot be negative, got '-1 KiB'");
  CHECK(parse_bytes("0.5 B").error == "size '0.5 B' is not a whole number of bytes");
  CHECK(parse_bytes("").error == "expected a size like '64 KiB', '1 MB' or '8 B', got ''");
  CHECK(parse_bytes("1e30 B").error == "size '1e30 B' is too large (the limit is 8 EiB)");
}

TEST_CASE("bandwidths count bytes for B/s and bits for b/s", "[core][units]") {
  CHECK(parse_bandwidth("25 GB/s").value.bytes_per_second == 25e9);
  CHECK(parse_bandwidth("200 Gb/s").value.bytes_per_second == 25e9);
  CHECK(parse_bandwidth("1 GiB/s").value.bytes_per_second == 1073741824.0);
  CHECK(parse_bandwidth("100 MB/s").value.bytes_per_second == 1e8);
  CHECK(parse_bandwidth("0 GB/s").error == "a bandwidth must be positive, got '0 GB/s'");
  CHECK(parse_bandwidth("25").error ==
        "expected a bandwidth like '25 GB/s' or '200 Gb/s', got '25'");
}

TEST_CASE("durations accept s, ms, us and ns", "[core][units]") {
  CHECK(parse_seconds("1.5 us").value.value == Approx(1.5e-6).epsilon(1e-15));
  CHECK(parse_seconds("200 ns").value.value == Approx(2e-7).epsilon(1e-15));
  CHECK(parse_seconds("2 ms").value.value == Approx(2e-3).epsilon(1e-15));
  CHECK(parse_seconds("1 s").value.value == 1.0);
  CHECK(parse_seconds("1.5").error ==
        "expected a duration like '1.5 us', '200 ns' or '2 ms', got '1.5'");
  CHECK(parse_seconds("-1 us").error == "a duration cannot be negative, got '-1 us'");
}

TEST_CASE("size sweeps are geometric, arithmetic or lists", "[core][units]") {
  const auto geo = parse_size_sweep("8B:1KiB:x4");
  REQUIRE(geo.ok());
  CHECK(geo.value == std::vector<Bytes>{Bytes{8}, Bytes{32}, Bytes{128}, Bytes{512}});
  const auto full = parse_size_sweep("8B:1GiB:x2");
  REQUIRE(full.ok());
  CHECK(full.value.size() == 28);
  CHECK(full.value.back() == Bytes{1ULL << 30});
  const auto arith = parse_size_sweep("1KiB:3KiB:+1KiB");
  REQUIRE(arith.ok());
  CHECK(arith.value == std::vector<Bytes>{Bytes{1024}, Bytes{2048}, Bytes{3072}});
  const auto list = parse_size_sweep("8B,1 KiB,1MiB");
  REQUIRE(list.ok());
  CHECK(list.value == std::vector<Bytes>{Bytes{8}, Bytes{1024}, Bytes{1048576}});
  CHECK(parse_size_sweep("1KiB:8B:x2").error == "size sweep '1KiB:8B:x2' ends before it starts");
  CHECK(parse_size_sweep("8B:1KiB:x1").error ==
        "size sweep factor must be an integer of at least 2 ('x2'), got 'x1'");
  CHECK(parse_size_sweep("0B:1KiB:x2").error ==
        "a geometric size sweep cannot start at 0 bytes, got '0B:1KiB:x2'");
}

TEST_CASE("bus bandwidth factors follow nccl-tests", "[core][metrics]") {
  CHECK(busbw_factor(CollectiveKind::allreduce, 8) == 2.0 * 7 / 8);
  CHECK(busbw_factor(CollectiveKind::allgather, 8) == 7.0 / 8);
  CHECK(busbw_factor(CollectiveKind::reduce_scatter, 4) == 3.0 / 4);
  CHECK(busbw_factor(CollectiveKind::alltoall, 4) == 3.0 / 4);
  CHECK(busbw_factor(CollectiveKind::gather, 2) == 0.5);
  CHECK(busbw_factor(CollectiveKind::scatter, 2) == 0.5);
  CHECK(busbw_factor(CollectiveKind::bcast, 16) == 1.0);
  CHECK(busbw_factor(CollectiveKind::reduce, 16) == 1.0);
  CHECK(busbw_factor(CollectiveKind::barrier, 16) == 0.0);
}

TEST_CASE("collective names accept common spellings and suggest on typos", "[core][names]") {
  CHECK(collective_from_name("all_reduce") == CollectiveKind::allreduce);
  CHECK(collective_from_name("broadcast") == CollectiveKind::bcast);
  CHECK(collective_from_name("ReduceScatter") == CollectiveKind::reduce_scatter);
  try {
    (void)collective_from_name("allreduc");
    FAIL("expected an error");
  } catch (const UnknownNameError& e) {
    CHECK(std::string(e.what()) ==
          "unknown collective 'allreduc' (did you mean 'allreduce'?); valid values are: allreduce, "
          "reduce, bcast, allgather, reduce_scatter, alltoall, gather, scatter, barrier");
  }
}
