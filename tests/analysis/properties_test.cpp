// Properties that must hold over every preset x every algorithm that runs there x a size sweep
// (issue 24; docs/testing.md): the bus bandwidth never beats what the machine's wires allow
// (physical_bounds.hpp), time never decreases as the message grows (but where the library itself
// takes a slower path for smaller messages), a declared closed form is what loggp simulates on a
// uniform machine, and simgrid is never more than 2 % faster than loggp. The cheap part
// (allreduce, broadcast, allgather and alltoall at 8 ranks and four sizes, loggp) runs in the
// default suite; the heavy part ("[heavy-properties]": every collective, 8 and 64 ranks, 8 B to
// 16 MiB, and allreduce on simgrid at 8 ranks) under the ctest label heavy.

#include "physical_bounds.hpp"

#include "collsim/analysis/simulate.hpp"
#include "collsim/io/presets.hpp"
#include "collsim/io/scenario_loader.hpp"
#include "collsim/topologies/build.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using namespace collsim;

namespace {

/// The rank count a property sweep runs a preset at: `wanted`, or the largest count up to it
/// that the machine holds (a 2-GPU box runs at 2).
std::optional<std::uint32_t> fitting_ranks(const core::Scenario& s, std::uint32_t wanted) {
  for (std::uint32_t p = wanted; p >= 2; p /= 2) {
    try {
      (void)topologies::build(s.topology, p);
      return p;
    } catch (const core::Error&) {
    }
  }
  return std::nullopt;
}

struct Sweep {
  std::vector<core::CollectiveKind> collectives;
  std::vector<std::uint32_t> ranks;
  std::vector<core::Bytes> sizes;
  std::string engine = "loggp";
  bool simgrid_too = false; ///< also allreduce on simgrid, held against loggp
};

/// Every algorithm of each collective on `scenario` at the sweep's points; the rows of each
/// (collective, algorithm, ranks) in size order.
std::vector<std::vector<core::ResultRow>> sweep_rows(const core::Scenario& scenario,
                                                     const algorithms::Registry& registry,
                                                     const Sweep& sweep, std::uint32_t p) {
  std::vector<std::vector<core::ResultRow>> out;
  for (const core::CollectiveKind c : sweep.collectives) {
    for (const algorithms::AlgorithmInfo* algo : registry.list(c)) {
      core::StudySpec study;
      study.collective = c;
      study.algorithms = {algo->name};
      study.ranks = {p};
      study.sizes = sweep.sizes;
      study.engine = sweep.engine;
      analysis::StudyResult r;
      try {
        r = analysis::run_study(scenario, study, registry, {}, 2);
      } catch (const core::UsageError&) {
        continue; // the scenario's stack does not run it
      } catch (const core::Error& e) {
        // Any other error is a failure of this algorithm: report it and go on with the others.
        FAIL_CHECK(core::to_string(c) << " " << algo->name << " at " << p << " ranks on engine "
                                      << sweep.engine << ": " << e.what());
        continue;
      }
      if (!r.rows.empty()) {
        out.push_back(std::move(r.rows));
      }
    }
  }
  return out;
}

/// Algorithms whose library takes a slower path for some smaller messages, so that their time
/// may drop as the message grows; each as the library does it:
///   * split_binary_tree (bcast): Open MPI's ompi_coll_base_bcast_intra_split_bintree falls back
///     to a chain (fan-out 1) when a half of the message is shorter than the segment size, so a
///     4 KiB broadcast walks 7 hops on 8 ranks where 256 KiB goes down two binary trees;
///   * sra_knomial (allreduce): UCC lowers the k-nomial radix to 2 when the vector is too short to
///     split k ways (ucc_knomial_pattern_get_min_radix), so 8 B takes 3 iterations on 8 ranks
///     where 4 KiB takes 2 at radix 4;
///   * k_reduce_scatter_allgather (allreduce): MPICH cuts the vector into count / p' elements per
///     block, the last block taking the rest, so a vector of fewer elements than participants
///     rides whole in the last block through every step: at 64 ranks 64 B (16 floats) takes up to
///     20 ns longer than 512 B (2 floats a block);
///   * ring_bidirectional (reduce_scatter), from a size below p bytes only: UCC's two rings take
///     turns at a rank's port in the single-port engine, and below p bytes most blocks are empty
///     (block_range gives n blocks one byte and the rest none), so which ring's message is booked
///     first changes with n: on gadi at 64 ranks 8 B took 38 ns (0.06 %) longer than 64 B.
bool may_drop_with_size(const std::string& algorithm, std::uint64_t smaller_bytes,
                        std::uint32_t ranks) {
  return algorithm == "split_binary_tree" || algorithm == "sra_knomial" ||
         algorithm == "k_reduce_scatter_allgather" ||
         (algorithm == "ring_bidirectional" && smaller_bytes < ranks);
}

/// The time of `row`'s algorithm with `row`'s parameters pinned, at `bytes` instead of its size.
using Rerun = std::function<double(const core::ResultRow& row, core::Bytes bytes)>;

/// A Rerun on `scenario` and `engine`: the row's parameters ("channels=8,protocol=ll", as rows
/// print them) become the study's.
Rerun rerun_on(const core::Scenario& scenario, const algorithms::Registry& registry,
               const std::string& engine) {
  return [&scenario, &registry, engine](const core::ResultRow& row, core::Bytes bytes) {
    core::StudySpec study;
    study.collective = row.collective;
    study.algorithms = {row.algorithm};
    study.ranks = {row.ranks};
    study.sizes = {bytes};
    study.engine = engine;
    std::stringstream in(row.params);
    for (std::string pair; std::getline(in, pair, ',');) {
      const auto eq = pair.find('=');
      REQUIRE(eq != std::string::npos);
      study.params[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    const analysis::StudyResult r = analysis::run_study(scenario, study, registry, {}, 1);
    REQUIRE(r.rows.size() == 1);
    return r.rows.front().time.value;
  };
}

/// The properties of every row. shares_links: the engine shares a node's NICs among its ranks
/// (simgrid); loggp does not (no contention), so there the node's injection bound holds only when
/// every node hosts one rank.
///
/// Time against size: where the library chose the same parameters at both sizes, the larger
/// message takes no less time. Where its choice changed (NCCL's protocol or channels, from its own
/// cost model, which is not collsim's), the new choice may be faster than the old one was on the
/// smaller message: NCCL switches where its model says, not where collsim's times cross. What
/// must hold then is that the smaller size's parameters take no less time on the larger message.
void check_properties(const std::vector<std::vector<core::ResultRow>>& runs,
                      const core::Topology& topology, bool shares_links, const Rerun& rerun) {
  bool one_per_node = true;
  for (const auto& [node, share] : testing::nodes_of(topology)) {
    one_per_node = one_per_node && share.ranks <= 1;
  }
  for (const auto& rows : runs) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const core::ResultRow& row = rows[i];
      INFO(core::to_string(row.collective)
           << " " << row.algorithm << " [" << row.params << "] at " << row.ranks << " ranks, "
           << row.bytes.value << " B: " << row.time.value * 1e6 << " us");
      CHECK(row.time.value > 0.0);
      const double limit =
          testing::busbw_bound(topology, row, shares_links || one_per_node) * (1 + 1e-9);
      const double seen = testing::in_network(row.algorithm) ? row.algbw.bytes_per_second
                                                             : row.busbw.bytes_per_second;
      CHECK(seen <= limit);
      if (i > 0 && !may_drop_with_size(row.algorithm, rows[i - 1].bytes.value, row.ranks)) {
        const core::ResultRow& smaller = rows[i - 1];
        INFO("the smaller size " << smaller.bytes.value << " B [" << smaller.params << "] took "
                                 << smaller.time.value * 1e6 << " us");
        const double same =
            smaller.params == row.params ? row.time.value : rerun(smaller, row.bytes);
        INFO("with those parameters this size takes " << same * 1e6 << " us");
        CHECK(same >= smaller.time.value * (1 - 1e-9));
      }
    }
  }
}

/// How much faster than loggp simgrid may be on a point: 2 % (rounding and SimGrid's TCP-free
/// latency model), but for pipelines that keep several segments of one rank in flight towards
/// one receive port. There a message held for the receiver's port holds its flow on the
/// sender's link (loggp frees the sender at injection: infinite buffering), shares that link with
/// the sender's next message, and from then on the two engines serve the ports in different
/// orders; neither order is a bound on the other (docs/engines.md, "Agreement and contention").
/// Measured on the heavy sweep's points and beyond (2026-12-05): HAN on `textbook` at 8 ranks
/// 2.9 % (2 MiB) to 6.1 % (64 MiB) faster, NCCL's tree on one DGX A100 2.1 % at 16 MiB.
double simgrid_floor(const std::string& algorithm) {
  if (algorithm == "han")
    return 0.92;
  if (algorithm == "nccl_tree")
    return 0.97;
  return 0.98;
}

/// simgrid shares links that loggp does not: never more than 2 % faster than loggp on the same
/// point, but for the pipelines of simgrid_floor.
void check_simgrid_against_loggp(const std::vector<std::vector<core::ResultRow>>& loggp,
                                 const std::vector<std::vector<core::ResultRow>>& simgrid) {
  std::map<std::tuple<core::CollectiveKind, std::string, std::uint64_t>, double> by_point;
  for (const auto& rows : loggp) {
    for (const core::ResultRow& row : rows) {
      by_point[{row.collective, row.algorithm, row.bytes.value}] = row.time.value;
    }
  }
  std::size_t compared = 0;
  for (const auto& rows : simgrid) {
    for (const core::ResultRow& row : rows) {
      const auto it = by_point.find({row.collective, row.algorithm, row.bytes.value});
      if (it == by_point.end()) {
        continue;
      }
      INFO(core::to_string(row.collective)
           << " " << row.algorithm << " at " << row.ranks << " ranks, " << row.bytes.value
           << " B: simgrid " << row.time.value * 1e6 << " us, loggp " << it->second * 1e6 << " us");
      CHECK(row.time.value >= simgrid_floor(row.algorithm) * it->second);
      ++compared;
    }
  }
  CHECK(compared > 0);
}

void run_properties(const Sweep& sweep) {
  const auto registry = algorithms::make_default_registry();
  for (const std::string& name : io::preset_names()) {
    const core::Scenario scenario = io::load_scenario(name);
    for (const std::uint32_t wanted : sweep.ranks) {
      const std::optional<std::uint32_t> p = fitting_ranks(scenario, wanted);
      if (!p) {
        continue;
      }
      INFO("preset " << name << ", " << *p << " ranks, engine " << sweep.engine);
      const core::Topology topology = topologies::build(scenario.topology, *p);
      const auto loggp = sweep_rows(scenario, registry, sweep, *p);
      check_properties(loggp, topology, false, rerun_on(scenario, registry, sweep.engine));
      if (sweep.simgrid_too && *p <= 8) {
        Sweep on_simgrid = sweep;
        on_simgrid.engine = "simgrid";
        on_simgrid.collectives = {core::CollectiveKind::allreduce};
        on_simgrid.sizes = {core::Bytes{4096}, core::Bytes{262144}, core::Bytes{16 << 20}};
        const auto simgrid = sweep_rows(scenario, registry, on_simgrid, *p);
        check_properties(simgrid, topology, true, rerun_on(scenario, registry, "simgrid"));
        check_simgrid_against_loggp(loggp, simgrid);
      }
      if (topology.is_full_mesh()) {
        // A uniform machine: every declared closed form is what loggp simulates.
        Sweep analytic = sweep;
        analytic.engine = "analytic";
        std::map<std::tuple<core::CollectiveKind, std::string, std::uint64_t>, double> exact;
        for (const auto& rows : sweep_rows(scenario, registry, analytic, *p)) {
          for (const core::ResultRow& row : rows) {
            exact[{row.collective, row.algorithm, row.bytes.value}] = row.time.value;
          }
        }
        CHECK(!exact.empty());
        for (const auto& rows : loggp) {
          for (const core::ResultRow& row : rows) {
            const auto it = exact.find({row.collective, row.algorithm, row.bytes.value});
            if (it != exact.end()) {
              INFO(row.algorithm << " at " << row.bytes.value << " B");
              CHECK(row.time.value == Approx(it->second).epsilon(1e-9));
            }
          }
        }
      }
    }
  }
}

} // namespace

TEST_CASE("on every preset, every allreduce, broadcast, allgather and alltoall algorithm stays "
          "within the wires and takes no less time for a larger message",
          "[analysis][properties]") {
  Sweep sweep;
  sweep.collectives = {core::CollectiveKind::allreduce, core::CollectiveKind::bcast,
                       core::CollectiveKind::allgather, core::CollectiveKind::alltoall};
  sweep.ranks = {8};
  sweep.sizes = {core::Bytes{8}, core::Bytes{4096}, core::Bytes{262144}, core::Bytes{16 << 20}};
  run_properties(sweep);
}

TEST_CASE("heavy: on every preset, every algorithm of every collective at 8 and 64 ranks from 8 B "
          "to 16 MiB, and allreduce on simgrid against loggp",
          "[.][heavy-properties]") {
  Sweep sweep;
  for (const char* c : {"allreduce", "bcast", "reduce", "allgather", "reduce_scatter", "alltoall",
                        "gather", "scatter"}) {
    sweep.collectives.push_back(core::collective_from_name(c));
  }
  sweep.ranks = {8, 64};
  for (std::uint64_t n = 8; n <= (std::uint64_t{16} << 20); n *= 8) {
    sweep.sizes.push_back(core::Bytes{n});
  }
  sweep.simgrid_too = true;
  run_properties(sweep);
}
