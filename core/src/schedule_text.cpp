// The schedule text form. Example (a 2-rank allreduce by exchange):
//
//   collsim-schedule 1
//   collective allreduce
//   algorithm recursive_doubling
//   ranks 2
//   bytes 8
//   root 0
//   buffers data=8 tmp=8
//   rank 0 {
//     l0: send data[0..8) to 1
//     l1: recv tmp[0..8) from 1
//     l2: reduce tmp[0..8) -> data[0..8) requires l1
//   }
//   rank 1 { ... }
//
// Ranges are half-open byte ranges; `requires` lists local labels (GOAL's "l2 requires l1");
// `stream N` (before `requires`) puts an operation in issue stream N (Schedule::set_stream).
//
// Optional header lines after `buffers`: `counts N...` (a v-collective's per-rank counts,
// ScheduleHeader::counts), `agents NAME...` (in-network switches, by device name,
// taking part as participants ranks, ranks+1, ...; their programs follow the ranks' as
// `agent N { ... }`) and `protocol NAME efficiency=E launch=S message_latency=S
// inter_node_latency=S [ports=per_link] [stream_bandwidth=B] [intra_node_efficiency=E]
// [inter_node_efficiency=E] [fifo_slots=N] [intra_node_overhead=S] [rendezvous_bytes=N]
// [rendezvous_window_bytes=N] [rendezvous_read_bytes=N] [intra_node_rendezvous_bytes=N]
// [proxy_overhead=S] [agents_copy] [core_copy_bandwidth=B] [core_reduce_bandwidth=B]` (seconds,
// bytes per second; NCCL's LL/LL128/Simple; the
// optional fields are core::Protocol's, in its order; protocol_text.cpp prints the line).

#include "text_reader.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/layout.hpp"
#include "collsim/core/schedule.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace collsim::core {
namespace {

std::string range_text(const Range& r) {
  return fmt::format("{}[{}..{})", to_string(r.buffer), r.offset, r.offset + r.length);
}

} // namespace

std::string print_schedule(const Schedule& s) {
  const auto& h = s.header();
  if (h.collapse.active()) {
    // Engines run collapsed schedules; users see and import full ones (collapse.hpp).
    throw InternalError("a collapsed schedule has no text form");
  }
  std::string out;
  out.reserve(64 + s.op_count() * 40);
  auto it = std::back_inserter(out);
  fmt::format_to(it, "collsim-schedule 1\ncollective {}\n", to_string(h.collective));
  if (!h.algorithm.empty()) {
    fmt::format_to(it, "algorithm {}\n", h.algorithm);
  }
  fmt::format_to(it, "ranks {}\nbytes {}\nroot {}\nbuffers data={} tmp={}\n", h.ranks,
                 h.bytes.value, h.root, h.data_bytes, h.tmp_bytes);
  if (!h.counts.empty()) {
    fmt::format_to(it, "counts {}\n", fmt::join(h.counts, " "));
  }
  if (!h.agents.empty()) {
    fmt::format_to(it, "agents {}\n", fmt::join(h.agents, " "));
  }
  if (!(h.protocol == Protocol{})) {
    fmt::format_to(it, "{}\n", protocol_line(h.protocol));
  }
  for (Rank r = 0; r < s.participants(); ++r) {
    fmt::format_to(it, "{} {} {{\n", r < s.ranks() ? "rank" : "agent", r);
    for (OpId id = s.rank_begin(r); id < s.rank_end(r); ++id) {
      const OpKind k = s.kind(id);
      fmt::format_to(it, "  l{}: {} ", id - s.rank_begin(r), to_string(k));
      switch (k) {
      case OpKind::send:
        fmt::format_to(it, "{} to {}", range_text(s.target(id)), s.peer(id));
        break;
      case OpKind::recv:
      case OpKind::recv_reduce:
        fmt::format_to(it, "{} from {}", range_text(s.target(id)), s.peer(id));
        break;
      case OpKind::reduce:
      case OpKind::copy:
        fmt::format_to(it, "{} -> {}", range_text(s.source(id)), range_text(s.target(id)));
        break;
      case OpKind::calc: fmt::format_to(it, "{}ns", s.calc_ns(id)); break;
      }
      if (s.tag(id) != 0) {
        fmt::format_to(it, " tag {}", s.tag(id));
      }
      if (s.stream(id) != 0) {
        fmt::format_to(it, " stream {}", s.stream(id));
      }
      const auto deps = s.deps(id);
      if (!deps.empty()) {
        out += " requires";
        for (auto d : deps) {
          fmt::format_to(it, " l{}", d);
        }
      }
      out += '\n';
    }
    out += "}\n";
  }
  return out;
}

namespace {

/// The fewest bytes a participant's block takes: "rank 0 {\n}" (an agent's is longer).
constexpr std::size_t kMinRankBlock = 10;

class Parser : public TextReader {
public:
  Parser(std::string_view text, std::string_view name) : TextReader(text, name) {}

  Schedule run() {
    ScheduleHeader h;
    expect_word("collsim-schedule");
    if (read_uint("format version") != 1) {
      fail("unsupported schedule format version (this collsim reads version 1)");
    }
    end_line();
    expect_word("collective");
    {
      const auto word = read_word("a collective name");
      auto c = parse_collective(word);
      if (!c) {
        fail(fmt::format("unknown collective '{}'", word));
      }
      h.collective = *c;
    }
    end_line();
    if (peek_word() == "algorithm") {
      read_word("algorithm");
      h.algorithm = std::string(read_word("an algorithm name"));
      end_line();
    }
    expect_word("ranks");
    const std::uint64_t ranks = read_uint("a rank count");
    if (ranks == 0 || ranks > (1ULL << 31)) {
      fail("rank count must be between 1 and 2^31");
    }
    // Every rank has its block below, at least "rank R {" and "}" on two lines: a count the rest
    // of the file cannot hold is refused before the schedule sets aside room for it (a fuzzed
    // file declared 1.4 billion ranks: 5.6 GB reserved up front).
    if (ranks > (text_.size() - pos_) / kMinRankBlock) {
      fail(fmt::format("rank count {} is more than the file holds: every rank needs its own block "
                       "'rank R {{ ... }}' below",
                       ranks));
    }
    h.ranks = static_cast<std::uint32_t>(ranks);
    end_line();
    expect_word("bytes");
    h.bytes = Bytes{read_uint("a byte count")};
    end_line();
    expect_word("root");
    h.root = static_cast<Rank>(read_uint("a root rank"));
    if (h.root >= h.ranks) {
      fail("root must be less than the rank count");
    }
    end_line();
    expect_word("buffers");
    expect_literal("data=");
    h.data_bytes = read_uint("the data buffer size");
    expect_literal("tmp=");
    h.tmp_bytes = read_uint("the tmp buffer size");
    end_line();
    if (peek_word() == "counts") {
      read_word("counts");
      while (!at_line_end()) {
        h.counts.push_back(read_uint("a byte count"));
      }
      if (const std::string why = counts_problem(h.collective, h.ranks, h.bytes.value, h.counts);
          !why.empty()) {
        fail(why);
      }
      end_line();
    }
    if (peek_word() == "agents") {
      read_word("agents");
      while (!at_line_end()) {
        h.agents.emplace_back(read_token("a device name"));
      }
      if (h.agents.empty()) {
        fail("'agents' needs at least one device name");
      }
      end_line();
    }
    if (peek_word() == "protocol") {
      read_word("protocol");
      h.protocol = read_protocol_line(*this);
    }

    Schedule s(h);
    const Rank participants = s.participants();
    for (Rank r = 0; r < participants; ++r) {
      skip_blank_lines();
      const char* word = r < h.ranks ? "rank" : "agent";
      expect_word(word);
      if (read_uint("a participant number") != r) {
        fail(fmt::format("expected '{} {}' (participants must appear in order: ranks, then agents)",
                         word, r));
      }
      expect_literal("{");
      end_line();
      s.begin_rank(r);
      std::uint32_t local = 0;
      while (true) {
        skip_blank_lines();
        if (at_end()) {
          fail(fmt::format("unexpected end of schedule inside rank {}", r));
        }
        if (peek_char() == '}') {
          ++pos_;
          ++col_;
          end_line();
          break;
        }
        parse_op(s, local++);
      }
    }
    skip_blank_lines();
    if (!at_end()) {
      fail("unexpected text after the last rank");
    }
    s.finish();
    return s;
  }

private:
  void parse_op(Schedule& s, std::uint32_t expected_label) {
    expect_literal("l");
    if (read_uint("an operation label") != expected_label) {
      fail(fmt::format("expected label l{} (labels number each rank's operations from l0)",
                       expected_label));
    }
    expect_literal(":");
    const auto kw = read_word("an operation (send, recv, recv_reduce, reduce, copy, calc)");
    OpKind kind{};
    if (kw == "send") {
      kind = OpKind::send;
    } else if (kw == "recv") {
      kind = OpKind::recv;
    } else if (kw == "recv_reduce") {
      kind = OpKind::recv_reduce;
    } else if (kw == "reduce") {
      kind = OpKind::reduce;
    } else if (kw == "copy") {
      kind = OpKind::copy;
    } else if (kw == "calc") {
      kind = OpKind::calc;
    } else {
      fail(fmt::format(
               "unknown operation '{}' (valid: send, recv, recv_reduce, reduce, copy, calc)", kw),
           kw.size());
    }
    Range target;
    Range source;
    Rank peer = 0;
    std::uint64_t ns = 0;
    if (kind == OpKind::calc) {
      ns = read_uint("a duration in nanoseconds");
      expect_literal("ns");
      if (ns > (1ULL << 53)) {
        fail("calc duration out of range");
      }
    } else if (kind == OpKind::reduce || kind == OpKind::copy) {
      source = read_range();
      expect_literal("->");
      target = read_range();
      if (source.length != target.length) {
        fail("source and target ranges must have the same length");
      }
    } else {
      target = read_range();
      expect_word(kind == OpKind::send ? "to" : "from");
      const auto p = read_uint("a peer rank");
      if (p >= (1ULL << 32)) {
        fail("peer rank out of range");
      }
      peer = static_cast<Rank>(p);
    }
    std::uint32_t tag = 0;
    if (peek_word() == "tag") {
      if (kind != OpKind::send && kind != OpKind::recv && kind != OpKind::recv_reduce) {
        fail("only messages (send, recv, recv_reduce) have a tag");
      }
      read_word("tag");
      const auto t = read_uint("a tag");
      if (t >= Schedule::kMaxTags) {
        fail(fmt::format("tag {} out of range (messages have at most {} tags)", t,
                         Schedule::kMaxTags));
      }
      tag = static_cast<std::uint32_t>(t);
    }
    std::uint32_t stream = 0;
    if (peek_word() == "stream") {
      read_word("stream");
      const auto k = read_uint("a stream number");
      if (k >= Schedule::kMaxStreams) {
        fail(fmt::format("stream {} out of range (a rank has at most {} streams)", k,
                         Schedule::kMaxStreams));
      }
      stream = static_cast<std::uint32_t>(k);
    }
    std::vector<std::uint32_t> deps;
    if (peek_word() == "requires") {
      read_word("requires");
      while (!at_line_end()) {
        expect_literal("l");
        const auto d = read_uint("a label");
        if (d >= (1ULL << 32)) {
          fail("label out of range");
        }
        deps.push_back(static_cast<std::uint32_t>(d));
      }
      if (deps.empty()) {
        fail("'requires' needs at least one label");
      }
    }
    end_line();
    s.set_stream(stream);
    s.set_tag(tag);
    if (kind == OpKind::calc) {
      s.calc(Seconds{static_cast<double>(ns) * 1e-9}, deps);
    } else {
      s.add(kind, peer, target, source, deps);
    }
  }

  Range read_range() {
    skip_spaces();
    const auto buf = read_ident();
    Range r;
    if (buf == "data") {
      r.buffer = Buffer::data;
    } else if (buf == "tmp") {
      r.buffer = Buffer::tmp;
    } else {
      fail(fmt::format("unknown buffer '{}' (valid: data, tmp)", buf), buf.size());
    }
    expect_literal("[");
    const auto begin = read_uint("a range start");
    expect_literal("..");
    const auto end = read_uint("a range end");
    expect_literal(")");
    if (end < begin) {
      fail("range end is before its start");
    }
    r.offset = begin;
    r.length = end - begin;
    return r;
  }
};

} // namespace

Schedule parse_schedule(std::string_view text, std::string_view source_name) {
  return Parser(text, source_name).run();
}

} // namespace collsim::core
