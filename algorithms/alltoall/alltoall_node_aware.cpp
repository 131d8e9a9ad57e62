// Node-aware (locality-aware) alltoall(v): the three-step exchange of node-aware communication.
// Messages between ranks of one node go directly; everything a rank sends to another node is
// packed into one message to the local rank responsible for that node, which sends the node's
// bytes for it as one network message; the destination node's responsible rank unpacks and
// hands every local rank its bytes in one message. Few, large network messages instead of many
// small ones: what sparse and neighbourhood exchanges (stencils, MPI_Neighbor_alltoallv) gain.
//
// Source: Bienz, Gropp & Olson, "Node aware sparse matrix-vector multiplication", JPDC 130
// (2019), the three steps (gather on node, one inter-node message per node pair, redistribute on
// node) with the inter-node work spread over the node's ranks; applied to neighbourhood
// collectives by Collom, Li & Bienz, "Optimizing Irregular Communication with Neighborhood
// Collectives and Locality-Aware Parallelism" (SC-W 2023). Packing and unpacking are local
// copies (MPI_Pack of the pieces), priced at the rank's copy rate.
//
// Roles: node A's bytes for node B leave through local rank members[A][B mod |A|] (the sender
// s(A, B)) and arrive at members[B][A mod |B|] (the receiver r(A, B)), so every rank of a node
// shares the network work. Without a topology every rank is a node: a direct exchange through
// tmp.
//
// Schedule, rank x of node A (zero counts move no message):
//   1. direct: send to every other rank j of A its bytes; receive from every other rank i of A;
//      copy its own block.
//   2. collect: for every node B != A with bytes from x, pack x's pieces for B's ranks into tmp
//      (one copy per piece) and send them to s(A, B) as one message, or copy them straight into
//      the staging area when x is s; s receives each node-mate's pack into its staging area for
//      B (ordered by source rank, then destination rank).
//   3. network: s sends the staging area to r(A, B) as one message once every pack is in; r
//      receives it into its inbox.
//   4. hand out: r packs, for each rank j of its node, the pieces of every source of A for j
//      (one copy per piece) and sends them as one message (its own pieces: copied straight into
//      its output); j receives them into its output when A's ranks are consecutive (their blocks
//      lie back to back there, ordered by source), else into tmp.
//   5. unpack: j copies each piece of a hand-out that arrived in tmp to its output, last of all
//      (a copy waiting for its receive holds back everything after it in program order).
// Every receive is posted before anything waits. Per-pair FIFO order holds: a rank sends to a
// node-mate in the order direct, collect, hand out, and receives from it in the same order.
//
// Cost: no closed form (the network messages depend on the counts and the placement).

#include "alltoall/alltoall_algorithms.hpp"
#include "collsim/core/layout.hpp"
#include "generator_support.hpp"

#include <map>

namespace collsim::algorithms {
namespace {

using core::OpKind;
constexpr const char* kName = "node_aware";

struct Plan {
  detail::NodeLayout nodes;
  core::BlockLayout lay;
  std::uint32_t node_count = 0;
  std::vector<bool> consecutive; ///< per node: its ranks are consecutive
  /// Per ordered node pair (A, B), A != B, that has bytes: the bytes, the sender and receiver.
  struct Pair {
    std::uint64_t bytes = 0;
    core::Rank sender = 0;
    core::Rank receiver = 0;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Pair> pairs;
  std::uint64_t tmp = 0; ///< the most scratch any rank uses

  /// What rank i sends to node b's ranks.
  [[nodiscard]] std::uint64_t to_node(core::Rank i, std::uint32_t b) const {
    std::uint64_t n = 0;
    for (core::Rank j : nodes.members[b]) {
      n += lay.count(i, j);
    }
    return n;
  }
  /// What node c's ranks send to rank j.
  [[nodiscard]] std::uint64_t from_node(std::uint32_t c, core::Rank j) const {
    std::uint64_t n = 0;
    for (core::Rank i : nodes.members[c]) {
      n += lay.count(i, j);
    }
    return n;
  }
  [[nodiscard]] const Pair* pair(std::uint32_t a, std::uint32_t b) const {
    const auto it = pairs.find({a, b});
    return a == b || it == pairs.end() ? nullptr : &it->second;
  }
};

/// Scratch a rank's program uses: one running offset per rank, in the order generate() claims it.
struct Scratch {
  std::uint64_t next = 0;
  std::uint64_t take(std::uint64_t n) {
    const std::uint64_t at = next;
    next += n;
    return at;
  }
};

Plan plan_for(const Request& req) {
  Plan pl{detail::node_layout(req),
          core::BlockLayout(req.collective, req.ranks, req.bytes.value, req.counts),
          0,
          {},
          {},
          0};
  pl.node_count = static_cast<std::uint32_t>(pl.nodes.members.size());
  for (const auto& m : pl.nodes.members) {
    bool ok = true;
    for (std::size_t k = 1; k < m.size(); ++k) {
      ok = ok && m[k] == m[k - 1] + 1;
    }
    pl.consecutive.push_back(ok);
  }
  for (std::uint32_t a = 0; a < pl.node_count; ++a) {
    const auto& ma = pl.nodes.members[a];
    for (std::uint32_t b = 0; b < pl.node_count; ++b) {
      if (a == b) {
        continue;
      }
      std::uint64_t bytes = 0;
      for (core::Rank i : ma) {
        bytes += pl.to_node(i, b);
      }
      if (bytes != 0) {
        const auto& mb = pl.nodes.members[b];
        pl.pairs.emplace(std::pair{a, b}, Plan::Pair{bytes, ma[b % ma.size()], mb[a % mb.size()]});
      }
    }
  }
  return pl;
}

/// Emits rank x's program (or, with `s` null, only counts its scratch).
std::uint64_t emit_rank(const Plan& pl, core::Rank x, core::Schedule* s) {
  const core::BlockLayout& lay = pl.lay;
  const std::uint32_t a = pl.nodes.node[x];
  const auto& mine = pl.nodes.members[a];
  Scratch scratch;
  std::vector<std::uint32_t> deps;
  const auto data = [](std::uint64_t at, std::uint64_t len) { return detail::data_range(at, len); };
  const auto tmp = [](std::uint64_t at, std::uint64_t len) { return detail::tmp_range(at, len); };
  const auto op = [&](OpKind k, core::Rank peer, core::Range target, core::Range source,
                      const std::vector<std::uint32_t>& d) -> std::uint32_t {
    return s == nullptr ? 0 : s->add(k, peer, target, source, d);
  };
  const std::vector<std::uint32_t> none;
  // 1. direct exchange inside the node.
  for (core::Rank j : mine) {
    if (j != x && lay.count(x, j) != 0) {
      op(OpKind::send, j, data(lay.send_offset(x, j), lay.count(x, j)), {}, none);
    }
  }
  for (core::Rank i : mine) {
    if (i != x && lay.count(i, x) != 0) {
      op(OpKind::recv, i, data(lay.recv_offset(i, x), lay.count(i, x)), {}, none);
    }
  }
  if (lay.count(x, x) != 0) {
    op(OpKind::copy, 0, data(lay.recv_offset(x, x), lay.count(x, x)),
       data(lay.send_offset(x, x), lay.count(x, x)), none);
  }
  // 2. collect: the staging areas this rank fills as a sender, and its node-mates' packs.
  std::map<std::uint32_t, std::pair<std::uint64_t, std::vector<std::uint32_t>>> staging;
  for (std::uint32_t b = 0; b < pl.node_count; ++b) {
    const Plan::Pair* p = pl.pair(a, b);
    if (p != nullptr && p->sender == x) {
      staging[b].first = scratch.take(p->bytes);
    }
  }
  for (const auto& [b, area] : staging) {
    // Source-major: node-mate i's pack at the bytes of the ranks before it.
    std::uint64_t at = area.first;
    for (core::Rank i : mine) {
      const std::uint64_t n = pl.to_node(i, b);
      if (i != x && n != 0) {
        staging[b].second.push_back(op(OpKind::recv, i, tmp(at, n), {}, none));
      }
      if (i == x) {
        std::uint64_t piece = at;
        for (core::Rank j : pl.nodes.members[b]) {
          if (lay.count(x, j) != 0) {
            staging[b].second.push_back(op(OpKind::copy, 0, tmp(piece, lay.count(x, j)),
                                           data(lay.send_offset(x, j), lay.count(x, j)), none));
          }
          piece += lay.count(x, j);
        }
      }
      at += n;
    }
  }
  for (std::uint32_t b = 0; b < pl.node_count; ++b) {
    const Plan::Pair* p = pl.pair(a, b);
    const std::uint64_t n = pl.to_node(x, b);
    if (p == nullptr || p->sender == x || n == 0) {
      continue;
    }
    const std::uint64_t pack = scratch.take(n);
    std::uint64_t piece = pack;
    deps.clear();
    for (core::Rank j : pl.nodes.members[b]) {
      if (lay.count(x, j) != 0) {
        deps.push_back(op(OpKind::copy, 0, tmp(piece, lay.count(x, j)),
                          data(lay.send_offset(x, j), lay.count(x, j)), none));
      }
      piece += lay.count(x, j);
    }
    op(OpKind::send, p->sender, tmp(pack, n), {}, deps);
  }
  // 3. inboxes, and the hand-outs of the node's receivers, posted before anything waits.
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint32_t>> inbox; // node -> (at, recv)
  for (std::uint32_t c = 0; c < pl.node_count; ++c) {
    const Plan::Pair* p = pl.pair(c, a);
    if (p != nullptr && p->receiver == x) {
      const std::uint64_t at = scratch.take(p->bytes);
      inbox[c] = {at, op(OpKind::recv, p->sender, tmp(at, p->bytes), {}, none)};
    }
  }
  // Hand-outs received into tmp (a node whose ranks are not consecutive): (node, tmp offset,
  // receive), unpacked at the very end. A copy waiting for its receive holds back the rest of the
  // program, and the hand-out comes only after the network message this rank may still have to
  // send: unpacking here deadlocked every node.
  struct Unpack {
    std::uint32_t node;
    std::uint64_t at;
    std::uint32_t recv;
  };
  std::vector<Unpack> unpack;
  for (std::uint32_t c = 0; c < pl.node_count; ++c) {
    const Plan::Pair* p = pl.pair(c, a);
    const std::uint64_t n = pl.from_node(c, x);
    if (p == nullptr || p->receiver == x || n == 0) {
      continue;
    }
    if (pl.consecutive[c]) {
      op(OpKind::recv, p->receiver, data(lay.recv_offset(pl.nodes.members[c].front(), x), n), {},
         none);
    } else {
      const std::uint64_t at = scratch.take(n);
      unpack.push_back({c, at, op(OpKind::recv, p->receiver, tmp(at, n), {}, none)});
    }
  }
  for (const auto& [b, area] : staging) {
    op(OpKind::send, pl.pair(a, b)->receiver, tmp(area.first, pl.pair(a, b)->bytes), {},
       area.second);
  }
  // 4. hand out: the inbox holds (source i, destination j) pieces, source-major.
  for (const auto& entry : inbox) {
    // Not a structured binding: the lambda below captures the box (clang 14 refuses that).
    const auto& box = entry.second;
    const auto& sources = pl.nodes.members[entry.first];
    const auto piece_at = [&](core::Rank i, core::Rank j) {
      std::uint64_t at = box.first;
      for (core::Rank ii : sources) {
        for (core::Rank jj : mine) {
          if (ii == i && jj == j) {
            return at;
          }
          at += lay.count(ii, jj);
        }
      }
      return at;
    };
    const std::vector<std::uint32_t> got{box.second};
    for (core::Rank j : mine) {
      const std::uint64_t n = pl.from_node(entry.first, j);
      if (n == 0) {
        continue;
      }
      if (j == x) {
        for (core::Rank i : sources) {
          if (lay.count(i, x) != 0) {
            op(OpKind::copy, 0, data(lay.recv_offset(i, x), lay.count(i, x)),
               tmp(piece_at(i, x), lay.count(i, x)), got);
          }
        }
        continue;
      }
      const std::uint64_t pack = scratch.take(n);
      std::uint64_t piece = pack;
      deps.clear();
      for (core::Rank i : sources) {
        if (lay.count(i, j) != 0) {
          deps.push_back(op(OpKind::copy, 0, tmp(piece, lay.count(i, j)),
                            tmp(piece_at(i, j), lay.count(i, j)), got));
        }
        piece += lay.count(i, j);
      }
      op(OpKind::send, j, tmp(pack, n), {}, deps);
    }
  }
  // 5. unpack the hand-outs that arrived in tmp.
  for (const Unpack& u : unpack) {
    const std::vector<std::uint32_t> got{u.recv};
    std::uint64_t piece = u.at;
    for (core::Rank i : pl.nodes.members[u.node]) {
      if (lay.count(i, x) != 0) {
        op(OpKind::copy, 0, data(lay.recv_offset(i, x), lay.count(i, x)),
           tmp(piece, lay.count(i, x)), got);
      }
      piece += lay.count(i, x);
    }
  }
  return scratch.next;
}

core::Schedule generate(const Request& req) {
  Plan pl = plan_for(req);
  for (core::Rank x = 0; x < req.ranks; ++x) {
    pl.tmp = std::max(pl.tmp, emit_rank(pl, x, nullptr));
  }
  core::Schedule s(make_header(req, pl.tmp, kName));
  for (core::Rank x = 0; x < req.ranks; ++x) {
    s.begin_rank(x);
    (void)emit_rank(pl, x, &s);
  }
  s.finish();
  return s;
}

} // namespace

AlgorithmInfo describe_alltoall_node_aware() {
  AlgorithmInfo a;
  a.name = kName;
  a.collective = core::CollectiveKind::alltoall;
  a.summary = "node-aware: direct inside a node; a rank's bytes for another node packed into one "
              "message, one network message per node pair, unpacked on the other side";
  a.source = "Bienz, Gropp & Olson, JPDC 2019 (node-aware communication); Collom, Li & Bienz, "
             "SC-W 2023 (neighborhood collectives)";
  a.aliases = {"locality_aware"};
  a.constraints = {"bytes divisible by ranks (uniform)"};
  a.counts = true;
  a.check = [](const Request& req) -> std::string {
    if (req.counts.empty() && req.bytes.value % req.ranks != 0) {
      return "alltoall needs bytes divisible by ranks";
    }
    const std::uint64_t p = req.ranks;
    return detail::size_limit_refusal({6 * p * p, 4 * p * p});
  };
  a.generate = generate;
  a.cost_formula = "none (network messages depend on the counts and the placement)";
  return a;
}

} // namespace collsim::algorithms
