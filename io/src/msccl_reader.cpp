// MSCCL XML into an MscclProgram (msccl.hpp), read with pugixml and checked as the MSCCL
// runtimes check it, and more (../shared/reference/interchange.md sections 1.2-1.6 and 1.8).

#include "collsim/io/msccl.hpp"

#include "collsim/core/errors.hpp"

#include <pugixml.hpp>

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <map>
#include <tuple>
#include <utility>

namespace collsim::io {
namespace {

/// `cnt` is at most 71 (MSCCL_MAX_COUNT 72, exclusive); a thread block past 64 steps overflows the
/// executor's MSCCL_MAX_NUM_STEPS (256 in the original runtime), which is a warning here.
constexpr std::int64_t kMaxCount = 71;
constexpr std::size_t kExecutorMaxSteps = 64;

class Reader {
public:
  Reader(std::string_view text, std::string_view name) : text_(text), name_(name) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') {
        line_starts_.push_back(i + 1);
      }
    }
  }

  MscclProgram read() {
    pugi::xml_document doc;
    const pugi::xml_parse_result result =
        doc.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!result) {
      fail(static_cast<std::size_t>(std::max<std::ptrdiff_t>(result.offset, 0)),
           fmt::format("not well-formed XML: {}", result.description()));
    }
    const pugi::xml_node algo = doc.child("algo");
    if (!algo) {
      fail(0, "no <algo> element: not an MSCCL algorithm file");
    }
    MscclProgram p;
    p.file = std::string(name_);
    read_algo(algo, p);
    read_gpus(algo, p);
    check_dependencies(p);
    check_connections(p);
    return p;
  }

private:
  [[nodiscard]] std::pair<std::size_t, std::size_t> position(std::size_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const auto line = static_cast<std::size_t>(it - line_starts_.begin());
    return {line, offset - line_starts_[line - 1] + 1};
  }
  [[noreturn]] void fail(std::size_t offset, const std::string& msg) const {
    const auto [line, column] = position(offset);
    throw core::ScheduleError(fmt::format("{}:{}:{}: error: {}", name_, line, column, msg));
  }
  [[noreturn]] void fail(const pugi::xml_node& node, const std::string& msg) const {
    fail(element_offset(node), msg);
  }
  /// The offset of the element's '<' (pugixml's is its name's).
  [[nodiscard]] std::size_t element_offset(const pugi::xml_node& node) const {
    const auto at = static_cast<std::size_t>(std::max<std::ptrdiff_t>(node.offset_debug(), 0));
    return at > 0 && text_[at - 1] == '<' ? at - 1 : at;
  }
  std::uint32_t line_of(const pugi::xml_node& node) const {
    return static_cast<std::uint32_t>(
        position(static_cast<std::size_t>(node.offset_debug())).first);
  }
  /// The offset of attribute `attr` of `node` in the text (pugixml keeps only the node's).
  std::size_t attribute_offset(const pugi::xml_node& node, const char* attr) const {
    const auto start = static_cast<std::size_t>(node.offset_debug());
    const std::size_t end = text_.find('>', start);
    const std::string key = fmt::format(" {}=", attr);
    const std::size_t at = text_.substr(0, end).find(key, start);
    return at == std::string_view::npos ? start : at + 1;
  }
  void warn(const pugi::xml_node& node, const std::string& msg) {
    warnings_.push_back(fmt::format("{}:{}: warning: {}", name_, line_of(node), msg));
  }

  std::string text_attr(const pugi::xml_node& node, const char* attr, bool required = true) {
    const pugi::xml_attribute a = node.attribute(attr);
    if (!a) {
      if (required) {
        fail(node, fmt::format("<{}> has no '{}' attribute", node.name(), attr));
      }
      return {};
    }
    return a.value();
  }
  std::int64_t int_attr(const pugi::xml_node& node, const char* attr, std::int64_t min,
                        std::int64_t max) {
    const std::string v = text_attr(node, attr);
    std::int64_t x = 0;
    const char* end = v.data() + v.size();
    const auto [ptr, ec] = std::from_chars(v.data(), end, x);
    if (v.empty() || ec != std::errc{} || ptr != end) {
      fail(attribute_offset(node, attr),
           fmt::format("'{}' of <{}> must be an integer, got '{}'", attr, node.name(), v));
    }
    if (x < min || x > max) {
      fail(attribute_offset(node, attr),
           fmt::format("'{}' of <{}> is {}, outside [{}, {}]", attr, node.name(), x, min, max));
    }
    return x;
  }
  std::optional<std::int64_t> optional_int(const pugi::xml_node& node, const char* attr,
                                           std::int64_t min, std::int64_t max) {
    if (!node.attribute(attr)) {
      return std::nullopt;
    }
    return int_attr(node, attr, min, max);
  }

  void read_algo(const pugi::xml_node& algo, MscclProgram& p) {
    p.name = text_attr(algo, "name", false);
    p.proto = text_attr(algo, "proto");
    if (p.proto != "Simple" && p.proto != "LL" && p.proto != "LL128") {
      fail(attribute_offset(algo, "proto"),
           fmt::format("unknown proto '{}' (the runtimes take Simple, LL or LL128)", p.proto));
    }
    p.nchannels = static_cast<std::uint32_t>(int_attr(algo, "nchannels", 1, 256));
    p.nchunksperloop = static_cast<std::uint64_t>(int_attr(algo, "nchunksperloop", 1, 1 << 30));
    p.ngpus = static_cast<std::uint32_t>(int_attr(algo, "ngpus", 1, 1 << 20));
    p.coll = text_attr(algo, "coll");
    static const std::map<std::string, std::optional<core::CollectiveKind>> kColls = {
        {"allreduce", core::CollectiveKind::allreduce},
        {"allgather", core::CollectiveKind::allgather},
        {"reduce", core::CollectiveKind::reduce},
        {"broadcast", core::CollectiveKind::bcast},
        {"alltoall", core::CollectiveKind::alltoall},
        {"reduce_scatter", core::CollectiveKind::reduce_scatter},
        {"reducescatter", core::CollectiveKind::reduce_scatter},
        {"gather", core::CollectiveKind::gather},
        {"scatter", core::CollectiveKind::scatter},
        {"custom", std::nullopt},
        {"alltoallv", std::nullopt},
        {"send", std::nullopt},
        {"recv", std::nullopt}};
    const auto c = kColls.find(p.coll);
    if (c == kColls.end()) {
      std::vector<std::string> valid;
      for (const auto& [k, v] : kColls) {
        valid.push_back(k);
      }
      fail(attribute_offset(algo, "coll"),
           fmt::format("unknown coll '{}' (the runtimes take {})", p.coll, fmt::join(valid, ", ")));
    }
    p.collective = c->second;
    p.inplace = int_attr(algo, "inplace", 0, 1) == 1;
    // The executor's window is [minBytes, maxBytes] with 0 = unlimited; the original runtime's
    // MSCCL_CONFIG window defaults to [0, 128 MiB). Keep what the file says.
    p.min_bytes =
        static_cast<std::uint64_t>(optional_int(algo, "minBytes", 0, INT64_MAX).value_or(0));
    p.max_bytes =
        static_cast<std::uint64_t>(optional_int(algo, "maxBytes", 0, INT64_MAX).value_or(0));
  }

  void read_gpus(const pugi::xml_node& algo, MscclProgram& p) {
    p.gpus.resize(p.ngpus);
    std::vector<bool> seen(p.ngpus, false);
    for (const pugi::xml_node& gpu : algo.children("gpu")) {
      const auto id = static_cast<std::uint32_t>(int_attr(gpu, "id", 0, p.ngpus - 1));
      if (seen[id]) {
        fail(gpu, fmt::format("gpu {} appears twice", id));
      }
      seen[id] = true;
      MscclGpu& g = p.gpus[id];
      g.i_chunks = static_cast<std::uint64_t>(int_attr(gpu, "i_chunks", 0, 1 << 30));
      g.o_chunks = static_cast<std::uint64_t>(int_attr(gpu, "o_chunks", 0, 1 << 30));
      g.s_chunks = static_cast<std::uint64_t>(int_attr(gpu, "s_chunks", 0, 1 << 30));
      std::map<std::int64_t, pugi::xml_node> tbs;
      for (const pugi::xml_node& tb : gpu.children("tb")) {
        const std::int64_t t = int_attr(tb, "id", 0, core::Schedule::kMaxStreams - 1);
        if (!tbs.emplace(t, tb).second) {
          fail(tb, fmt::format("gpu {} has two thread blocks with id {}", id, t));
        }
      }
      std::int64_t expected = 0;
      for (const auto& [t, tb] : tbs) {
        if (t != expected) {
          fail(tb, fmt::format("gpu {}: thread block {} is missing (ids must be 0, 1, ...)", id,
                               expected));
        }
        ++expected;
        g.tbs.push_back(read_tb(tb, p, id, g));
      }
      check_peer_channels(tbs, g, id);
    }
    for (std::uint32_t i = 0; i < p.ngpus; ++i) {
      if (!seen[i]) {
        fail(algo, fmt::format("ngpus is {} but there is no <gpu id=\"{}\">", p.ngpus, i));
      }
    }
    p.warnings = std::move(warnings_);
  }

  MscclThreadBlock read_tb(const pugi::xml_node& tb, const MscclProgram& p, std::uint32_t gpu,
                           const MscclGpu& g) {
    MscclThreadBlock b;
    b.line = line_of(tb);
    b.send = int_attr(tb, "send", -1, p.ngpus - 1);
    b.recv = int_attr(tb, "recv", -1, p.ngpus - 1);
    // A thread block without peers has no connection: msccl-tools writes chan="-1" for it.
    const std::int64_t chan = int_attr(tb, "chan", -1, core::Schedule::kMaxTags - 1);
    if (chan < 0 && (b.send >= 0 || b.recv >= 0)) {
      fail(attribute_offset(tb, "chan"), "chan=\"-1\" on a thread block with a peer");
    }
    b.chan = static_cast<std::uint32_t>(std::max<std::int64_t>(chan, 0));
    if (b.send == gpu || b.recv == gpu) {
      fail(tb, fmt::format("gpu {}'s thread block names gpu {} itself as its peer", gpu, gpu));
    }
    if (b.chan >= p.nchannels) {
      fail(attribute_offset(tb, "chan"),
           fmt::format("chan {} but the algorithm has nchannels=\"{}\"", b.chan, p.nchannels));
    }
    std::int64_t index = 0;
    for (const pugi::xml_node& st : tb.children("step")) {
      b.steps.push_back(read_step(st, index, b, g));
      ++index;
    }
    if (b.steps.size() > kExecutorMaxSteps) {
      warn(tb, fmt::format("{} steps: the MSCCL executor and RCCL run at most {} per thread block "
                           "(MSCCL_MAX_NUM_STEPS); the original runtime 256",
                           b.steps.size(), kExecutorMaxSteps));
    }
    return b;
  }

  MscclStep read_step(const pugi::xml_node& st, std::int64_t index, const MscclThreadBlock& b,
                      const MscclGpu& g) {
    using T = MscclStep::Type;
    static const std::map<std::string, T> kTypes = {
        {"s", T::s},       {"r", T::r},     {"rcs", T::rcs}, {"rrs", T::rrs}, {"rrc", T::rrc},
        {"rrcs", T::rrcs}, {"cpy", T::cpy}, {"re", T::re},   {"nop", T::nop}};
    MscclStep s;
    s.line = line_of(st);
    const std::int64_t number = int_attr(st, "s", 0, INT32_MAX);
    if (number != index) {
      fail(attribute_offset(st, "s"),
           fmt::format("step s=\"{}\" is the thread block's step {}: the runtime runs steps in "
                       "document order and names them by position",
                       number, index));
    }
    const std::string type = text_attr(st, "type");
    const auto t = kTypes.find(type);
    if (t == kTypes.end()) {
      fail(attribute_offset(st, "type"),
           fmt::format("unknown step type '{}' (s, r, rcs, rrs, rrc, rrcs, cpy, re, nop)", type));
    }
    s.type = t->second;
    s.srcbuf = buffer_attr(st, "srcbuf");
    s.dstbuf = buffer_attr(st, "dstbuf");
    s.srcoff = int_attr(st, "srcoff", -1, 1 << 30);
    s.dstoff = int_attr(st, "dstoff", -1, 1 << 30);
    s.cnt = int_attr(st, "cnt", 0, kMaxCount);
    s.depid = int_attr(st, "depid", -1, core::Schedule::kMaxStreams - 1);
    s.deps = int_attr(st, "deps", -1, INT32_MAX);
    s.hasdep = int_attr(st, "hasdep", 0, 1) == 1;
    if ((s.depid < 0) != (s.deps < 0)) {
      fail(st, "depid and deps must both be -1 or both name a step");
    }
    const bool sends = s.type == T::s || s.type == T::rcs || s.type == T::rrs || s.type == T::rrcs;
    const bool receives = s.type == T::r || s.type == T::rcs || s.type == T::rrs ||
                          s.type == T::rrc || s.type == T::rrcs;
    if (sends && b.send < 0) {
      fail(st, fmt::format("a '{}' step sends, but its thread block has send=\"-1\"", type));
    }
    if (receives && b.recv < 0) {
      fail(st, fmt::format("a '{}' step receives, but its thread block has recv=\"-1\"", type));
    }
    if (s.type == T::nop) {
      return s;
    }
    if (s.cnt == 0) {
      fail(attribute_offset(st, "cnt"), "cnt=\"0\" moves nothing (only a nop may have no chunks)");
    }
    // The runtime reads src for every type but r and rcs, writes dst for every type but s and
    // rrs (interchange.md section 1.3).
    const bool reads = s.type != T::r && s.type != T::rcs;
    const bool writes = s.type != T::s && s.type != T::rrs;
    if (reads) {
      check_range(st, "srcoff", s.srcbuf, s.srcoff, s.cnt, g);
    }
    if (writes) {
      check_range(st, "dstoff", s.dstbuf, s.dstoff, s.cnt, g);
    }
    const bool reducing_receive = s.type == T::rrc || s.type == T::rrcs || s.type == T::rrs;
    if (reducing_receive && (s.srcbuf != s.dstbuf || s.srcoff != s.dstoff)) {
      warn(st, fmt::format("'{}' takes its local operand from {}[{}] but names {}[{}] as dst: the "
                           "runtime reduces with src{} (msccl-tools' compiler may have meant "
                           "another chunk); imported with the runtime's reading",
                           type, s.srcbuf, s.srcoff, s.dstbuf, s.dstoff,
                           writes ? " and writes dst" : " and writes nothing locally"));
    }
    return s;
  }

  char buffer_attr(const pugi::xml_node& st, const char* attr) {
    const std::string v = text_attr(st, attr);
    if (v != "i" && v != "o" && v != "s") {
      fail(attribute_offset(st, attr),
           fmt::format("'{}' must be i (input), o (output) or s (scratch), got '{}'", attr, v));
    }
    return v[0];
  }

  void check_range(const pugi::xml_node& st, const char* attr, char buf, std::int64_t off,
                   std::int64_t cnt, const MscclGpu& g) {
    const std::uint64_t chunks = buf == 'i' ? g.i_chunks : buf == 'o' ? g.o_chunks : g.s_chunks;
    if (off < 0 || static_cast<std::uint64_t>(off + cnt) > chunks) {
      fail(attribute_offset(st, attr),
           fmt::format("chunks [{}, {}) of buffer '{}' are outside its {} chunks ({}_chunks)", off,
                       off + cnt, buf, chunks, buf));
    }
  }

  /// One thread block per (send peer, channel) and per (receive peer, channel): each NCCL
  /// connection is one FIFO whose step counter the thread block using it keeps (interchange.md
  /// section 1.4). Two on one connection would each count from the start of the FIFO; which
  /// message each gets is then not the file's to say (msccl-tools' experiments_ar_multi files
  /// do this; they were deleted upstream as a bug). A warning: collsim matches such messages in
  /// its issue order.
  void check_peer_channels(const std::map<std::int64_t, pugi::xml_node>& nodes, const MscclGpu& g,
                           std::uint32_t gpu) {
    std::map<std::pair<std::int64_t, std::uint32_t>, std::size_t> sends;
    std::map<std::pair<std::int64_t, std::uint32_t>, std::size_t> recvs;
    for (std::size_t t = 0; t < g.tbs.size(); ++t) {
      const MscclThreadBlock& b = g.tbs[t];
      const pugi::xml_node& node = nodes.at(static_cast<std::int64_t>(t));
      if (b.send >= 0 && !sends.emplace(std::pair{b.send, b.chan}, t).second) {
        warn(node, fmt::format("gpu {}: thread blocks {} and {} both send to gpu {} on channel {}: "
                               "the runtime's order between them is undefined",
                               gpu, sends[{b.send, b.chan}], t, b.send, b.chan));
      }
      if (b.recv >= 0 && !recvs.emplace(std::pair{b.recv, b.chan}, t).second) {
        warn(node, fmt::format("gpu {}: thread blocks {} and {} both receive from gpu {} on "
                               "channel {}: the runtime's order between them is undefined",
                               gpu, recvs[{b.recv, b.chan}], t, b.recv, b.chan));
      }
    }
  }

  [[noreturn]] void fail_at_line(std::uint32_t line, const std::string& msg) const {
    throw core::ScheduleError(fmt::format("{}:{}:1: error: {}", name_, line, msg));
  }

  /// Every (depid, deps) names a step of another thread block of the GPU that raises its flag at
  /// or after it (else the runtime spins for ever), and the waits and program order form no cycle.
  void check_dependencies(const MscclProgram& p) const {
    for (std::uint32_t gi = 0; gi < p.ngpus; ++gi) {
      const MscclGpu& g = p.gpus[gi];
      // Steps numbered globally per GPU; edges from a step to the steps it waits for.
      std::vector<std::size_t> first(g.tbs.size() + 1, 0);
      for (std::size_t t = 0; t < g.tbs.size(); ++t) {
        first[t + 1] = first[t] + g.tbs[t].steps.size();
      }
      std::vector<std::vector<std::size_t>> waits(first.back());
      for (std::size_t t = 0; t < g.tbs.size(); ++t) {
        const MscclThreadBlock& b = g.tbs[t];
        for (std::size_t j = 0; j < b.steps.size(); ++j) {
          const MscclStep& st = b.steps[j];
          if (j > 0) {
            waits[first[t] + j].push_back(first[t] + j - 1);
          }
          if (st.depid < 0) {
            continue;
          }
          const auto d = static_cast<std::size_t>(st.depid);
          if (d >= g.tbs.size()) {
            fail_at_line(st.line, fmt::format("gpu {} tb {} step {} waits for thread block {}, "
                                              "which gpu {} does not have",
                                              gi, t, j, d, gi));
          }
          if (d == t) {
            continue; // within a thread block the order is implicit
          }
          const MscclThreadBlock& target = g.tbs[d];
          auto k = static_cast<std::size_t>(st.deps);
          if (k >= target.steps.size()) {
            fail_at_line(st.line,
                         fmt::format("gpu {} tb {} step {} waits for step {} of thread block {}, "
                                     "which has {} steps",
                                     gi, t, j, k, d, target.steps.size()));
          }
          while (k < target.steps.size() && !target.steps[k].hasdep) {
            ++k;
          }
          if (k == target.steps.size()) {
            fail_at_line(st.line,
                         fmt::format("gpu {} tb {} step {} waits for thread block {} step {}, but "
                                     "no step of it from there on raises its flag (hasdep=\"1\"): "
                                     "the runtime waits for ever",
                                     gi, t, j, d, st.deps));
          }
          waits[first[t] + j].push_back(first[d] + k);
        }
      }
      find_cycle(p, gi, first, waits);
    }
  }

  void find_cycle(const MscclProgram& p, std::uint32_t gi, const std::vector<std::size_t>& first,
                  const std::vector<std::vector<std::size_t>>& waits) const {
    // Iterative depth-first search: 0 unvisited, 1 on the stack, 2 done.
    std::vector<std::uint8_t> state(waits.size(), 0);
    for (std::size_t root = 0; root < waits.size(); ++root) {
      if (state[root] != 0) {
        continue;
      }
      std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};
      state[root] = 1;
      while (!stack.empty()) {
        auto& [v, next] = stack.back();
        if (next < waits[v].size()) {
          const std::size_t w = waits[v][next++];
          if (state[w] == 1) {
            const auto t = static_cast<std::size_t>(
                std::upper_bound(first.begin(), first.end(), w) - first.begin() - 1);
            const MscclStep& st = p.gpus[gi].tbs[t].steps[w - first[t]];
            fail_at_line(st.line, fmt::format("gpu {}: a dependency cycle through tb {} step {}",
                                              gi, t, w - first[t]));
          }
          if (state[w] == 0) {
            state[w] = 1;
            stack.emplace_back(w, 0);
          }
        } else {
          state[v] = 2;
          stack.pop_back();
        }
      }
    }
  }

  /// The k-th sending step of (g, send q, chan c) meets the k-th receiving step of (q, recv g,
  /// chan c): equal numbers and equal cnt, else the runtime hangs or misreads.
  void check_connections(const MscclProgram& p) const {
    using T = MscclStep::Type;
    const auto sends = [](T t) { return t == T::s || t == T::rcs || t == T::rrs || t == T::rrcs; };
    const auto receives = [](T t) {
      return t == T::r || t == T::rcs || t == T::rrs || t == T::rrc || t == T::rrcs;
    };
    // (sender, receiver, chan) -> the sending steps and the receiving steps, in order.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>,
             std::pair<std::vector<const MscclStep*>, std::vector<const MscclStep*>>>
        links;
    for (std::uint32_t gi = 0; gi < p.ngpus; ++gi) {
      for (const MscclThreadBlock& b : p.gpus[gi].tbs) {
        for (const MscclStep& st : b.steps) {
          if (sends(st.type)) {
            links[{gi, static_cast<std::uint32_t>(b.send), b.chan}].first.push_back(&st);
          }
          if (receives(st.type)) {
            links[{static_cast<std::uint32_t>(b.recv), gi, b.chan}].second.push_back(&st);
          }
        }
      }
    }
    for (const auto& [key, ends] : links) {
      const auto& [from, to, chan] = key;
      const auto& [tx, rx] = ends;
      const std::size_t n = std::min(tx.size(), rx.size());
      for (std::size_t k = 0; k < n; ++k) {
        if (tx[k]->cnt != rx[k]->cnt) {
          fail_at_line(rx[k]->line,
                       fmt::format("gpu {} receives {} chunks from gpu {} on channel {} (its "
                                   "message {}), but the matching send (line {}) carries {}",
                                   to, rx[k]->cnt, from, chan, k, tx[k]->line, tx[k]->cnt));
        }
      }
      if (tx.size() != rx.size()) {
        const MscclStep* extra = tx.size() > rx.size() ? tx[n] : rx[n];
        fail_at_line(extra->line,
                     fmt::format("gpu {} sends {} messages to gpu {} on channel {}, which receives "
                                 "{}: the runtime hangs",
                                 from, tx.size(), to, chan, rx.size()));
      }
    }
  }

  std::string_view text_;
  std::string_view name_;
  std::vector<std::size_t> line_starts_;
  std::vector<std::string> warnings_;
};

} // namespace

MscclProgram read_msccl_xml(std::string_view text, std::string_view name) {
  return Reader(text, name).read();
}

} // namespace collsim::io
