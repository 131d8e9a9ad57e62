// A collsim schedule as MSCCL XML (msccl.hpp, write_msccl_xml), following the exporter checklist
// of ../shared/reference/interchange.md section 1.9 and the parser limits of section 1.6: no XML
// declaration, double-quoted attributes on one line, every attribute of both runtime dialects.

#include "collsim/io/msccl.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <tuple>

namespace collsim::io {
namespace {

/// The original runtime's MSCCL_MAX_NUM_STEPS (the executor and RCCL take 64).
constexpr std::size_t kMaxSteps = 256;
constexpr std::uint64_t kMaxCount = 71;

struct Step {
  std::string type;
  char srcbuf = 'i';
  std::uint64_t srcoff = 0;
  char dstbuf = 'i';
  std::uint64_t dstoff = 0;
  std::uint64_t cnt = 0;
  std::int64_t depid = -1;
  std::int64_t deps = -1;
  bool hasdep = false;
};

struct Block {
  std::int64_t send = -1;
  std::int64_t recv = -1;
  std::uint32_t chan = 0;
  std::vector<core::OpId> ops; ///< in program order
  std::vector<Step> steps;     ///< after nops are added
};

class Writer {
public:
  Writer(const core::Schedule& s, const MscclExportOptions& o) : s_(s), o_(o) {}

  std::string write() {
    refuse_what_msccl_cannot_say();
    choose_chunks();
    assign_blocks();
    std::string out = header();
    for (core::Rank r = 0; r < s_.ranks(); ++r) {
      out += gpu(r);
    }
    out += "</algo>\n";
    return out;
  }

private:
  [[noreturn]] void refuse(const std::string& why) const {
    throw core::UsageError(fmt::format("MSCCL XML cannot express this schedule: {}", why));
  }

  void refuse_what_msccl_cannot_say() {
    const core::ScheduleHeader& h = s_.header();
    if (!h.agents.empty()) {
      refuse("it has in-network agents (MSCCL programs run on GPUs only)");
    }
    if (!h.counts.empty()) {
      refuse("it has per-rank counts (MSCCL chunks are equal)");
    }
    static const std::map<core::CollectiveKind, std::string> kColl = {
        {core::CollectiveKind::allreduce, "allreduce"},
        {core::CollectiveKind::allgather, "allgather"},
        {core::CollectiveKind::reduce, "reduce"},
        {core::CollectiveKind::bcast, "broadcast"},
        {core::CollectiveKind::alltoall, "alltoall"},
        // The executor and RCCL spell it so; the original runtime's reduce_scatter cannot be
        // written in the same file (interchange.md section 1.6).
        {core::CollectiveKind::reduce_scatter, "reducescatter"},
        {core::CollectiveKind::gather, "gather"},
        {core::CollectiveKind::scatter, "scatter"}};
    const auto c = kColl.find(h.collective);
    if (c == kColl.end()) {
      refuse(fmt::format("MSCCL has no {}", core::to_string(h.collective)));
    }
    coll_ = c->second;
    if (h.bytes.value == 0) {
      refuse("a 0-byte message has no chunks");
    }
    for (core::OpId id = 0; id < s_.op_count(); ++id) {
      if (s_.kind(id) == core::OpKind::calc && s_.calc_ns(id) != 0) {
        refuse("it has calc operations (MSCCL steps only move and reduce data)");
      }
      if (s_.kind(id) != core::OpKind::calc && s_.length(id) == 0) {
        refuse("it has 0-byte operations (an MSCCL step moves at least one chunk)");
      }
    }
  }

  /// Chunks: the greatest common divisor of S and every offset and length, so that every range
  /// is whole chunks and chunks scale with the message as MSCCL's do.
  void choose_chunks() {
    std::uint64_t g = s_.header().bytes.value;
    for (core::OpId id = 0; id < s_.op_count(); ++id) {
      if (s_.kind(id) == core::OpKind::calc) {
        continue;
      }
      const core::Range t = s_.target(id);
      g = std::gcd(g, std::gcd(t.offset, t.length));
      if (s_.kind(id) == core::OpKind::copy || s_.kind(id) == core::OpKind::reduce) {
        g = std::gcd(g, s_.source(id).offset);
      }
    }
    chunk_ = g;
    nchunks_ = s_.header().bytes.value / g;
    s_chunks_ = (s_.header().tmp_bytes + g - 1) / g;
  }

  /// MSCCL's buffer and chunk index of collsim range `r` (whole chunks).
  [[nodiscard]] std::pair<char, std::uint64_t> place(const core::Range& r) const {
    if (r.buffer == core::Buffer::tmp) {
      return {'s', r.offset / chunk_};
    }
    const core::CollectiveKind c = s_.header().collective;
    if (c == core::CollectiveKind::allgather || c == core::CollectiveKind::gather) {
      return {'o', r.offset / chunk_};
    }
    if (c == core::CollectiveKind::alltoall && r.offset >= s_.header().bytes.value) {
      return {'o', (r.offset - s_.header().bytes.value) / chunk_};
    }
    if (c == core::CollectiveKind::alltoall && r.offset + r.length > s_.header().bytes.value) {
      refuse(fmt::format("the range [{}, {}) spans alltoall's input and output", r.offset,
                         r.offset + r.length));
    }
    return {'i', r.offset / chunk_};
  }

  [[nodiscard]] std::uint64_t count(const core::Range& r) const {
    const std::uint64_t n = r.length / chunk_;
    if (n > kMaxCount) {
      refuse(fmt::format("a step of {} chunks ({} B of {} B chunks): MSCCL steps carry at most {}",
                         n, r.length, chunk_, kMaxCount));
    }
    return n;
  }

  /// Thread blocks: per rank, one per (send peer, channel) for its sends, one per (receive peer,
  /// channel) for its receives, one per stream for its local operations. A message's channel is
  /// what tells its (tag, sender's stream, receiver's stream) apart among the pair's messages, so
  /// each thread block is part of one issue stream and both ends agree on it.
  void assign_blocks() {
    const core::Rank p = s_.ranks();
    std::vector<core::OpId> partner(s_.op_count(), core::kNoMatch);
    const std::size_t unmatched = core::match_messages(s_, [&](core::OpId a, core::OpId b) {
      partner[a] = b;
      partner[b] = a;
    });
    if (unmatched != 0) {
      refuse(fmt::format("{} operations have no matching message", unmatched));
    }
    std::map<std::tuple<core::Rank, core::Rank, std::uint32_t, std::uint32_t, std::uint32_t>,
             std::uint32_t>
        channels; // (sender, receiver, tag, sender stream, receiver stream) -> channel
    std::map<std::pair<core::Rank, core::Rank>, std::uint32_t> used; // per pair
    channel_of_.assign(s_.op_count(), 0);
    for (core::Rank a = 0; a < p; ++a) {
      for (core::OpId id = s_.rank_begin(a); id < s_.rank_end(a); ++id) {
        if (s_.kind(id) != core::OpKind::send) {
          continue;
        }
        const core::Rank b = s_.peer(id);
        const auto key = std::tuple{a, b, s_.tag(id), s_.stream(id), s_.stream(partner[id])};
        auto [it, fresh] = channels.emplace(key, used[{a, b}]);
        if (fresh) {
          ++used[{a, b}];
        }
        channel_of_[id] = it->second;
        channel_of_[partner[id]] = it->second;
        nchannels_ = std::max(nchannels_, it->second + 1);
      }
    }
    blocks_.resize(p);
    block_of_.assign(s_.op_count(), 0);
    for (core::Rank r = 0; r < p; ++r) {
      std::map<std::tuple<int, std::int64_t, std::uint32_t>, std::uint32_t> index;
      for (core::OpId id = s_.rank_begin(r); id < s_.rank_end(r); ++id) {
        const core::OpKind k = s_.kind(id);
        if (k == core::OpKind::calc) {
          continue;
        }
        const bool send = k == core::OpKind::send;
        const bool recv = k == core::OpKind::recv || k == core::OpKind::recv_reduce;
        const auto key = send   ? std::tuple{0, std::int64_t{s_.peer(id)}, channel_of_[id]}
                         : recv ? std::tuple{1, std::int64_t{s_.peer(id)}, channel_of_[id]}
                                : std::tuple{2, std::int64_t{-1}, s_.stream(id)};
        auto [it, fresh] = index.emplace(key, static_cast<std::uint32_t>(blocks_[r].size()));
        if (fresh) {
          Block b;
          b.send = send ? std::int64_t{s_.peer(id)} : std::int64_t{-1};
          b.recv = recv ? std::int64_t{s_.peer(id)} : std::int64_t{-1};
          b.chan = send || recv ? channel_of_[id] : 0;
          blocks_[r].push_back(std::move(b));
        }
        blocks_[r][it->second].ops.push_back(id);
        block_of_[id] = it->second;
      }
      if (blocks_[r].size() > core::Schedule::kMaxStreams) {
        refuse(fmt::format("rank {} needs {} thread blocks; collsim imports at most {}", r,
                           blocks_[r].size(), core::Schedule::kMaxStreams));
      }
      make_steps(r);
    }
  }

  /// The real operations `id` waits for: a zero-time calc (a dependency junction) stands for its
  /// own dependencies.
  void real_deps(core::Rank r, core::OpId id, std::vector<core::OpId>& out) const {
    for (const std::uint32_t d : s_.deps(id)) {
      const core::OpId dep = s_.rank_begin(r) + d;
      if (s_.kind(dep) == core::OpKind::calc) {
        real_deps(r, dep, out);
      } else {
        out.push_back(dep);
      }
    }
  }

  void make_steps(core::Rank r) {
    std::vector<Block>& blocks = blocks_[r];
    std::vector<std::uint32_t> position(s_.op_count() == 0 ? 0 : s_.rank_end(r) - s_.rank_begin(r));
    // First pass: the steps with their dependencies (nops before a step for each beyond the
    // first), so that every step's index is known.
    std::vector<std::vector<std::pair<std::uint32_t, core::OpId>>> waits(blocks.size());
    for (std::uint32_t t = 0; t < blocks.size(); ++t) {
      Block& b = blocks[t];
      for (const core::OpId id : b.ops) {
        std::vector<core::OpId> deps;
        real_deps(r, id, deps);
        std::vector<core::OpId> foreign;
        for (const core::OpId d : deps) {
          if (block_of_[d] != t) {
            foreign.push_back(d);
          }
        }
        std::sort(foreign.begin(), foreign.end());
        foreign.erase(std::unique(foreign.begin(), foreign.end()), foreign.end());
        // The step itself carries the first dependency, nops just before it the rest (msccl-tools'
        // ir_to_xml; the runtime rejects a chain whose first link is not on the step).
        for (std::size_t k = 1; k < foreign.size(); ++k) {
          b.steps.push_back(Step{"nop", 'i', 0, 'i', 0, 0, -1, -1, false});
          waits[t].emplace_back(static_cast<std::uint32_t>(b.steps.size() - 1), foreign[k]);
        }
        b.steps.push_back(step_of(id));
        position[id - s_.rank_begin(r)] = static_cast<std::uint32_t>(b.steps.size() - 1);
        if (!foreign.empty()) {
          waits[t].emplace_back(static_cast<std::uint32_t>(b.steps.size() - 1), foreign[0]);
        }
      }
      if (b.steps.size() > kMaxSteps) {
        refuse(fmt::format("rank {} needs {} steps in one thread block; MSCCL runs at most {}", r,
                           b.steps.size(), kMaxSteps));
      }
    }
    for (std::uint32_t t = 0; t < blocks.size(); ++t) {
      for (const auto& [at, dep] : waits[t]) {
        Step& st = blocks[t].steps[at];
        st.depid = block_of_[dep];
        st.deps = position[dep - s_.rank_begin(r)];
        blocks[block_of_[dep]].steps[position[dep - s_.rank_begin(r)]].hasdep = true;
      }
    }
  }

  [[nodiscard]] Step step_of(core::OpId id) const {
    Step st;
    const core::Range t = s_.target(id);
    const auto [tb, toff] = place(t);
    st.cnt = count(t);
    st.srcbuf = st.dstbuf = tb;
    st.srcoff = st.dstoff = toff;
    switch (s_.kind(id)) {
    case core::OpKind::send: st.type = "s"; break;
    case core::OpKind::recv: st.type = "r"; break;
    // recvReduceCopy with src = dst: dst := dst (+) incoming, as collsim's recv_reduce.
    case core::OpKind::recv_reduce: st.type = "rrc"; break;
    case core::OpKind::copy:
    case core::OpKind::reduce: {
      const auto [sb, soff] = place(s_.source(id));
      st.srcbuf = sb;
      st.srcoff = soff;
      st.type = s_.kind(id) == core::OpKind::copy ? "cpy" : "re";
      break;
    }
    case core::OpKind::calc: break;
    }
    return st;
  }

  [[nodiscard]] std::string header() const {
    const core::ScheduleHeader& h = s_.header();
    const bool alltoall = h.collective == core::CollectiveKind::alltoall;
    std::string out = fmt::format(
        "<!-- collsim schedule: {} on {} ranks, written for S = {} B ({} chunks of {} B) -->\n",
        h.algorithm.empty() ? "a schedule" : h.algorithm, h.ranks, h.bytes.value, nchunks_, chunk_);
    // The schedule itself, so that `collsim import` gives back exactly this schedule; the
    // runtimes skip comments.
    const std::string text = core::print_schedule(s_);
    if (text.find("--") == std::string::npos) {
      out += "<!-- collsim:\n" + text + "-->\n";
    }
    out += fmt::format(
        "<algo name=\"{}\" proto=\"{}\" nchannels=\"{}\" nchunksperloop=\"{}\" ngpus=\"{}\" "
        "coll=\"{}\" inplace=\"{}\" outofplace=\"{}\" minBytes=\"{}\" maxBytes=\"{}\">\n",
        h.algorithm.empty() ? "collsim" : h.algorithm, o_.proto, nchannels_, nchunks_, h.ranks,
        coll_, alltoall ? 0 : 1, alltoall ? 1 : 0, o_.min_bytes, o_.max_bytes);
    return out;
  }

  [[nodiscard]] std::string gpu(core::Rank r) const {
    const core::CollectiveKind c = s_.header().collective;
    const bool gathers = c == core::CollectiveKind::allgather || c == core::CollectiveKind::gather;
    const bool alltoall = c == core::CollectiveKind::alltoall;
    std::string out =
        fmt::format("  <gpu id=\"{}\" i_chunks=\"{}\" o_chunks=\"{}\" s_chunks=\"{}\">\n", r,
                    gathers ? 0 : nchunks_, gathers || alltoall ? nchunks_ : 0, s_chunks_);
    for (std::size_t t = 0; t < blocks_[r].size(); ++t) {
      const Block& b = blocks_[r][t];
      out += fmt::format("    <tb id=\"{}\" send=\"{}\" recv=\"{}\" chan=\"{}\">\n", t, b.send,
                         b.recv, b.chan);
      for (std::size_t k = 0; k < b.steps.size(); ++k) {
        const Step& st = b.steps[k];
        const bool nop = st.type == "nop";
        out += fmt::format("      <step s=\"{}\" type=\"{}\" srcbuf=\"{}\" srcoff=\"{}\" "
                           "dstbuf=\"{}\" dstoff=\"{}\" "
                           "cnt=\"{}\" depid=\"{}\" deps=\"{}\" hasdep=\"{}\"/>\n",
                           k, st.type, st.srcbuf, nop ? -1 : static_cast<std::int64_t>(st.srcoff),
                           st.dstbuf, nop ? -1 : static_cast<std::int64_t>(st.dstoff), st.cnt,
                           st.depid, st.deps, st.hasdep ? 1 : 0);
      }
      out += "    </tb>\n";
    }
    out += "  </gpu>\n";
    return out;
  }

  const core::Schedule& s_;
  const MscclExportOptions& o_;
  std::string coll_;
  std::uint64_t chunk_ = 1;
  std::uint64_t nchunks_ = 1;
  std::uint64_t s_chunks_ = 0;
  std::uint32_t nchannels_ = 1;
  std::vector<std::uint32_t> channel_of_;
  std::vector<std::uint32_t> block_of_;
  std::vector<std::vector<Block>> blocks_;
};

} // namespace

std::string write_msccl_xml(const core::Schedule& s, const MscclExportOptions& options) {
  return Writer(s, options).write();
}

} // namespace collsim::io
