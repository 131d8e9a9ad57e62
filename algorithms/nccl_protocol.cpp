// NCCL's ring protocol for imported algorithms (collsim/algorithms/nccl_protocol.hpp).

#include "collsim/algorithms/nccl_protocol.hpp"

#include "nccl_support.hpp"

#include "collsim/core/errors.hpp"

#include <string>

namespace collsim::algorithms {

core::Protocol nccl_ring_protocol(std::string_view proto, const Request& req) {
  using nccl::Algo;
  using nccl::Proto;
  Proto p = Proto::simple;
  if (proto == "LL") {
    p = Proto::ll;
  } else if (proto == "LL128") {
    p = Proto::ll128;
  } else if (proto != "Simple") {
    throw core::UnknownNameError("NCCL protocol", proto, {"Simple", "LL", "LL128"});
  }
  return nccl::make_protocol(Algo::ring, p, req);
}

} // namespace collsim::algorithms
