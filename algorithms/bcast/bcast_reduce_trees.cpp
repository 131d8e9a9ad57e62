// Tree shapes and the generic segmented tree bcast and reduce (see bcast_reduce_trees.hpp).
//
// Sources: Open MPI ompi/mca/coll/base/coll_base_topo.c (build_chain, build_tree, build_kmtree),
// coll_base_bcast.c (ompi_coll_base_bcast_intra_generic), coll_base_reduce.c
// (ompi_coll_base_reduce_generic); MPICH src/mpi/coll/bcast/bcast_intra_binomial.c and
// reduce/reduce_intra_binomial.c. All rank arithmetic is on relative ranks vr = (r - root) mod p.

#include "bcast/bcast_reduce_trees.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace collsim::algorithms::detail {
namespace {

using core::OpKind;

core::Rank relative(std::uint32_t p, core::Rank root, core::Rank r) {
  return r >= root ? r - root : r + p - root;
}
core::Rank absolute(std::uint32_t p, core::Rank root, core::Rank vr) {
  const std::uint64_t a = std::uint64_t{vr} + root;
  return static_cast<core::Rank>(a >= p ? a - p : a);
}

/// [begin, length) of segment j.
std::pair<std::uint64_t, std::uint64_t> segment_range(std::uint64_t n, std::uint64_t segment,
                                                      std::uint64_t j) {
  if (segment == 0 || segment >= n) {
    return {0, n};
  }
  const std::uint64_t begin = j * segment;
  return {begin, std::min(segment, n - begin)};
}

} // namespace

TreeShape binomial_tree(bool far_first) {
  return [far_first](std::uint32_t p, core::Rank root, core::Rank r, TreeLinks& out) {
    const core::Rank vr = relative(p, root, r);
    out.children.clear();
    out.has_parent = vr != 0;
    // The root's subtrees are the powers of two below p; another rank's are those below its
    // lowest set bit.
    const std::uint32_t top = vr == 0 ? std::bit_ceil(p) : std::uint32_t{1} << std::countr_zero(vr);
    if (out.has_parent) {
      out.parent = absolute(p, root, vr - top);
    }
    for (std::uint32_t m = 1; m < top; m <<= 1) {
      if (std::uint64_t{vr} + m < p) {
        out.children.push_back(absolute(p, root, vr + m));
      }
    }
    if (far_first) {
      std::reverse(out.children.begin(), out.children.end());
    }
  };
}

TreeShape knomial_tree(std::uint32_t radix, bool far_first) {
  return [radix, far_first](std::uint32_t p, core::Rank root, core::Rank r, TreeLinks& out) {
    const core::Rank vr = relative(p, root, r);
    out.children.clear();
    out.has_parent = vr != 0;
    // power = radix^j for the lowest nonzero digit j of vr (the root: the first power >= p).
    std::uint64_t power = 1;
    while (power < p && (vr / power) % radix == 0) {
      power *= radix;
    }
    if (out.has_parent) {
      const std::uint64_t digit = (vr / power) % radix;
      out.parent = absolute(p, root, static_cast<core::Rank>(vr - digit * power));
    }
    for (std::uint64_t sub = 1; sub < power; sub *= radix) {
      for (std::uint64_t c = 1; c < radix && vr + c * sub < p; ++c) {
        out.children.push_back(absolute(p, root, static_cast<core::Rank>(vr + c * sub)));
      }
    }
    if (far_first) {
      // Largest subtrees first, keeping c ascending within one power (Open MPI's kmtree order).
      std::vector<core::Rank> ordered;
      ordered.reserve(out.children.size());
      std::uint64_t sub = 1;
      while (sub * radix < power) {
        sub *= radix;
      }
      for (; sub >= 1 && sub < power; sub /= radix) {
        for (std::uint64_t c = 1; c < radix && vr + c * sub < p; ++c) {
          ordered.push_back(absolute(p, root, static_cast<core::Rank>(vr + c * sub)));
        }
      }
      out.children = std::move(ordered);
    }
  };
}

TreeShape chain_tree(std::uint32_t fanout) {
  return [fanout](std::uint32_t p, core::Rank root, core::Rank r, TreeLinks& out) {
    const core::Rank vr = relative(p, root, r);
    out.children.clear();
    out.has_parent = vr != 0;
    if (p < 2) {
      return;
    }
    const std::uint32_t f = std::clamp<std::uint32_t>(fanout, 1, p - 1);
    const std::uint32_t longer = (p - 1) % f; // chains of length `len + 1`
    const std::uint32_t len = (p - 1) / f;    // the other chains' length
    // Chain c starts at relative rank head(c) (the ranks 1..p-1 laid out chain after chain).
    const auto head = [&](std::uint32_t c) { return 1 + c * len + std::min(c, longer); };
    if (vr == 0) {
      for (std::uint32_t c = 0; c < f; ++c) {
        out.children.push_back(absolute(p, root, head(c)));
      }
      return;
    }
    // Which chain holds vr: the longer chains cover 1..longer*(len+1).
    const std::uint32_t c = vr - 1 < longer * (len + 1)
                                ? (vr - 1) / (len + 1)
                                : longer + (vr - 1 - longer * (len + 1)) / len;
    const std::uint32_t first = head(c);
    const std::uint32_t last = first + len + (c < longer ? 1 : 0) - 1;
    out.parent = absolute(p, root, vr == first ? 0 : vr - 1);
    if (vr != last) {
      out.children.push_back(absolute(p, root, vr + 1));
    }
  };
}

void over_shared_memory_flags(AlgorithmInfo& a) {
  a.generate = [generate = a.generate](const Request& req) {
    core::Schedule s = generate(req);
    core::Protocol p = s.header().protocol;
    p.intra_node_overhead = core::Seconds{0.0};
    s.set_protocol(p);
    return s;
  };
}

TreeShape heap_kary_tree(std::uint32_t k) {
  return [k](std::uint32_t p, core::Rank root, core::Rank r, TreeLinks& out) {
    const std::uint32_t l = (r + p - root) % p;
    out.has_parent = l != 0;
    out.parent = l != 0 ? ((l - 1) / k + root) % p : 0;
    out.children.clear();
    for (std::uint64_t c = std::uint64_t{l} * k + 1; c <= std::uint64_t{l} * k + k && c < p; ++c) {
      out.children.push_back(static_cast<core::Rank>((c + root) % p));
    }
  };
}

TreeShape kary_tree(std::uint32_t fanout) {
  return [fanout](std::uint32_t p, core::Rank root, core::Rank r, TreeLinks& out) {
    const core::Rank vr = relative(p, root, r);
    out.children.clear();
    out.has_parent = vr != 0;
    // Level L holds relative ranks [first, first + width) with width = fanout^L.
    std::uint64_t first = 0;
    std::uint64_t width = 1;
    std::uint64_t prev_width = 1;
    while (vr >= first + width) {
      first += width;
      prev_width = width;
      width *= fanout;
    }
    if (out.has_parent) {
      // Position q on level L has its parent at position q mod fanout^(L-1) on level L-1.
      const std::uint64_t q = vr - first;
      const std::uint64_t prev_first = first - prev_width;
      out.parent = absolute(p, root, static_cast<core::Rank>(prev_first + q % prev_width));
    }
    for (std::uint64_t i = 1; i <= fanout && vr + width * i < p; ++i) {
      out.children.push_back(absolute(p, root, static_cast<core::Rank>(vr + width * i)));
    }
  };
}

TreeShape in_order_binary_tree() {
  return [](std::uint32_t p, core::Rank, core::Rank r, TreeLinks& out) {
    out.children.clear();
    out.has_parent = false;
    // Walk down from the whole range [0, p) rooted at p-1, as build_in_order_bintree does: the
    // current subtree is ranks [delta, delta + size) rooted at its last rank.
    std::int64_t size = p;
    std::int64_t parent = size - 1;
    std::int64_t delta = 0;
    std::int64_t me = r;
    while (true) {
      const std::int64_t right_size = size >> 1;
      std::int64_t lchild = -1;
      std::int64_t rchild = -1;
      if (size - 1 > 0) {
        lchild = parent - 1;
        if (lchild > 0) {
          rchild = right_size - 1;
        }
      }
      if (me == parent) {
        if (lchild >= 0) {
          out.children.push_back(static_cast<core::Rank>(lchild + delta));
        }
        if (rchild >= 0) {
          out.children.push_back(static_cast<core::Rank>(rchild + delta));
        }
        return;
      }
      if (me > rchild) { // the left subtree: ranks right_size .. parent-1
        if (me == lchild) {
          out.has_parent = true;
          out.parent = static_cast<core::Rank>(parent + delta);
        }
        size = size - right_size - 1;
        delta += right_size;
        me -= right_size;
        parent = size - 1;
      } else { // the right subtree: ranks 0 .. right_size-1
        if (me == rchild) {
          out.has_parent = true;
          out.parent = static_cast<core::Rank>(parent + delta);
        }
        size = right_size;
        parent = rchild;
      }
    }
  };
}

TreeShape flat_tree(bool descending) {
  return [descending](std::uint32_t p, core::Rank root, core::Rank r, TreeLinks& out) {
    out.children.clear();
    out.has_parent = r != root;
    out.parent = root;
    if (r != root) {
      return;
    }
    for (core::Rank q = 0; q < p; ++q) {
      const core::Rank c = descending ? p - 1 - q : q;
      if (c != root) {
        out.children.push_back(c);
      }
    }
  };
}

std::uint64_t segment_count(std::uint64_t n, std::uint64_t segment) {
  if (n == 0 || segment == 0) {
    return 1;
  }
  return (n + segment - 1) / segment;
}

OpCounts tree_bcast_counts(std::uint32_t p, core::Rank root, std::uint64_t segments,
                           const TreeShape& shape) {
  if (p < 2) {
    return {};
  }
  // Every tree edge carries each segment once (a send and a receive); every non-root send waits
  // for the receive of its segment.
  OpCounts c;
  c.ops = 2 * std::uint64_t{p - 1} * segments;
  TreeLinks links;
  std::uint64_t forwarded = 0; // edges whose sender is not the root
  for (core::Rank r = 0; r < p; ++r) {
    shape(p, root, r, links);
    if (links.has_parent) {
      forwarded += links.children.size();
    }
  }
  c.deps = forwarded * segments;
  return c;
}

core::Schedule generate_tree_bcast(const Request& req, const std::string& name,
                                   const TreeShape& shape, std::uint64_t segment) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t k = segment_count(n, segment);
  core::Schedule s(make_header(req, 0, name));
  const OpCounts counts = tree_bcast_counts(p, req.root, k, shape);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  TreeLinks links;
  std::array<std::uint32_t, 1> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    shape(p, req.root, r, links);
    const auto seg = [&](std::uint64_t j) {
      const auto [b, len] = segment_range(n, segment, j);
      return data_range(b, len);
    };
    std::uint32_t got = 0; // the receive of the current segment
    if (links.has_parent) {
      got = s.recv(links.parent, seg(0));
    }
    for (std::uint64_t j = 0; j < k; ++j) {
      // Post the next segment's receive before forwarding this one (Open MPI's double buffering
      // of requests), so the parent's next segment is not held up by this rank's sends.
      std::uint32_t next = 0;
      if (links.has_parent && j + 1 < k) {
        next = s.recv(links.parent, seg(j + 1));
      }
      dep[0] = got;
      for (const core::Rank c : links.children) {
        add_op(s, OpKind::send, c, seg(j), std::span(dep.data(), links.has_parent ? 1 : 0));
      }
      got = next;
    }
  }
  s.finish();
  return s;
}

std::uint32_t max_children(std::uint32_t p, core::Rank root, const TreeShape& shape) {
  TreeLinks links;
  std::size_t most = 0;
  for (core::Rank r = 0; r < p; ++r) {
    shape(p, root, r, links);
    most = std::max(most, links.children.size());
  }
  return static_cast<std::uint32_t>(most);
}

OpCounts tree_reduce_counts(std::uint32_t p, core::Rank root, std::uint64_t segments,
                            std::uint32_t buffers, const TreeShape& shape,
                            std::optional<core::Rank> tree_root) {
  if (p < 2) {
    return {};
  }
  OpCounts c;
  TreeLinks links;
  if (tree_root && *tree_root != root) {
    // The tree root's send of the result (after every segment's last reduction) and the real
    // root's receive (after every one of its own segment sends).
    shape(p, root, *tree_root, links);
    c.ops += 2;
    c.deps += (links.children.empty() ? 0 : segments) + segments;
  }
  for (core::Rank r = 0; r < p; ++r) {
    shape(p, root, r, links);
    const std::uint64_t m = links.children.size();
    // Per segment: m receives and m reductions, and the send to the parent.
    c.ops += segments * (2 * m + (links.has_parent ? 1 : 0));
    // A receive into a reused buffer waits for the reduction that read it; each reduction waits
    // for its receive and, with two or more buffers, for the previous reduction into the same
    // bytes of data; the send waits for the last reduction.
    std::uint64_t d = (m > buffers ? m - buffers : 0) + m;
    if (buffers >= 2 && m >= 1) {
      d += m - 1;
    }
    if (links.has_parent && m > 0) {
      d += 1;
    }
    c.deps += segments * d;
  }
  return c;
}

core::Schedule generate_tree_reduce(const Request& req, const std::string& name,
                                    const TreeShape& shape, std::uint64_t segment,
                                    std::uint32_t buffers, std::optional<core::Rank> tree_root) {
  const std::uint32_t p = req.ranks;
  const std::uint64_t n = req.bytes.value;
  const std::uint64_t k = segment_count(n, segment);
  const std::uint32_t slots = p < 2 ? 0 : std::min(buffers, max_children(p, req.root, shape));
  core::Schedule s(make_header(req, std::uint64_t{slots} * n, name));
  const OpCounts counts = tree_reduce_counts(p, req.root, k, buffers, shape, tree_root);
  s.reserve(counts.ops, counts.deps);
  if (p < 2) {
    s.finish();
    return s;
  }
  const bool deliver = tree_root && *tree_root != req.root;
  std::vector<std::uint32_t> finals; // per segment: the last reduction, or the send up
  TreeLinks links;
  std::vector<std::uint32_t> recv_now;  // receive of segment j from child i (i < buffers)
  std::vector<std::uint32_t> recv_next; // the same for segment j + 1, posted early
  std::vector<std::uint32_t> reduced;   // reduction of segment j from child i
  std::array<std::uint32_t, 2> dep{};
  for (core::Rank r = 0; r < p; ++r) {
    s.begin_rank(r);
    shape(p, req.root, r, links);
    const std::size_t m = links.children.size();
    const std::size_t early = std::min<std::size_t>(m, buffers);
    const auto seg = [&](std::uint64_t j) { return segment_range(n, segment, j); };
    const auto slot = [&](std::size_t i, std::uint64_t j) {
      const auto [b, len] = seg(j);
      return tmp_range((i % buffers) * n + b, len);
    };
    recv_now.assign(early, 0);
    recv_next.assign(early, 0);
    reduced.assign(m, 0);
    finals.clear();
    for (std::size_t i = 0; i < early; ++i) {
      recv_now[i] = s.recv(links.children[i], slot(i, 0));
    }
    for (std::uint64_t j = 0; j < k; ++j) {
      const auto [b, len] = seg(j);
      const core::Range mine = data_range(b, len);
      // The first children's next segments land in other bytes of their buffers: post them now.
      if (j + 1 < k) {
        for (std::size_t i = 0; i < early; ++i) {
          recv_next[i] = s.recv(links.children[i], slot(i, j + 1));
        }
      }
      for (std::size_t i = 0; i < m; ++i) {
        std::uint32_t got = 0;
        if (i < early) {
          got = recv_now[i];
        } else {
          dep[0] = reduced[i - buffers]; // that reduction read this buffer
          got = add_op(s, OpKind::recv, links.children[i], slot(i, j), std::span(dep.data(), 1));
        }
        dep[0] = got;
        dep[1] = i > 0 ? reduced[i - 1] : 0;
        // With one buffer the receive already waited for the previous reduction.
        const std::size_t nd = buffers >= 2 && i > 0 ? 2 : 1;
        reduced[i] = reduce_op(s, slot(i, j), mine, std::span(dep.data(), nd));
      }
      if (links.has_parent) {
        dep[0] = m > 0 ? reduced[m - 1] : 0;
        finals.push_back(
            add_op(s, OpKind::send, links.parent, mine, std::span(dep.data(), m > 0 ? 1 : 0)));
      } else if (m > 0) {
        finals.push_back(reduced[m - 1]);
      }
      std::swap(recv_now, recv_next);
    }
    if (deliver && r == *tree_root) {
      // The result is complete once every segment's last reduction is.
      add_op(s, OpKind::send, req.root, data_range(0, n), finals);
    } else if (deliver && r == req.root) {
      // The result overwrites data that this rank's segment sends read.
      add_op(s, OpKind::recv, *tree_root, data_range(0, n), finals);
    }
  }
  s.finish();
  return s;
}

} // namespace collsim::algorithms::detail
