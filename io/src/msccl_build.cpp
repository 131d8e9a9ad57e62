// An MSCCL program as a collsim schedule for one message size (msccl.hpp): the runtime's chunks,
// tiles and `cnt` splitting (../shared/reference/interchange.md section 1.5, from the MSCCL
// executor's msccl_setup.cc and msccl_kernel.cu), its step primitives (section 1.3) and its
// dependency flags (section 1.4).

#include "collsim/io/msccl.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/core/verify.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <queue>
#include <regex>
#include <tuple>

namespace collsim::io {
namespace {

using T = MscclStep::Type;

/// The payload bytes one loop iteration moves per chunk: NCCL's protocol buffer per connection
/// with NCCL_BUFFSIZE unset. Simple: 4 MiB over NCCL_STEPS = 8 steps, 4 steps per tile (2 MiB);
/// LL: 512 KiB / 8 steps, half of each 16-byte line is data (32 KiB); LL128: 4,915,200 B / 8
/// steps, 120 of each 128 bytes data (576,000 B). interchange.md section 1.5.
std::uint64_t tile_bytes(const std::string& proto) {
  if (proto == "LL") {
    return 32 * 1024;
  }
  if (proto == "LL128") {
    return 576000;
  }
  return 2 * 1024 * 1024;
}

/// The most chunks one message of a `cnt` step carries when a chunk fits in a tile
/// (MSCCL_MAX_COUNT 72, exclusive).
constexpr std::uint64_t kMaxCount = 71;

/// A piece of a step: `chunks` whole chunks from `first` (one message), or the slice
/// [offset, offset + length) of chunk `first`.
struct Piece {
  std::uint64_t first = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

class Builder {
public:
  Builder(const MscclProgram& p, const MscclBuildOptions& o) : p_(p), o_(o) {
    chunk_ = o.bytes.value / p.nchunksperloop;
    tile_ = o.tiles ? tile_bytes(p.proto) : chunk_;
    iterations_ = chunk_ <= tile_ ? 1 : static_cast<std::uint32_t>((chunk_ + tile_ - 1) / tile_);
    per_message_ =
        chunk_ <= tile_ && o.tiles
            ? std::clamp<std::uint64_t>(tile_ / std::max<std::uint64_t>(chunk_, 1), 1, kMaxCount)
            : (o.tiles ? 1 : kMaxCount);
    for (const MscclGpu& g : p.gpus) {
      i_max_ = std::max(i_max_, g.i_chunks);
      o_max_ = std::max(o_max_, g.o_chunks);
      s_max_ = std::max(s_max_, g.s_chunks);
    }
  }

  MscclBuilt build() {
    core::ScheduleHeader h;
    h.ranks = p_.ngpus;
    h.algorithm = !o_.algorithm.empty() ? o_.algorithm : p_.name.empty() ? "msccl" : p_.name;
    if (p_.collective) {
      h.collective = *p_.collective;
      h.bytes = o_.bytes;
      h.data_bytes =
          h.collective == core::CollectiveKind::alltoall ? 2 * o_.bytes.value : o_.bytes.value;
    } else {
      // A custom collective: the input chunks, then the output chunks; the input is what is
      // defined on entry (the allreduce precondition over header.bytes).
      h.collective = core::CollectiveKind::allreduce;
      h.bytes = core::Bytes{i_max_ * chunk_};
      h.data_bytes = (i_max_ + o_max_) * chunk_;
    }
    plan_staging();
    h.tmp_bytes = s_max_ * chunk_ + staging_total_;
    if (o_.protocol) {
      h.protocol = *o_.protocol;
    }
    MscclBuilt out{core::Schedule(std::move(h)), {}, iterations_};
    for (std::uint32_t g = 0; g < p_.ngpus; ++g) {
      out.schedule.begin_rank(g);
      emit_gpu(g, out);
    }
    out.schedule.finish();
    return out;
  }

private:
  /// Where chunk k of MSCCL buffer `buf` of GPU g lies in collsim's buffers (in chunks).
  [[nodiscard]] std::pair<core::Buffer, std::uint64_t> place(std::uint32_t g, char buf,
                                                             std::uint64_t k) const {
    if (buf == 's') {
      return {core::Buffer::tmp, k};
    }
    if (!p_.collective) {
      return {core::Buffer::data, buf == 'i' ? k : i_max_ + k};
    }
    switch (*p_.collective) {
    case core::CollectiveKind::allgather:
    case core::CollectiveKind::gather:
      return {core::Buffer::data, buf == 'i' ? g * p_.gpus[g].i_chunks + k : k};
    case core::CollectiveKind::reduce_scatter:
    case core::CollectiveKind::scatter:
      return {core::Buffer::data, buf == 'o' ? g * p_.gpus[g].o_chunks + k : k};
    case core::CollectiveKind::alltoall:
      return {core::Buffer::data, buf == 'o' ? p_.nchunksperloop + k : k};
    default: return {core::Buffer::data, k};
    }
  }

  [[nodiscard]] core::Range range(std::uint32_t g, char buf, std::int64_t off,
                                  const Piece& piece) const {
    const auto [b, k] = place(g, buf, static_cast<std::uint64_t>(off) + piece.first);
    return core::Range{b, k * chunk_ + piece.offset, piece.length};
  }

  /// The messages of a step of `cnt` chunks in loop iteration `it`.
  [[nodiscard]] std::vector<Piece> pieces(std::uint64_t cnt, std::uint32_t it) const {
    std::vector<Piece> out;
    if (iterations_ == 1) {
      for (std::uint64_t c = 0; c < cnt; c += per_message_) {
        const std::uint64_t n = std::min(per_message_, cnt - c);
        out.push_back({c, 0, n * chunk_});
      }
      return out;
    }
    const std::uint64_t off = std::uint64_t{it} * tile_;
    const std::uint64_t len = std::min(tile_, chunk_ - off);
    for (std::uint64_t c = 0; c < cnt; ++c) {
      out.push_back({c, off, len});
    }
    return out;
  }

  /// rrs reduces into src in place when no other step of the GPU reads those chunks and some
  /// step overwrites them without reading (the runtime leaves src as it was: the in-place
  /// partial result is then never observed); otherwise into a staging range of tmp.
  void plan_staging() {
    in_place_rrs_.resize(p_.ngpus);
    staging_.resize(p_.ngpus);
    for (std::uint32_t g = 0; g < p_.ngpus; ++g) {
      const MscclGpu& gpu = p_.gpus[g];
      std::map<std::pair<core::Buffer, std::uint64_t>, std::pair<int, int>> use; // reads, writes
      for (const MscclThreadBlock& b : gpu.tbs) {
        for (const MscclStep& st : b.steps) {
          if (st.type == T::nop) {
            continue;
          }
          for (std::int64_t c = 0; c < st.cnt; ++c) {
            const bool plain_write =
                st.type == T::r || st.type == T::rcs ||
                (st.type == T::cpy && (st.srcbuf != st.dstbuf || st.srcoff != st.dstoff));
            if (st.type != T::r && st.type != T::rcs) {
              ++use[place(g, st.srcbuf, static_cast<std::uint64_t>(st.srcoff + c))].first;
            }
            if (st.type == T::re) {
              ++use[place(g, st.dstbuf, static_cast<std::uint64_t>(st.dstoff + c))].first;
            }
            if (plain_write) {
              ++use[place(g, st.dstbuf, static_cast<std::uint64_t>(st.dstoff + c))].second;
            }
          }
        }
      }
      std::uint64_t stage = s_max_ * chunk_;
      staging_[g].assign(gpu.tbs.size(), 0);
      in_place_rrs_[g].resize(gpu.tbs.size());
      for (std::size_t t = 0; t < gpu.tbs.size(); ++t) {
        std::uint64_t need = 0;
        in_place_rrs_[g][t].assign(gpu.tbs[t].steps.size(), false);
        for (std::size_t j = 0; j < gpu.tbs[t].steps.size(); ++j) {
          const MscclStep& st = gpu.tbs[t].steps[j];
          if (st.type != T::rrs) {
            continue;
          }
          bool alone = true;
          for (std::int64_t c = 0; c < st.cnt; ++c) {
            const auto& [reads, writes] =
                use[place(g, st.srcbuf, static_cast<std::uint64_t>(st.srcoff + c))];
            alone = alone && reads == 1 && writes >= 1;
          }
          in_place_rrs_[g][t][j] = alone;
          if (!alone) {
            const std::uint64_t cnt = static_cast<std::uint64_t>(st.cnt);
            need = std::max(need, iterations_ == 1 ? std::min(cnt, per_message_) * chunk_ : tile_);
          }
        }
        staging_[g][t] = stage;
        stage += need;
      }
      staging_total_ = std::max(staging_total_, stage - s_max_ * chunk_);
    }
  }

  struct Unit {
    std::uint32_t tb;
    std::uint32_t step;
    std::uint32_t it;
  };

  void emit_gpu(std::uint32_t g, MscclBuilt& out) {
    const MscclGpu& gpu = p_.gpus[g];
    std::vector<std::size_t> first(gpu.tbs.size() + 1, 0);
    for (std::size_t t = 0; t < gpu.tbs.size(); ++t) {
      first[t + 1] = first[t] + gpu.tbs[t].steps.size();
    }
    const std::size_t per_it = first.back();
    const std::size_t units = per_it * iterations_;
    // Each unit (a step in one iteration) waits for the one before it in its thread block and
    // for the flag step its (depid, deps) resolves to, in the same iteration.
    std::vector<std::vector<std::size_t>> waiters(units);
    std::vector<std::uint32_t> pending(units, 0);
    std::vector<std::vector<std::size_t>> waits(units);
    const auto index = [&](std::uint32_t it, std::size_t t, std::size_t j) {
      return std::size_t{it} * per_it + first[t] + j;
    };
    for (std::uint32_t it = 0; it < iterations_; ++it) {
      for (std::size_t t = 0; t < gpu.tbs.size(); ++t) {
        const auto& steps = gpu.tbs[t].steps;
        for (std::size_t j = 0; j < steps.size(); ++j) {
          const std::size_t u = index(it, t, j);
          if (j > 0) {
            waits[u].push_back(index(it, t, j - 1));
          } else if (it > 0 && !steps.empty()) {
            waits[u].push_back(index(it - 1, t, steps.size() - 1));
          }
          const MscclStep& st = steps[j];
          if (st.depid >= 0 && static_cast<std::size_t>(st.depid) != t) {
            const auto d = static_cast<std::size_t>(st.depid);
            auto k = static_cast<std::size_t>(st.deps);
            while (!gpu.tbs[d].steps[k].hasdep) {
              ++k; // the reader checked that a flag step follows
            }
            waits[u].push_back(index(it, d, k));
          }
          for (std::size_t w : waits[u]) {
            waiters[w].push_back(u);
          }
          pending[u] = static_cast<std::uint32_t>(waits[u].size());
        }
      }
    }
    // Program order: a topological order of the units, earliest (iteration, step, tb) first, so
    // that every dependency points to an earlier operation.
    using Key = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::size_t>;
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
    const auto unit_of = [&](std::size_t u) {
      const auto it = static_cast<std::uint32_t>(u / per_it);
      const std::size_t r = u % per_it;
      const auto t = static_cast<std::uint32_t>(std::upper_bound(first.begin(), first.end(), r) -
                                                first.begin() - 1);
      return Unit{t, static_cast<std::uint32_t>(r - first[t]), it};
    };
    for (std::size_t u = 0; u < units; ++u) {
      if (pending[u] == 0) {
        const Unit x = unit_of(u);
        ready.emplace(x.it, x.step, x.tb, u);
      }
    }
    std::vector<std::uint32_t> last(units, 0);
    std::size_t done = 0;
    std::vector<std::uint32_t> deps;
    while (!ready.empty()) {
      const auto [it, step, tb, u] = ready.top();
      ready.pop();
      deps.clear();
      for (std::size_t w : waits[u]) {
        deps.push_back(last[w]);
      }
      last[u] = emit_step(g, tb, step, it, deps, out);
      ++done;
      for (std::size_t v : waiters[u]) {
        if (--pending[v] == 0) {
          const Unit x = unit_of(v);
          ready.emplace(x.it, x.step, x.tb, v);
        }
      }
    }
    if (done != units) {
      throw core::InternalError(fmt::format("msccl: gpu {} has a dependency cycle", g));
    }
  }

  /// Emits one step in one iteration; returns its last operation's local index.
  std::uint32_t emit_step(std::uint32_t g, std::uint32_t t, std::uint32_t j, std::uint32_t it,
                          std::vector<std::uint32_t> deps, MscclBuilt& out) {
    core::Schedule& s = out.schedule;
    const MscclThreadBlock& b = p_.gpus[g].tbs[t];
    const MscclStep& st = b.steps[j];
    s.set_stream(t);
    s.set_tag(b.chan);
    std::uint32_t prev = 0;
    bool any = false;
    const auto add = [&](core::OpKind kind, core::Rank peer, core::Range target,
                         core::Range source) {
      if (any) {
        deps.assign(1, prev);
      }
      prev = s.add(kind, peer, target, source, deps);
      out.origins.push_back({t, j, it});
      any = true;
    };
    if (st.type == T::nop) {
      const std::uint32_t id = s.calc(core::Seconds{0.0}, deps);
      out.origins.push_back({t, j, it});
      return id;
    }
    const auto to = static_cast<core::Rank>(b.send);
    const auto from = static_cast<core::Rank>(b.recv);
    const bool in_place_rrs = in_place_rrs_[g][t][j];
    for (const Piece& piece : pieces(static_cast<std::uint64_t>(st.cnt), it)) {
      const core::Range src =
          st.srcoff >= 0 ? range(g, st.srcbuf, st.srcoff, piece) : core::Range{};
      const core::Range dst =
          st.dstoff >= 0 ? range(g, st.dstbuf, st.dstoff, piece) : core::Range{};
      switch (st.type) {
      case T::s: add(core::OpKind::send, to, src, {}); break;
      case T::r: add(core::OpKind::recv, from, dst, {}); break;
      case T::rcs:
        add(core::OpKind::recv, from, dst, {});
        add(core::OpKind::send, to, dst, {});
        break;
      case T::rrc:
      case T::rrcs:
        if (!(src == dst)) {
          add(core::OpKind::copy, 0, dst, src);
        }
        add(core::OpKind::recv_reduce, from, dst, {});
        if (st.type == T::rrcs) {
          add(core::OpKind::send, to, dst, {});
        }
        break;
      case T::rrs: {
        core::Range into = src;
        if (!in_place_rrs) {
          into = core::Range{core::Buffer::tmp, staging_[g][t], piece.length};
          add(core::OpKind::copy, 0, into, src);
        }
        add(core::OpKind::recv_reduce, from, into, {});
        add(core::OpKind::send, to, into, {});
        break;
      }
      case T::cpy:
        if (!(src == dst)) {
          add(core::OpKind::copy, 0, dst, src);
        }
        break;
      case T::re: add(core::OpKind::reduce, 0, dst, src); break;
      case T::nop: break;
      }
    }
    if (!any) { // a copy onto itself: the step still orders its thread block
      const std::uint32_t id = s.calc(core::Seconds{0.0}, deps);
      out.origins.push_back({t, j, it});
      return id;
    }
    return prev;
  }

  const MscclProgram& p_;
  const MscclBuildOptions& o_;
  std::uint64_t chunk_ = 0;
  std::uint64_t tile_ = 0;
  std::uint32_t iterations_ = 1;
  std::uint64_t per_message_ = 1;
  std::uint64_t i_max_ = 0;
  std::uint64_t o_max_ = 0;
  std::uint64_t s_max_ = 0;
  std::vector<std::vector<std::vector<bool>>> in_place_rrs_; // [gpu][tb][step]: an rrs in place
  std::vector<std::vector<std::uint64_t>> staging_;          // per GPU and thread block: tmp offset
  std::uint64_t staging_total_ = 0;
};

} // namespace

std::string msccl_size_refusal(const MscclProgram& program, core::Bytes bytes) {
  if (bytes.value == 0 || bytes.value % program.nchunksperloop != 0) {
    return fmt::format("MSCCL runs '{}' only on a positive multiple of nchunksperloop = {} "
                       "elements; {} B is not a multiple of {} B",
                       program.name, program.nchunksperloop, bytes.value, program.nchunksperloop);
  }
  return {};
}

MscclBuilt build_msccl_schedule(const MscclProgram& program, const MscclBuildOptions& options) {
  if (const std::string why = msccl_size_refusal(program, options.bytes); !why.empty()) {
    throw core::UsageError(why);
  }
  return Builder(program, options).build();
}

std::string msccl_annotate(const MscclProgram& program, const MscclBuilt& built,
                           const std::string& problem) {
  // "rank R lN (WHAT)", WHAT holding ranges such as "data[0..8)".
  static const std::regex kLabel(R"(rank (\d+) l(\d+) \((?:[^()\[]|\[[^\[\]()]*\))*\))");
  std::string out;
  auto begin = std::sregex_iterator(problem.begin(), problem.end(), kLabel);
  std::size_t pos = 0;
  for (auto m = begin; m != std::sregex_iterator(); ++m) {
    const auto r = static_cast<core::Rank>(std::stoul((*m)[1].str()));
    const auto l = std::stoull((*m)[2].str());
    out += problem.substr(pos, static_cast<std::size_t>(m->position()) + m->length() - pos);
    pos = static_cast<std::size_t>(m->position() + m->length());
    if (r >= built.schedule.ranks()) {
      continue;
    }
    const core::OpId id = built.schedule.rank_begin(r) + static_cast<core::OpId>(l);
    if (id >= built.origins.size() || id >= built.schedule.rank_end(r)) {
      continue;
    }
    const MscclBuilt::Origin& o = built.origins[id];
    const MscclStep& st = program.gpus[r].tbs[o.tb].steps[o.step];
    out += fmt::format(" [gpu {} tb {} step {}{}, {}:{}]", r, o.tb, o.step,
                       built.iterations > 1 ? fmt::format(" iteration {}", o.iteration) : "",
                       program.file, st.line);
  }
  out += problem.substr(pos);
  return out;
}

std::string msccl_problems(const MscclProgram& program, const MscclBuilt& built) {
  core::SemanticsOptions options;
  options.undefined_reads = true;
  options.postcondition = program.collective.has_value();
  const core::VerifyReport report = core::check_semantics(built.schedule, options);
  std::string out;
  for (const std::string& problem : report.problems) {
    out += msccl_annotate(program, built, problem) + "\n";
  }
  if (report.total_problems > report.problems.size()) {
    out +=
        fmt::format("... and {} more problems\n", report.total_problems - report.problems.size());
  }
  return out;
}

} // namespace collsim::io
