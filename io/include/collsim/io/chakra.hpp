#pragma once
// Chakra execution traces (issue 22; docs/interchange.md): a collsim schedule as the per-NPU
// files ASTRA-sim reads, so that a collsim algorithm runs in ASTRA-sim as a custom collective.
//
// Format (mlcommons/chakra schema/protobuf/et_def.proto and src/feeder; ../shared/reference/
// interchange.md section 4): one file per NPU, `<prefix>.<npu>.et`, a stream of protobuf messages
// each preceded by its length as a varint: first a GlobalMetadata, then the Nodes. Written with
// the protobuf wire format directly (varints and length-delimited fields), no libprotobuf.

#include "collsim/core/schedule.hpp"
#include "collsim/core/units.hpp"

#include <string>
#include <vector>

namespace collsim::io {

/// How local work becomes COMP_NODE time (Chakra moves no data): 0 is free.
struct ChakraExportOptions {
  core::Bandwidth reduce_bandwidth{0.0};
  core::Bandwidth copy_bandwidth{0.0};
};

/// One Chakra ET file's bytes per rank. send and recv are COMM_SEND_NODE and COMM_RECV_NODE with
/// the int32 attributes comm_src, comm_dst, comm_tag and the int64 comm_size (bytes) that
/// ASTRA-sim's feeder reads; the tag is the message's ordinal within its ordered pair of ranks,
/// so that matching by (source, destination, tag) pairs what collsim pairs first-in first-out.
/// recv_reduce is a receive and a COMP_NODE that depends on it; reduce, copy and calc are
/// COMP_NODEs whose duration_micros is the time rounded to the nearest microsecond (Chakra's
/// unit). Dependencies are data_deps; collsim's program order is not written (a Chakra node runs
/// when its dependencies are done). UsageError for a schedule with in-network agents, which
/// Chakra cannot express.
std::vector<std::string> write_chakra(const core::Schedule& s,
                                      const ChakraExportOptions& options = {});

} // namespace collsim::io
