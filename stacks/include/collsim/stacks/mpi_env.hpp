#pragma once
// What the MPI stacks read beyond the hardware (scenario `mpi: {call_overhead: ..., env: {...}}`),
// as UCX v1.12 reads it (src/ucp/core/ucp_context.c):
//   UCX_RNDV_THRESH  the message size from which a message moves by rendezvous: a size in UCX's
//                    memory units (a number with an optional b, k, kb, m, mb, g, gb suffix, powers
//                    of 1024), `inf` (never) or `auto` (the default: UCX computes it from the
//                    transports' costs, ucp_ep_config_calc_rndv_thresh, never below the eager
//                    transport's bounce-buffer size, which is 8 KiB for rc, dc, mm and tcp:
//                    UCX_RC_SEG_SIZE / UCX_MM_SEG_SIZE 8256 B less headers; collsim uses that
//                    floor, so it sends rendezvous earlier than UCX's computed value may);
//   UCX_TLS          the transports (a comma list of UCX's names and aliases, `^` in front to
//                    exclude them): checked against UCX's list; what it leaves for messages
//                    inside a node is priced (shared_memory_copies), the rest alike.
// and, on AWS EFA (nic_kind efa), where MPI libraries run over libfabric's efa provider instead
// of UCX, as libfabric v1.18.0 reads them (prov/efa/src/rdm/rxr_env.c, efa_hmem.c; byte counts
// as decimal integers, fi_param_get_size_t):
//   FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE  between nodes, the longest message sent without a
//                    handshake (eager in one packet, medium in several; default 65536);
//   FI_EFA_INTER_MIN_READ_MESSAGE_SIZE    between nodes, the shortest message the receiver reads
//                    by RDMA read after one handshake (default 1048576); between the two, the
//                    long-CTS protocol grants FI_EFA_TX_MIN_CREDITS packets (default 32) a time;
//   FI_EFA_SHM_MAX_MEDIUM_SIZE            inside a node (the shm provider), the longest eager
//                    message (default 4096); longer ones are read after a handshake.
// and Open MPI's coll/tuned forced algorithms (OMPI_MCA_coll_tuned_use_dynamic_rules,
// OMPI_MCA_coll_tuned_<coll>_algorithm and its segment size and fanouts; ompi_tuned.hpp).
// Other variables are kept and ignored (ignored_mpi_env lists them).

#include "collsim/core/scenario.hpp"
#include "collsim/core/units.hpp"
#include "collsim/stacks/ompi_tuned.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace collsim::stacks {

/// UCX's rendezvous threshold under `auto`, as collsim models it (see above).
inline constexpr std::uint64_t kUcxAutoRndvThresh = 8192;

/// How UCX moves a message between two processes of one node under UCX_TLS.
enum class SharedMemoryCopies : std::uint8_t {
  single, ///< a single-copy transport (cma, knem, xpmem): the receiver copies from the sender
  two,    ///< only posix or sysv FIFOs: copied in by the sender, out by the receiver
  none,   ///< no shared-memory transport: through the network transport (priced as `single`)
};

/// libfabric v1.18.0's efa provider (see the top of this file); its defaults.
struct EfaEnv {
  std::uint64_t inter_max_medium_bytes = 65536; ///< FI_EFA_INTER_MAX_MEDIUM_MESSAGE_SIZE
  std::uint64_t inter_min_read_bytes = 1048576; ///< FI_EFA_INTER_MIN_READ_MESSAGE_SIZE
  std::uint64_t shm_max_medium_bytes = 4096;    ///< FI_EFA_SHM_MAX_MEDIUM_SIZE
  std::uint64_t tx_min_credits = 32;            ///< FI_EFA_TX_MIN_CREDITS
};

struct MpiEnv {
  /// Messages of more than this many bytes move by rendezvous; 0: never (UCX_RNDV_THRESH=inf).
  std::uint64_t rendezvous_bytes = kUcxAutoRndvThresh;
  std::vector<std::string> tls; ///< UCX_TLS entries as written (empty: all)
  bool tls_excluded = false;    ///< UCX_TLS starts with '^'
  /// What UCX_TLS leaves for messages inside a node (single when unset).
  SharedMemoryCopies shared_memory = SharedMemoryCopies::single;
  core::Seconds call_overhead{0.0};
  EfaEnv efa;        ///< read on every fabric, used on EFA
  OmpiTuning tuning; ///< coll/tuned's forced algorithms (Open MPI's stacks' `auto`)
};

/// Reads `spec` (null: the defaults). A bad value throws ScenarioError at its position
/// (`mpi.env.UCX_TLS`), or UsageError when the map did not come from a file.
MpiEnv parse_mpi_env(const core::MpiSpec* spec);

/// The variables of `spec.env` that the model does not read.
std::vector<std::string> ignored_mpi_env(const core::MpiSpec& spec);

} // namespace collsim::stacks
