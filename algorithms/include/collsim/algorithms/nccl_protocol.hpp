#pragma once
// NCCL's wire protocols for schedules from elsewhere (issue 22): an MSCCL XML algorithm runs its
// thread blocks on NCCL's own primitives and connections (the MSCCL executor's msccl_kernel.cu
// calls NCCL's Primitives<> with the file's protocol), so it pays what NCCL's ring pays per
// message: the protocol's launch (baseLatency), per-hop latencies, wire efficiency and
// per-channel bandwidth (algorithms.md section 3; nccl_support.hpp make_protocol).

#include "collsim/algorithms/registry.hpp"
#include "collsim/core/schedule.hpp"

#include <string_view>

namespace collsim::algorithms {

/// core::Protocol of NCCL's ring with protocol `proto` ("Simple", "LL" or "LL128", MSCCL XML's
/// spelling) on the request's topology. Throws UsageError for another name.
core::Protocol nccl_ring_protocol(std::string_view proto, const Request& req);

} // namespace collsim::algorithms
