#pragma once
// Small hand-written schedules shared by the core tests.

#include "collsim/core/schedule.hpp"

#include <string>

namespace collsim::testing {

/// A 2-rank allreduce of `n` bytes: exchange into tmp, then reduce tmp into data.
inline core::Schedule exchange_allreduce(std::uint64_t n = 8) {
  core::ScheduleHeader h;
  h.collective = core::CollectiveKind::allreduce;
  h.ranks = 2;
  h.bytes = core::Bytes{n};
  h.data_bytes = n;
  h.tmp_bytes = n;
  h.algorithm = "exchange";
  core::Schedule s(h);
  for (core::Rank r = 0; r < 2; ++r) {
    s.begin_rank(r);
    const auto tx = s.send(1 - r, {core::Buffer::data, 0, n});
    const auto rx = s.recv(1 - r, {core::Buffer::tmp, 0, n});
    // The reduction overwrites data, which the send reads: it waits for both.
    s.reduce({core::Buffer::tmp, 0, n}, {core::Buffer::data, 0, n}, {tx, rx});
  }
  s.finish();
  return s;
}

} // namespace collsim::testing
