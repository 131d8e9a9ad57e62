#pragma once
// The schedule IR (ARCHITECTURE.md, "Core types"): per rank, a program of operations over byte
// ranges of that rank's buffers, with explicit dependencies, in the spirit of LogGOPSim's GOAL.
//
// Semantics that every engine and checker shares:
//   * A rank issues its operations in program order (index order). An operation issues once the
//     operations it depends on have completed and the operation before it has issued; issuing never
//     waits for an earlier operation to complete unless a dependency says so (a non-blocking MPI
//     program that posts in order).
//   * send(peer, range) and recv(peer, range) match first-in first-out per connection: the
//     ordered pair of ranks and the messages' tag (0 unless set_tag; MSCCL's channel): the k-th
//     send from a to b with tag t matches the k-th recv on b from a with tag t; the two lengths
//     must be equal.
//   * recv_reduce combines the incoming bytes into the target range (target := target (+)
//   incoming);
//     reduce and copy act locally from a source range to a target range of equal length.
//
// Storage: 16 packed bytes per operation for what engines read (kind, peer, length, one inline
// dependency) plus the 8-byte offset, 32-bit ids, and a side array only for operations with two or
// more dependencies: a 4096-rank ring allreduce (67 million operations) takes 1.6 GB.

#include "collsim/core/big_vector.hpp"
#include "collsim/core/collapse.hpp"
#include "collsim/core/collective.hpp"
#include "collsim/core/memory_meter.hpp"
#include "collsim/core/protocol.hpp"
#include "collsim/core/units.hpp"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace collsim::core {

using Rank = std::uint32_t;
using OpId = std::uint32_t; ///< global operation index
using BufferId = std::uint8_t;

/// The buffers every rank owns. `data` is the collective's user buffer (in place); `tmp` is
/// scratch.
enum class Buffer : BufferId { data = 0, tmp = 1 };
inline constexpr int kBufferCount = 2;
std::string_view to_string(Buffer b);

/// calc: the rank is busy for a time and touches no buffer (LogGOPSim's GOAL `calc`): what a
/// stack books for work its library does outside the schedule's data movement, such as a host
/// process copying a staged buffer or the kernel faulting in fresh pages.
enum class OpKind : std::uint8_t {
  send = 0,
  recv = 1,
  recv_reduce = 2,
  reduce = 3,
  copy = 4,
  calc = 5
};
std::string_view to_string(OpKind k);

/// A byte range [offset, offset + length) of one of the rank's buffers.
struct Range {
  Buffer buffer = Buffer::data;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool operator==(const Range&) const = default;
};

/// One operation, unpacked (for checkers, printers and tests; engines read the arrays directly).
struct Op {
  OpKind kind = OpKind::send;
  Rank rank = 0;
  std::uint32_t local = 0; ///< index within the rank's program
  Rank peer = 0;           ///< send/recv/recv_reduce only
  Range target;            ///< the range sent from, received into, or written by reduce/copy
  Range source;            ///< reduce/copy only: the range read
  std::vector<std::uint32_t> deps; ///< local indices of the operations this one waits for
  std::uint32_t stream = 0;        ///< the issue stream within the rank (Schedule::set_stream)
  std::uint32_t tag = 0;           ///< send/recv/recv_reduce: the connection tag (set_tag)
  double calc_seconds = 0.0;       ///< calc only: how long the rank is busy
  bool operator==(const Op&) const = default;
};

/// What a schedule computes: the collective, the rank count, the message size in nccl-tests'
/// convention (allreduce/reduce/bcast: the vector on each rank; allgather/reduce_scatter/alltoall/
/// gather/scatter: the whole gathered vector, p times the block), and the root.
struct ScheduleHeader {
  CollectiveKind collective = CollectiveKind::allreduce;
  std::uint32_t ranks = 1;
  Bytes bytes{0};
  Rank root = 0;
  std::uint64_t data_bytes = 0; ///< size of each rank's `data` buffer
  std::uint64_t tmp_bytes = 0;  ///< size of each rank's `tmp` buffer
  std::string algorithm;        ///< informational: the generator's name
  /// Per-rank counts of a v-collective (MPI's allgatherv, gatherv, scatterv, alltoallv and
  /// MPI_Reduce_scatter); empty for the uniform collectives. allgather, gather, scatter,
  /// reduce_scatter: `ranks` entries, the bytes of rank i's block; the blocks lie back to back in
  /// rank order (contiguous displacements), so `bytes` is their sum. alltoall: ranks x ranks
  /// entries, row i the bytes rank i sends to each rank (its sendcounts; the columns are the
  /// recvcounts); `bytes` is the largest row sum, the input lies in data[0, bytes) ordered by
  /// destination and the output in data[bytes, bytes + largest column sum) ordered by source.
  /// core/layout.hpp computes the displacements (BlockLayout) and checks the counts.
  std::vector<std::uint64_t> counts;
  /// Participants beyond the ranks: device names (of the topology the schedule was generated
  /// for) that take part as participants ranks, ranks + 1, ...: switches reducing in the network
  /// (InfiniBand SHARP, NVLink SHARP), or CPU sockets where a stack's host processes stage the
  /// ranks' GPU buffers (stacks/host_staging.hpp; several agents may share a device). An agent runs
  /// a program like a rank but has no postcondition, starts with undefined buffers (data_bytes and
  /// tmp_bytes, like a rank), and has a port per link: engines do not serialise its messages. Empty
  /// for host-based algorithms.
  std::vector<std::string> agents;
  /// The wire protocol (NCCL LL / LL128 / Simple; algorithms.md section 3); the default is plain
  /// point-to-point messages.
  Protocol protocol;
  /// A collapsed schedule (collapse.hpp): `ranks` programs stand for collapse.ranks ranks, one per
  /// class; messages name their partner's representative as peer and the partner as route_peer.
  /// Engines other than loggp refuse it, and it has no text form.
  Collapse collapse;
  /// The ranks the schedule stands for: `ranks`, or a collapsed schedule's full count (what
  /// stacks and engines size the collective by).
  [[nodiscard]] std::uint32_t full_ranks() const {
    return collapse.active() ? collapse.ranks : ranks;
  }
  /// The sweep point's memory meter (memory_meter.hpp) the schedule reports its arrays to as
  /// they grow, and the engine its state; none by default. Not part of the schedule's value.
  MeterRef meter;
  bool operator==(const ScheduleHeader&) const = default;
};

class Schedule {
public:
  /// The most operations one schedule may hold (engines keep two state bits in each id).
  static constexpr std::size_t kMaxOps = std::size_t{1} << 30;
  /// The most issue streams a rank may use: NCCL's MAXCHANNELS (64) is the most a built-in
  /// generator uses; an imported MSCCL XML algorithm runs each thread block as a stream, and
  /// published files have up to 256 per GPU (msccl-tools experiments_ar/ap_32.xml). The stream is
  /// stored in one byte per operation.
  static constexpr std::uint32_t kMaxStreams = 256;
  /// The most connection tags (set_tag): MSCCL's channels (MAXCHANNELS 32 in its NCCL 2.12 fork,
  /// 64 in later NCCL) fit; stored in one byte per operation.
  static constexpr std::uint32_t kMaxTags = 256;

  Schedule() = default;
  explicit Schedule(ScheduleHeader header);

  [[nodiscard]] const ScheduleHeader& header() const { return header_; }
  /// Replaces the wire protocol (a scenario's corrections to NCCL's protocols, applied after
  /// generation).
  void set_protocol(Protocol protocol) { header_.protocol = std::move(protocol); }
  [[nodiscard]] std::uint32_t ranks() const { return header_.ranks; }
  /// Ranks plus in-network agents (participants ranks()..participants()-1).
  [[nodiscard]] std::uint32_t participants() const {
    return header_.ranks + static_cast<std::uint32_t>(header_.agents.size());
  }
  [[nodiscard]] std::size_t op_count() const { return ops_.size(); }
  [[nodiscard]] std::size_t dep_count() const { return dep_total_; }
  /// Bytes of heap memory the arrays use (capacity, not size).
  [[nodiscard]] std::size_t memory_bytes() const;

  // --- building -------------------------------------------------------------------------------
  /// Starts the program of `rank`. Participants (ranks, then agents) must be started in order
  /// 0, 1, ..., participants()-1, each once; operations added belong to the most recently started.
  void begin_rank(Rank rank);
  /// Adds operations to the current rank and returns their local index. `deps` are local indices.
  std::uint32_t send(Rank peer, Range from, std::initializer_list<std::uint32_t> deps = {});
  std::uint32_t recv(Rank peer, Range into, std::initializer_list<std::uint32_t> deps = {});
  std::uint32_t recv_reduce(Rank peer, Range into, std::initializer_list<std::uint32_t> deps = {});
  std::uint32_t reduce(Range from, Range into, std::initializer_list<std::uint32_t> deps = {});
  std::uint32_t copy(Range from, Range into, std::initializer_list<std::uint32_t> deps = {});
  /// Busy for `time` (>= 0, kept in whole nanoseconds so that the text form is exact),
  /// touching no buffer.
  std::uint32_t calc(Seconds time, std::span<const std::uint32_t> deps = {});
  /// Puts the operations added to the current rank from now on into issue stream `stream`
  /// (< kMaxStreams; begin_rank starts every rank in stream 0). A rank issues the operations of
  /// each stream in program order, the streams independently of one another, like the thread
  /// blocks of NCCL's channels or the warps of a tree's reduce-up and broadcast-down: an operation
  /// waiting for its dependencies holds back only the later operations of its own stream.
  /// Dependencies may cross streams; matching (FIFO per connection, in program order) does not
  /// look at streams.
  void set_stream(std::uint32_t stream);
  /// Puts the messages (send, recv, recv_reduce) added to the current rank from now on on
  /// connection tag `tag` (< kMaxTags; begin_rank starts every rank with tag 0). Messages match
  /// first-in first-out per (sender, receiver, tag): independent FIFOs between the same two ranks,
  /// as MSCCL's channels are (each (peer, channel) connection a ring of its own, matched in the
  /// order of the one thread block that drives it). Local operations carry no tag.
  void set_tag(std::uint32_t tag);
  /// General form used by the parser and by generators that compute dependency lists.
  std::uint32_t add(OpKind kind, Rank peer, Range target, Range source,
                    std::span<const std::uint32_t> deps);
  /// Appends participant `r`'s program of the finished schedule `from` to the current
  /// participant, operation by operation (kinds, ranges, streams, tags and calc times as they
  /// are): a message's peer moves by `peer_shift`, a local dependency by the number of operations
  /// the current participant had before, and an operation without dependencies waits for local
  /// operation `entry` (one added before). What a stack does when it runs an algorithm's programs
  /// on other participants (stacks/host_staging.hpp: host processes): several times cheaper per
  /// operation than add(). Returns the new local indices of the appended operations that no
  /// other appended operation waits for. Into a collapsed schedule a message's peer (`from`'s
  /// peer + `peer_shift`) is taken as add() takes it.
  std::vector<std::uint32_t> append_program(const Schedule& from, Rank r, Rank peer_shift,
                                            std::uint32_t entry);
  /// Ends building: starts any ranks not yet started (with empty programs).
  void finish();
  /// Reserves space for `ops` operations and `deps` dependencies.
  void reserve(std::size_t ops, std::size_t deps);
  /// Reports the arrays to `meter` from now on (a schedule built without one, or a copy); may
  /// throw MemoryRetry (memory_meter.hpp).
  void set_meter(MeterRef meter);

  // --- reading --------------------------------------------------------------------------------
  [[nodiscard]] OpId rank_begin(Rank r) const { return rank_begin_[r]; }
  [[nodiscard]] OpId rank_end(Rank r) const { return rank_begin_[r + 1]; }
  [[nodiscard]] OpKind kind(OpId id) const { return static_cast<OpKind>(ops_[id].kind & 0x0f); }
  [[nodiscard]] Rank peer(OpId id) const { return ops_[id].arg; } ///< send/recv/recv_reduce only
  [[nodiscard]] Range target(OpId id) const;
  [[nodiscard]] Range source(OpId id) const; ///< reduce/copy only
  /// calc only: how long the rank is busy (0 for other kinds).
  [[nodiscard]] Seconds calc_time(OpId id) const;
  [[nodiscard]] std::uint64_t calc_ns(OpId id) const;
  [[nodiscard]] std::uint64_t length(OpId id) const {
    const std::uint32_t len = ops_[id].length;
    return len != kLongLength ? len : long_length(id);
  }
  /// send/recv/recv_reduce: the partner whose route the message takes; peer(id) except in a
  /// collapsed schedule (collapse.hpp), where peer(id) is that partner's representative.
  [[nodiscard]] Rank route_peer(OpId id) const {
    return route_peers_.empty() ? ops_[id].arg : route_peers_[id];
  }
  /// Local indices of the operations `id` depends on.
  [[nodiscard]] std::span<const std::uint32_t> deps(OpId id) const {
    const PackedOp& o = ops_[id];
    if (o.ndeps <= 1) {
      return {&o.dep, o.ndeps};
    }
    return {extra_deps_.data() + o.dep, o.ndeps};
  }
  [[nodiscard]] Rank rank_of(OpId id) const; ///< binary search over ranks
  /// The issue stream of `id` (0 unless the generator used set_stream).
  [[nodiscard]] std::uint32_t stream(OpId id) const { return streams_.empty() ? 0 : streams_[id]; }
  /// One more than the largest stream any operation uses (1: a single stream per rank).
  [[nodiscard]] std::uint32_t stream_count() const { return stream_count_; }
  /// The connection tag of message `id` (0 unless the generator used set_tag; 0 for local
  /// operations).
  [[nodiscard]] std::uint32_t tag(OpId id) const { return tags_.empty() ? 0 : tags_[id]; }
  /// True when some message carries a tag other than 0.
  [[nodiscard]] bool tagged() const { return !tags_.empty(); }
  /// Hints the CPU to load operation `id`'s fields (engines call it well before they need them:
  /// their accesses jump between thousands of ranks' programs, which no hardware prefetcher
  /// follows).
  void prefetch(OpId id) const { __builtin_prefetch(ops_.data() + id); }
  [[nodiscard]] Op op(OpId id) const;

  bool operator==(const Schedule& other) const;

private:
  struct LocalSource {
    std::uint64_t offset;
    Buffer buffer;
    bool operator==(const LocalSource&) const = default;
  };
  void check_building(const char* what) const;
  [[nodiscard]] std::uint64_t long_length(OpId id) const;
  static constexpr std::uint32_t kLongLength = 0xffffffffU;

  /// What engines read, packed in 16 bytes so that one cache line holds four operations: engines
  /// step through thousands of ranks' programs at once, and separate arrays per field would need
  /// a cache line per field per rank.
  struct PackedOp {
    std::uint32_t arg;        // peer, index into local_sources_ (reduce/copy) or calc_times_ (calc)
    std::uint32_t length;     // length, or kLongLength: look up long_lengths_
    std::uint32_t dep;        // the single dependency, or the first index into extra_deps_
    std::uint32_t kind : 8;   // bits 0-3: OpKind, bits 4-5: target buffer
    std::uint32_t ndeps : 24; // number of dependencies
    bool operator==(const PackedOp&) const = default;
  };
  static_assert(sizeof(PackedOp) == 16);

  /// Before the per-operation arrays get new buffers for `ops` operations and the dependency
  /// lists one for `deps` (0: none): reports the old buffers plus the new to the meter, since
  /// both exist until the copy is done (libstdc++ doubles a full vector).
  void charge_growth(std::size_t ops, std::size_t deps);

  ScheduleHeader header_;
  MeterLease lease_; // what the arrays hold on header_.meter
  BigVector<PackedOp> ops_;
  BigVector<std::uint64_t> offset_;       // target offset (engines never read it)
  std::vector<std::uint32_t> extra_deps_; // dependency lists of operations with two or more
  std::size_t dep_total_ = 0;
  std::vector<OpId> rank_begin_{0};
  std::vector<LocalSource> local_sources_;
  std::vector<std::uint64_t> calc_ns_;                       // per calc operation
  std::vector<std::pair<OpId, std::uint64_t>> long_lengths_; // sorted by op id
  BigVector<std::uint8_t> streams_; // per operation; empty while every operation is in stream 0
  std::uint32_t stream_ = 0;        // the stream of operations added next
  std::uint32_t stream_count_ = 1;
  BigVector<std::uint8_t> tags_; // per operation; empty while every message has tag 0
  BigVector<Rank> route_peers_;  // per operation of a collapsed schedule; empty otherwise
  std::uint32_t tag_ = 0;        // the tag of messages added next
  Rank next_rank_ = 0;
  bool finished_ = false;
};

/// The issue lanes of a schedule: one per (participant, stream it uses), each with its operations
/// in program order. Engines and the untimed checker advance a cursor per lane (a lane waits for
/// its next operation's dependencies; other lanes go on). With one stream per rank the lanes are
/// the participants and their programs, and no order array is built.
class Lanes {
public:
  explicit Lanes(const Schedule& s);
  [[nodiscard]] std::size_t count() const { return lane_rank_.size(); }
  [[nodiscard]] Rank rank(std::size_t lane) const { return lane_rank_[lane]; }
  /// Positions [begin, end) of the lane's operations; op_at(position) is the operation.
  [[nodiscard]] std::size_t begin(std::size_t lane) const { return lane_begin_[lane]; }
  [[nodiscard]] std::size_t end(std::size_t lane) const { return lane_begin_[lane + 1]; }
  [[nodiscard]] OpId op_at(std::size_t position) const {
    return order_.empty() ? static_cast<OpId>(position) : order_[position];
  }
  /// The lanes of participant r: [first_lane(r), first_lane(r + 1)).
  [[nodiscard]] std::size_t first_lane(Rank r) const { return rank_lane_[r]; }

private:
  std::vector<Rank> lane_rank_;
  std::vector<std::size_t> lane_begin_; // positions, one past the last lane at the end
  std::vector<std::size_t> rank_lane_;  // per participant, one past the last at the end
  BigVector<OpId> order_;               // empty: position = operation id
};

/// The stable text form (GOAL-like, diffable). parse_schedule(print_schedule(s)) == s.
std::string print_schedule(const Schedule& s);
/// Parses the text form; errors are ScheduleError with "name:line:column: error: ...".
Schedule parse_schedule(std::string_view text, std::string_view source_name = "<schedule>");

/// The `index`-th of `parts` near-equal pieces of [0, total): the first total % parts pieces get
/// one extra byte (the MPI convention for distributing a remainder).
constexpr std::pair<std::uint64_t, std::uint64_t>
block_range(std::uint64_t total, std::uint64_t parts, std::uint64_t index) {
  const std::uint64_t base = total / parts;
  const std::uint64_t extra = total % parts;
  const std::uint64_t begin = index * base + (index < extra ? index : extra);
  const std::uint64_t len = base + (index < extra ? 1 : 0);
  return {begin, len};
}

} // namespace collsim::core
