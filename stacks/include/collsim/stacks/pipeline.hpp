#pragma once
// Pipelining as a lowering: a library that moves a message through a bounded FIFO in pieces
// (NCCL's slices, a rendezvous protocol's fragments) lets the receiver forward piece x while
// piece x + 1 is still on the wire. collsim's IR is store-and-forward per message, so the stack
// cuts each message into the library's pieces and a forwarding send waits only for the piece it
// forwards; the per-piece latency is then paid once to fill the pipeline and hidden behind the
// wire time of the following pieces, as on the real machine.

#include "collsim/core/schedule.hpp"

#include <cstdint>
#include <functional>

namespace collsim::stacks {

/// How many pieces a message of `length` payload bytes is cut into (at least 1).
using PieceRule = std::function<std::uint32_t(std::uint64_t length)>;

/// `schedule` with every send, recv and recv_reduce of n bytes replaced by rule(n) consecutive
/// messages over near-equal parts of its range (core::block_range: the first parts one byte
/// longer), in the same stream. Both ends of a message see the same length, so they cut it alike
/// and FIFO matching pairs the pieces. A dependency of one message on another over the same range
/// cut into the same number of pieces becomes piece-wise (piece x waits for piece x: forwarding
/// what has arrived); any other dependency waits for every piece. reduce and copy are kept whole.
core::Schedule split_messages(const core::Schedule& schedule, const PieceRule& rule);

} // namespace collsim::stacks
