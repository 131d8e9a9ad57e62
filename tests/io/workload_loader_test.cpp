// Workload files (io/workload_loader.hpp, docs/workload-format.md): phases as written, the
// data-parallel generator's buckets, and one positioned error per mistake.

#include "collsim/core/errors.hpp"
#include "collsim/io/workload_loader.hpp"

#include <catch2/catch.hpp>
#include <string>

using collsim::core::WorkloadGroup;
using collsim::io::parse_workload;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    (void)parse_workload(yaml, "w.yaml");
  } catch (const collsim::core::ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("a workload's phases keep their collective, size, calls, group and overlap",
          "[io][workload]") {
  const auto w = parse_workload("name: w\ncompute: 120 ms\nphases:\n"
                                "  - {name: tp, collective: allreduce, count: 1024, dtype: bf16, "
                                "calls: 96, group: node}\n"
                                "  - {collective: allgather, bytes: 4 MiB, group: across_nodes, "
                                "overlap: 0.5}\n",
                                "w.yaml");
  CHECK(w.name == "w");
  CHECK(w.compute.value == Approx(0.12));
  REQUIRE(w.phases.size() == 2);
  CHECK(w.phases[0].name == "tp");
  CHECK(w.phases[0].bytes.value == 2048);
  CHECK(w.phases[0].calls == 96);
  CHECK(w.phases[0].group == WorkloadGroup::node);
  CHECK(w.phases[0].overlap == 0.0);
  CHECK(w.phases[0].pos == collsim::core::SourcePos{"w.yaml", 4, 5});
  CHECK(w.phases[1].name == "allgather"); // unnamed: the collective's name
  CHECK(w.phases[1].collective == collsim::core::CollectiveKind::allgather);
  CHECK(w.phases[1].bytes.value == 4U << 20);
  CHECK(w.phases[1].calls == 1);
  CHECK(w.phases[1].group == WorkloadGroup::across_nodes);
  CHECK(w.phases[1].overlap == 0.5);
}

TEST_CASE("the data-parallel generator makes DDP's buckets, the last one not overlapped",
          "[io][workload]") {
  // 1e9 bf16 gradients = 2e9 B in 25 MiB buckets: 76 full (1992294400 B) and 7705600 B left.
  const auto w = parse_workload(
      "name: d\nphases:\n  - {generator: data_parallel, parameters: 1e9, dtype: bf16}\n", "d.yaml");
  REQUIRE(w.phases.size() == 2);
  CHECK(w.phases[0].bytes.value == 25U << 20);
  CHECK(w.phases[0].calls == 76);
  CHECK(w.phases[0].overlap == 1.0);
  CHECK(w.phases[1].bytes.value == 7705600);
  CHECK(w.phases[1].calls == 1);
  CHECK(w.phases[1].overlap == 0.0);
  // An exact multiple: the last full bucket is the one not overlapped.
  const auto x = collsim::io::data_parallel_phases(4096, 4, collsim::core::Bytes{4096}, 0.7,
                                                   WorkloadGroup::world, {});
  REQUIRE(x.size() == 2);
  CHECK(x[0].calls == 3);
  CHECK(x[0].overlap == 0.7);
  CHECK(x[1].bytes.value == 4096);
  // One bucket or less: only the last.
  const auto one = collsim::io::data_parallel_phases(10, 4, collsim::core::Bytes{4096}, 1.0,
                                                     WorkloadGroup::world, {});
  REQUIRE(one.size() == 1);
  CHECK(one[0].bytes.value == 40);
  CHECK(one[0].overlap == 0.0);
}

TEST_CASE("nccl-tests' data type names and the usual aliases have their sizes", "[io][workload]") {
  CHECK(collsim::io::dtype_bytes("bfloat16") == 2);
  CHECK(collsim::io::dtype_bytes("bf16") == 2);
  CHECK(collsim::io::dtype_bytes("float") == 4);
  CHECK(collsim::io::dtype_bytes("double") == 8);
  CHECK(collsim::io::dtype_bytes("fp8_e4m3") == 1);
  CHECK(collsim::io::dtype_bytes("complex") == 0);
}

TEST_CASE("a bad workload gets one error with its file:line:column and YAML path",
          "[io][workload][errors]") {
  const std::string head = "name: w\nphases:\n";
  CHECK(error_of(head + "  - {collective: allreduce, bytes: 1 MiB, grup: node}\n") ==
        "w.yaml:3:43: error: phases[0].grup: unknown key 'grup' (did you mean 'group'?); valid "
        "keys are: name, collective, bytes, count, dtype, calls, group, ranks, overlap");
  CHECK(error_of(head + "  - {collective: allreduce, bytes: 1 MiB, group: rack}\n") ==
        "w.yaml:3:50: error: phases[0].group: unknown group 'rack'; valid values are: world, "
        "node, across_nodes, pair");
  CHECK(error_of(head + "  - {collective: allreduce}\n") ==
        "w.yaml:3:5: error: phases[0]: missing the size: give bytes, or count and dtype");
  CHECK(error_of(head + "  - {collective: allreduce, bytes: 8, count: 2, dtype: float}\n") ==
        "w.yaml:3:5: error: phases[0]: give bytes, or count and dtype, not both");
  CHECK(error_of(head + "  - {collective: allreduce, count: 2, dtype: float128}\n") ==
        "w.yaml:3:46: error: phases[0].dtype: unknown data type 'float128'; valid values are: "
        "int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, fp8_e4m3, "
        "fp8_e5m2, fp32, fp16, bf16, fp64, fp8");
  CHECK(error_of(head + "  - {collective: allreduce, bytes: 1 MiB, overlap: 2}\n") ==
        "w.yaml:3:52: error: phases[0].overlap: expected a share from 0 to 1, got '2'");
  CHECK(error_of(head + "  - {collective: allreduce, bytes: 1 MiB, calls: 1.5}\n") ==
        "w.yaml:3:50: error: phases[0].calls: expected a whole number from 1 to 16777216, got "
        "'1.5'");
  CHECK(error_of(head + "  - {collective: allreduse, bytes: 1 MiB}\n") ==
        "w.yaml:3:18: error: phases[0].collective: unknown collective 'allreduse' (did you mean "
        "'allreduce'?); valid values are: allreduce, reduce, bcast, allgather, reduce_scatter, "
        "alltoall, gather, scatter, barrier");
  CHECK(error_of(head + "  - {generator: pipeline, parameters: 10}\n") ==
        "w.yaml:3:17: error: phases[0].generator: unknown generator 'pipeline'; valid values are: "
        "data_parallel, transformer_3d, moe_alltoall, md_halo, stencil_halo");
  CHECK(error_of("name: w\nphases: []\n") ==
        "w.yaml:2:9: error: phases: expected a list of phases (at least one)");
  CHECK(error_of("name: w\ncompute: soon\nphases: [{collective: bcast, bytes: 8}]\n") ==
        "w.yaml:2:10: error: compute: expected a duration like '120 ms' or '1.5 us', got 'soon'");
  CHECK(error_of("phases: [{collective: bcast, bytes: 8}]\n") ==
        "w.yaml:1:1: error: missing required key 'name'");
  CHECK(error_of("name: w\nphases: [{collective: bcast, bytes: 8}\n")
            .starts_with("w.yaml:3:1: error: invalid YAML: "));
  CHECK(error_of("- 1\n") ==
        "w.yaml:1:1: error: expected a workload (a map with keys name, description, compute, "
        "phases)");
}

TEST_CASE("the transformer_3d generator makes Megatron-LM's TP, PP and DP calls",
          "[io][workload]") {
  // GPT-3 175B on 8 x 16 x 8: 96 / 16 = 6 layers a stage, 192 micro-batches.
  const auto w = parse_workload("name: g\nphases:\n  - {generator: transformer_3d, layers: 96, "
                                "hidden: 12288, sequence: 2048, micro_batches: 192, tensor: 8, "
                                "pipeline: 16, data: 8, parameters: 174615822336}\n",
                                "g.yaml");
  REQUIRE(w.phases.size() == 3);
  const auto& tp = w.phases[0];
  CHECK(tp.collective == collsim::core::CollectiveKind::allreduce);
  CHECK(tp.bytes.value == 2048ULL * 12288 * 2); // b s h x bf16
  CHECK(tp.calls == 4 * 6 * 192);
  CHECK(tp.group == WorkloadGroup::node);
  CHECK(tp.ranks == 8);
  const auto& pp = w.phases[1];
  CHECK(pp.collective == collsim::core::CollectiveKind::bcast);
  CHECK(pp.bytes.value == 2048ULL * 12288 * 2 / 8); // scatter/gather over the 8 TP ranks
  CHECK(pp.calls == 2 * 192);
  CHECK(pp.group == WorkloadGroup::pair);
  CHECK(pp.ranks == 2);
  const auto& dp = w.phases[2];
  CHECK(dp.bytes.value == 174615822336ULL / 128 * 2); // P / (t p) x bf16
  CHECK(dp.calls == 1);
  CHECK(dp.group == WorkloadGroup::across_nodes);
  CHECK(dp.ranks == 8);
  CHECK(dp.overlap == 0.0);
  // Degrees of 1 make no phase.
  const auto tp_only = parse_workload("name: t\nphases:\n  - {generator: transformer_3d, layers: "
                                      "2, hidden: 64, sequence: 8, micro_batches: 1, tensor: 4, "
                                      "parameters: 1000}\n",
                                      "t.yaml");
  REQUIRE(tp_only.phases.size() == 1);
  CHECK(tp_only.phases[0].name == "TP allreduce");
  CHECK(error_of("name: w\nphases:\n  - {generator: transformer_3d, layers: 96, hidden: 64, "
                 "sequence: 8, micro_batches: 1, pipeline: 7, parameters: 10}\n") ==
        "w.yaml:3:98: error: phases[0].pipeline: 7 pipeline stages do not divide 96 layers");
}

TEST_CASE("the moe_alltoall generator makes GShard's dispatch and combine all-to-alls",
          "[io][workload]") {
  // Mixtral-like: 32 MoE layers, h 4096, s 4096, top-2, capacity 1.25, 8 micro-batches.
  const auto w =
      parse_workload("name: m\nphases:\n  - {generator: moe_alltoall, moe_layers: 32, hidden: "
                     "4096, sequence: 4096, micro_batches: 8, capacity_factor: 1.25, "
                     "experts: 8, group: node}\n",
                     "m.yaml");
  REQUIRE(w.phases.size() == 1);
  const auto& p = w.phases[0];
  CHECK(p.collective == collsim::core::CollectiveKind::alltoall);
  // 1.25 x 2 x 1 x 4096 tokens x 4096 x 2 bytes = 80 MiB per rank.
  CHECK(p.bytes.value == 83886080);
  CHECK(p.calls == 4 * 32 * 8);
  CHECK(p.group == WorkloadGroup::node);
  CHECK(p.ranks == 8);
  CHECK(p.overlap == 0.0);
  // Switch Transformer's top-1 halves it.
  const auto top1 =
      parse_workload("name: m\nphases:\n  - {generator: moe_alltoall, moe_layers: 1, hidden: 8, "
                     "sequence: 16, top_k: 1, experts: 4, dtype: float}\n",
                     "m.yaml");
  CHECK(top1.phases[0].bytes.value == 16 * 8 * 4);
  CHECK(top1.phases[0].calls == 4);
  CHECK(
      error_of(
          "name: m\nphases:\n  - {generator: moe_alltoall, moe_layers: 1, hidden: 8, sequence: 16, "
          "top_k: 3, experts: 2}\n") ==
      "w.yaml:3:78: error: phases[0].top_k: top_k 3 is more than the 2 experts");
  CHECK(error_of("name: m\nphases:\n  - {generator: moe_alltoall, moe_layers: 1, hidden: 8, "
                 "sequence: 16}\n")
            .find("phases[0]: missing") != std::string::npos);
}

TEST_CASE("the md_halo generator sends HOOMD-blue's ghost layers and checks", "[io][workload]") {
  // 1000 particles at density 1: a cube of side 10; ghost width 1: 100, 120 and 144 ghosts per
  // direction in x, y and z (the later directions forward the edges).
  const auto w = parse_workload(
      "name: md\nphases:\n  - {generator: md_halo, particles: 1000, density: 1, ghost_width: 1, "
      "md_steps: 10, rebuild_every: 5, check_every: 2, precision: single}\n",
      "md.yaml");
  REQUIRE(w.phases.size() == 10); // positions, counts, exchange per axis, and the checks
  CHECK(w.phases[0].name == "ghost positions x");
  CHECK(w.phases[0].bytes.value == 100 * 16); // Scalar4 of floats
  CHECK(w.phases[0].calls == 2 * 8);          // both directions, the 8 steps without a rebuild
  CHECK(w.phases[0].group == WorkloadGroup::pair);
  CHECK(w.phases[1].name == "ghost counts x");
  CHECK(w.phases[1].bytes.value == 4);
  CHECK(w.phases[1].calls == 2 * 2);
  CHECK(w.phases[2].bytes.value == 100 * (4 + 4 + 16)); // plan, tag, position
  CHECK(w.phases[3].bytes.value == 120 * 16);
  CHECK(w.phases[6].bytes.value == 144 * 16);
  CHECK(w.phases[9].collective == collsim::core::CollectiveKind::allreduce);
  CHECK(w.phases[9].bytes.value == 4);
  CHECK(w.phases[9].calls == 5);
  CHECK(error_of("name: md\nphases:\n  - {generator: md_halo, particles: 10, density: 1, "
                 "ghost_width: 1, precision: quad}\n") ==
        "w.yaml:3:80: error: phases[0].precision: unknown precision 'quad'; valid values are: "
        "single, double");
  // A ghost layer wider than half the domain (found by fuzzing: 2e9 made the ghost count
  // overflow its integer).
  CHECK(error_of("name: md\nphases:\n  - {generator: md_halo, particles: 1000, density: 1, "
                 "ghost_width: 5.5}\n") ==
        "w.yaml:3:68: error: phases[0].ghost_width: a ghost width of 5.5 is more than half the "
        "side of a rank's domain, 10 ((particles / density)^(1/3))");
}

TEST_CASE("the stencil_halo generator sends each face of a rank's block to its neighbour",
          "[io][workload]") {
  // A 3D block of 128^3 doubles, halo 2, 5 fields, 3 exchanges a step: 6 faces of 128 x 128 x 2
  // points x 5 x 8 bytes.
  const auto w = parse_workload(
      "name: s\nphases:\n  - {generator: stencil_halo, points: 128, halo: 2, fields: 5, "
      "exchanges: 3}\n",
      "s.yaml");
  REQUIRE(w.phases.size() == 1);
  CHECK(w.phases[0].bytes.value == 128ULL * 128 * 2 * 5 * 8);
  CHECK(w.phases[0].calls == 6 * 3);
  CHECK(w.phases[0].group == WorkloadGroup::pair);
  const auto flat = parse_workload("name: s\nphases:\n  - {generator: stencil_halo, points: 1000, "
                                   "dims: 2, bytes_per_point: 4}\n",
                                   "s.yaml");
  CHECK(flat.phases[0].bytes.value == 1000 * 4);
  CHECK(flat.phases[0].calls == 4);
  CHECK(error_of("name: s\nphases:\n  - {generator: stencil_halo, points: 8, dims: 1}\n") ==
        "w.yaml:3:48: error: phases[0].dims: a stencil halo has 2 or 3 dimensions");
}
