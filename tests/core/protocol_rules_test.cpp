// The protocol rules both engines read (core/protocol.hpp): what a sender's core copies before its
// message leaves, and the rate of a participant's reductions. The engines' own tests time them
// (tests/engines/mpi_protocol_test.cpp, tests/stacks/host_staging_test.cpp); these pin the rules.

#include "collsim/core/protocol.hpp"

#include <catch2/catch.hpp>

using namespace collsim;
using core::Bandwidth;

TEST_CASE("rate_time is bytes over rate, and 0 where the rate is 0") {
  CHECK(core::rate_time(1000, Bandwidth{1e9}) == Approx(1e-6));
  CHECK(core::rate_time(1000, Bandwidth{0.0}) == 0.0);
}

TEST_CASE("no copy before a send unless the protocol asks for one") {
  const core::Protocol plain;
  CHECK_FALSE(core::copies_before_send(plain));
  const core::SenderCopy c = core::sender_copy(plain, true, false, false, Bandwidth{5e9});
  CHECK(c.rate.bytes_per_second == 0.0);
  CHECK(core::rate_time(4096, c.rate) == 0.0);
}

TEST_CASE("a host agent copies its payload to another agent of its node at its own copy rate") {
  core::Protocol p;
  p.agents_copy = true;
  CHECK(core::copies_before_send(p));
  const core::SenderCopy same = core::sender_copy(p, true, true, true, Bandwidth{5e9});
  CHECK(same.rate.bytes_per_second == 5e9);
  CHECK_FALSE(same.wire_bytes);
  // Not between nodes, not to a rank (a GPU's staging messages), and not for the ranks.
  CHECK(core::sender_copy(p, false, true, true, Bandwidth{5e9}).rate.bytes_per_second == 0.0);
  CHECK(core::sender_copy(p, true, true, false, Bandwidth{5e9}).rate.bytes_per_second == 0.0);
  CHECK(core::sender_copy(p, true, false, false, Bandwidth{5e9}).rate.bytes_per_second == 0.0);
}

TEST_CASE("an MPI rank copies the wire bytes of a message inside its node at one core's rate") {
  core::Protocol p;
  p.core_copy_bandwidth = Bandwidth{8e9};
  CHECK(core::copies_before_send(p));
  const core::SenderCopy c = core::sender_copy(p, true, false, false, Bandwidth{0.0});
  CHECK(c.rate.bytes_per_second == 8e9);
  CHECK(c.wire_bytes);
  CHECK(core::sender_copy(p, false, false, false, Bandwidth{0.0}).rate.bytes_per_second == 0.0);
  // A shared-memory protocol whose readers copy (HCOLL's, MPICH's cells): the sender does not.
  p.intra_node_overhead = core::Seconds{0.0};
  CHECK(core::sender_copy(p, true, false, false, Bandwidth{0.0}).rate.bytes_per_second == 0.0);
}

TEST_CASE("an MPI rank reduces at no more than one core's rate, an agent at its endpoint's") {
  core::Protocol p;
  CHECK(core::reduce_rate(p, Bandwidth{30e9}, false).bytes_per_second == 30e9);
  p.core_reduce_bandwidth = Bandwidth{5e9};
  CHECK(core::reduce_rate(p, Bandwidth{30e9}, false).bytes_per_second == 5e9);
  CHECK(core::reduce_rate(p, Bandwidth{2e9}, false).bytes_per_second == 2e9);
  CHECK(core::reduce_rate(p, Bandwidth{0.0}, false).bytes_per_second == 5e9);
  CHECK(core::reduce_rate(p, Bandwidth{30e9}, true).bytes_per_second == 30e9);
}
