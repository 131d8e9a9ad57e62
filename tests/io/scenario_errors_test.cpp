// One file per error message under tests/data/scenarios_bad/: each must be rejected with exactly
// the text below (file:line:col: error: yaml.path: message), so that a changed message or a lost
// position is a visible diff here rather than a surprise for users.

#include "collsim/core/errors.hpp"
#include "collsim/io/scenario_loader.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace {

using collsim::core::ScenarioError;
using collsim::io::load_scenario;

std::string bad_dir() {
  return std::string(COLLSIM_TEST_DATA_DIR) + "/scenarios_bad";
}

struct BadScenario {
  const char* file;
  std::string message; ///< what() without the directory in front of the file name
  /// Only the start of what() is compared: for messages that end in a list that grows (the
  /// presets, one per file of scenarios/).
  bool prefix = false;
};

// clang-format off
std::vector<BadScenario> bad_scenarios() {
  return {
  // Unknown, misplaced and repeated keys.
  {"unknown_top_level_key.yaml", "unknown_top_level_key.yaml:7:1: error: studys: unknown key 'studys' (did you mean 'studies'?); valid keys are: name, base, description, topology, simgrid, nccl, mpi, stack, buffers, accuracy, studies"},
  {"unknown_topology_key.yaml", "unknown_topology_key.yaml:6:3: error: topology.bandwidht: unknown key 'bandwidht' (did you mean 'bandwidth'?); valid keys are: kind, latency, bandwidth, reduce_bandwidth, overhead, gap, copy_bandwidth"},
  {"bad_counts_spec.yaml", "bad_counts_spec.yaml:9:13: error: studies[0].counts: zipf needs a number from 0 to 100 after ':' (the exponent, e.g. zipf:1.2), got '-1'"},
  {"counts_without_v_variant.yaml", "counts_without_v_variant.yaml:9:13: error: studies[0].counts: allreduce has no v-variant: counts apply to allgather, gather, scatter, reduce_scatter and alltoall"},
  {"neighbor_without_graph.yaml", "neighbor_without_graph.yaml:8:17: error: studies[0].collective: a neighbourhood collective needs its process graph: counts: cart:DxD[,periodic], graph:PATH or sparse:D"},
  {"bad_skew_spec.yaml", "bad_skew_spec.yaml:9:11: error: studies[0].skew: late needs a duration from 0 to 1 hour after ':', e.g. late:1ms, got 'soon'"},
  {"unknown_study_key.yaml", "unknown_study_key.yaml:9:5: error: studies[0].algorithm: unknown key 'algorithm' (did you mean 'algorithms'?); valid keys are: name, collective, algorithms, stacks, ranks, sizes, root, engine, params, counts, skew"},
  {"unknown_key_without_suggestion.yaml", "unknown_key_without_suggestion.yaml:7:3: error: topology.colour: unknown key 'colour'; valid keys are: kind, latency, bandwidth, reduce_bandwidth, overhead, gap, copy_bandwidth"},
  {"cluster_key_in_uniform_topology.yaml", "cluster_key_in_uniform_topology.yaml:7:3: error: topology.nic_bandwidth: key 'nic_bandwidth' is not valid for a uniform topology (it is a cluster key); valid keys are: kind, latency, bandwidth, reduce_bandwidth, overhead, gap, copy_bandwidth"},
  {"uniform_key_in_cluster_topology.yaml", "uniform_key_in_cluster_topology.yaml:6:3: error: topology.latency: key 'latency' is not valid for a cluster topology (it is a uniform key); valid keys are: kind, nodes, devices_per_node, intra_bandwidth, intra_latency, nics_per_node, nic_bandwidth, nic_latency, switch_latency, reduce_bandwidth, node_switch_reduces, network_switch_reduces, switch_reduce_bandwidth, overhead, gap, copy_bandwidth"},
  {"topology_key_without_kind.yaml", "topology_key_without_kind.yaml:4:3: error: topology.knd: unknown key 'knd' (did you mean 'kind'?); valid keys are: kind, latency, bandwidth, reduce_bandwidth, overhead, gap, copy_bandwidth, nodes, devices_per_node, intra_bandwidth, intra_latency, nics_per_node, nic_bandwidth, nic_latency, switch_latency, node_switch_reduces, network_switch_reduces, switch_reduce_bandwidth, node, network, placement"},
  {"duplicate_key.yaml", "duplicate_key.yaml:7:3: error: topology.bandwidth: duplicate key 'bandwidth' (first given on line 6)"},
  {"non_scalar_key.yaml", "non_scalar_key.yaml:7:3: error: topology: expected a key name, got a list"},
  // Missing required keys: reported at the start of the map that lacks them.
  {"missing_name.yaml", "missing_name.yaml:2:1: error: missing required key 'name'"},
  {"missing_topology.yaml", "missing_topology.yaml:2:1: error: missing required key 'topology'"},
  {"missing_topology_kind.yaml", "missing_topology_kind.yaml:4:3: error: topology: missing required key 'kind'"},
  {"missing_studies.yaml", "missing_studies.yaml:2:1: error: missing required key 'studies'"},
  {"missing_study_collective.yaml", "missing_study_collective.yaml:8:5: error: studies[0]: missing required key 'collective'"},
  {"missing_study_algorithms.yaml", "missing_study_algorithms.yaml:8:5: error: studies[0]: missing required key 'algorithms'"},
  {"missing_study_ranks.yaml", "missing_study_ranks.yaml:8:5: error: studies[0]: missing required key 'ranks'"},
  {"missing_study_sizes.yaml", "missing_study_sizes.yaml:8:5: error: studies[0]: missing required key 'sizes'"},
  // Wrong types and shapes.
  {"empty_file.yaml", "empty_file.yaml:1:1: error: expected a scenario (a map with keys name, base, description, topology, simgrid, nccl, mpi, stack, buffers, accuracy, studies), got nothing"},
  {"top_level_list.yaml", "top_level_list.yaml:2:1: error: expected a scenario (a map with keys name, base, description, topology, simgrid, nccl, mpi, stack, buffers, accuracy, studies), got a list"},
  {"two_documents.yaml", "two_documents.yaml:13:1: error: expected one YAML document, found 2"},
  {"name_is_a_map.yaml", "name_is_a_map.yaml:2:7: error: name: expected a scenario name, got a map"},
  {"empty_name.yaml", "empty_name.yaml:2:7: error: name: expected a scenario name, got ''"},
  {"topology_is_a_list.yaml", "topology_is_a_list.yaml:4:3: error: topology: expected a map, got a list"},
  {"studies_is_a_map.yaml", "studies_is_a_map.yaml:8:3: error: studies: expected a list of studies, got a map"},
  {"study_is_a_string.yaml", "study_is_a_string.yaml:8:5: error: studies[0]: expected a map, got 'allreduce'"},
  {"collective_is_a_list.yaml", "collective_is_a_list.yaml:8:17: error: studies[0].collective: expected a collective name, got a list"},
  {"algorithms_is_a_map.yaml", "algorithms_is_a_map.yaml:9:17: error: studies[0].algorithms: expected a list of algorithm names, got a map"},
  {"algorithm_is_a_map.yaml", "algorithm_is_a_map.yaml:9:24: error: studies[0].algorithms[1]: expected an algorithm name, got a map"},
  {"empty_algorithm_name.yaml", "empty_algorithm_name.yaml:9:24: error: studies[0].algorithms[1]: expected an algorithm name, got ''"},
  {"ranks_is_a_map.yaml", "ranks_is_a_map.yaml:10:12: error: studies[0].ranks: expected a rank count or a list of rank counts, got a map"},
  {"rank_not_an_integer.yaml", "rank_not_an_integer.yaml:10:16: error: studies[0].ranks[1]: expected a rank count (an integer >= 1), got '8.5'"},
  {"sizes_is_a_map.yaml", "sizes_is_a_map.yaml:11:12: error: studies[0].sizes: expected a size sweep like '8B:1GiB:x2' or a list of sizes, got a map"},
  {"root_not_an_integer.yaml", "root_not_an_integer.yaml:12:11: error: studies[0].root: expected a root rank (an integer >= 0), got 'first'"},
  {"params_is_a_list.yaml", "params_is_a_list.yaml:12:13: error: studies[0].params: expected a map, got a list"},
  {"param_value_not_a_number.yaml", "param_value_not_a_number.yaml:12:28: error: studies[0].params.segment_size: expected an integer, a size like '64 KiB' or a name, got '64 KiB!'"},
  {"param_value_is_a_list.yaml", "param_value_is_a_list.yaml:12:28: error: studies[0].params.segment_size: expected an integer, a size like '64 KiB' or a name, got a list"},
  {"switch_reduces_not_a_bool.yaml", "switch_reduces_not_a_bool.yaml:5:24: error: topology.node_switch_reduces: expected true or false, got 'yes please'"},
  {"empty_bandwidth.yaml", "empty_bandwidth.yaml:6:3: error: topology.bandwidth: expected a bandwidth like '25 GB/s', got nothing"},
  // Units: the text comes from core's unit parsers.
  {"bandwidth_without_unit.yaml", "bandwidth_without_unit.yaml:6:14: error: topology.bandwidth: expected a bandwidth like '25 GB/s' or '200 Gb/s', got '10'"},
  {"latency_without_unit.yaml", "latency_without_unit.yaml:5:12: error: topology.latency: expected a duration like '1.5 us', '200 ns' or '2 ms', got '2'"},
  {"zero_bandwidth.yaml", "zero_bandwidth.yaml:6:14: error: topology.bandwidth: a bandwidth must be positive, got '0 GB/s'"},
  {"negative_latency.yaml", "negative_latency.yaml:5:12: error: topology.latency: a duration cannot be negative, got '-1 us'"},
  {"negative_nic_bandwidth.yaml", "negative_nic_bandwidth.yaml:5:18: error: topology.nic_bandwidth: a bandwidth must be positive, got '-25 GB/s'"},
  {"bad_size_sweep_factor.yaml", "bad_size_sweep_factor.yaml:11:12: error: studies[0].sizes: size sweep factor must be an integer of at least 2 ('x2'), got 'x1'"},
  {"bad_size_in_list.yaml", "bad_size_in_list.yaml:11:20: error: studies[0].sizes[1]: expected a size like '64 KiB', '1 MB' or '8 B', got '1 KiBs'"},
  // Counts out of range.
  {"zero_ranks.yaml", "zero_ranks.yaml:10:13: error: studies[0].ranks[0]: a rank count must be at least 1, got 0"},
  {"too_many_ranks.yaml", "too_many_ranks.yaml:10:12: error: studies[0].ranks: a study can simulate at most 16777216 ranks, got 16777217"},
  {"zero_devices_per_node.yaml", "zero_devices_per_node.yaml:5:21: error: topology.devices_per_node: must be at least 1, got 0"},
  {"zero_nics_per_node.yaml", "zero_nics_per_node.yaml:6:18: error: topology.nics_per_node: must be at least 1, got 0"},
  {"more_nics_than_devices.yaml", "more_nics_than_devices.yaml:6:18: error: topology.nics_per_node: nics_per_node (4) cannot exceed devices_per_node (2)"},
  {"nodes_not_an_integer.yaml", "nodes_not_an_integer.yaml:5:10: error: topology.nodes: expected an integer, got 'two'"},
  {"too_many_nodes.yaml", "too_many_nodes.yaml:5:10: error: topology.nodes: must be at most 16777216, got 20000000"},
  {"too_many_devices.yaml", "too_many_devices.yaml:5:10: error: topology.nodes: 100000 nodes x 1000 devices_per_node is 100000000 devices; at most 16777216 are supported"},
  {"negative_root.yaml", "negative_root.yaml:12:11: error: studies[0].root: must be at least 0, got -1"},
  {"root_out_of_range.yaml", "root_out_of_range.yaml:12:11: error: studies[0].root: root 8 is out of range for 8 ranks (valid roots are 0..7)"},
  // Unknown names.
  {"unknown_collective.yaml", "unknown_collective.yaml:8:17: error: studies[0].collective: unknown collective 'allreduc' (did you mean 'allreduce'?); valid values are: allreduce, reduce, bcast, allgather, reduce_scatter, alltoall, gather, scatter, barrier"},
  {"unknown_topology_kind.yaml", "unknown_topology_kind.yaml:4:9: error: topology.kind: unknown topology kind 'torus'; valid values are: uniform, cluster, system"},
  {"unknown_engine.yaml", "unknown_engine.yaml:12:13: error: studies[0].engine: unknown engine 'logp' (did you mean 'loggp'?); valid values are: loggp, analytic, simgrid"},
  // Empty lists.
  {"empty_studies.yaml", "empty_studies.yaml:7:10: error: studies: expected at least one study"},
  {"empty_algorithms.yaml", "empty_algorithms.yaml:9:17: error: studies[0].algorithms: expected at least one algorithm"},
  {"empty_ranks.yaml", "empty_ranks.yaml:10:12: error: studies[0].ranks: expected at least one rank count"},
  {"empty_sizes.yaml", "empty_sizes.yaml:11:12: error: studies[0].sizes: expected at least one size"},
  {"study_stacks_empty.yaml", "study_stacks_empty.yaml:8:13: error: studies[0].stacks: expected at least one stack"},
  {"buffers_unknown.yaml", "buffers_unknown.yaml:5:10: error: buffers: unknown buffer location 'gpu'; valid values are: device, host"},
  // kind: system. Unknown keys, keys of another kind and unknown names, section by section.
  {"system_unknown_node_key.yaml", "system_unknown_node_key.yaml:7:5: error: topology.node.nic: unknown key 'nic' (did you mean 'nics'?); valid keys are: gpus, reduce_bandwidth, nvlink, pcie, cpu, nics, nic_bandwidth, nic_latency, nic_kind, nic_efficiency, nic_ports"},
  {"system_unknown_nvlink_key.yaml", "system_unknown_nvlink_key.yaml:9:7: error: topology.node.nvlink.link_bandwith: unknown key 'link_bandwith' (did you mean 'link_bandwidth'?); valid keys are: kind, link_bandwidth, latency, links_per_gpu, sharp, sharp_reduce_bandwidth"},
  {"system_unknown_pcie_key.yaml", "system_unknown_pcie_key.yaml:8:7: error: topology.node.pcie.generation: unknown key 'generation'; valid keys are: gen, lanes, bandwidth, switches, p2p, gdr, latency, switch_latency, staged_duplex_efficiency"},
  {"system_pcie_gdr_maybe.yaml", "system_pcie_gdr_maybe.yaml:7:38: error: topology.node.pcie.gdr: expected true or false, got 'maybe'"},
  {"system_unknown_cpu_key.yaml", "system_unknown_cpu_key.yaml:8:7: error: topology.node.cpu.cores: unknown key 'cores'; valid keys are: sockets, numa_per_socket, cores_per_socket, memory_bandwidth, memory_latency, inter_socket, inter_socket_bandwidth, inter_socket_latency, core_bandwidth"},
  {"system_unknown_network_key.yaml", "system_unknown_network_key.yaml:7:5: error: topology.network.radixx: unknown key 'radixx' (did you mean 'radix'?); valid keys are: kind, link_bandwidth, link_latency, switch_latency, sharp, sharp_reduce_bandwidth, rail_optimized, levels, radix, taper"},
  {"system_unknown_placement_key.yaml", "system_unknown_placement_key.yaml:8:5: error: topology.placement.orders: unknown key 'orders' (did you mean 'order'?); valid keys are: order, ranks_per_node, rankfile"},
  {"system_network_key_of_other_kind.yaml", "system_network_key_of_other_kind.yaml:7:5: error: topology.network.radix: key 'radix' is not valid for a dragonfly network (it is a fat_tree key); valid keys are: kind, link_bandwidth, link_latency, switch_latency, sharp, sharp_reduce_bandwidth, groups, routers_per_group, hosts_per_router, global_links_per_router, routing"},
  {"system_nvlink_key_of_other_kind.yaml", "system_nvlink_key_of_other_kind.yaml:9:7: error: topology.node.nvlink.links_per_gpu: key 'links_per_gpu' is not valid for NVLink kind 'all_to_all'; valid keys are: kind, link_bandwidth, latency, links_per_pair"},
  // NVLink SHARP on a board without an NVSwitch: 'sharp' is only a key of kind 'switch', so the
  // key check answers before topologies::validate could.
  {"system_nvlink_sharp_without_switch.yaml", "system_nvlink_sharp_without_switch.yaml:9:7: error: topology.node.nvlink.sharp: key 'sharp' is not valid for NVLink kind 'all_to_all'; valid keys are: kind, link_bandwidth, latency, links_per_pair"},
  {"system_unknown_network_kind.yaml", "system_unknown_network_kind.yaml:6:11: error: topology.network.kind: unknown network kind 'hypercube'; valid values are: switch, fat_tree, dragonfly, dragonfly_plus, torus"},
  {"system_unknown_nvlink_kind.yaml", "system_unknown_nvlink_kind.yaml:8:13: error: topology.node.nvlink.kind: unknown NVLink kind 'nvswitch' (did you mean 'switch'?); valid values are: none, all_to_all, switch, bridges, explicit"},
  {"system_unknown_nic_kind.yaml", "system_unknown_nic_kind.yaml:7:15: error: topology.node.nic_kind: unknown NIC kind 'efaa' (did you mean 'efa'?); valid values are: ib_edr, ib_hdr, ib_ndr, roce, efa, tcpx, tcpxo"},
  {"system_unknown_placement_order.yaml", "system_unknown_placement_order.yaml:8:12: error: topology.placement.order: unknown placement order 'round_robin'; valid values are: block, cyclic, numa"},
  {"system_unknown_routing.yaml", "system_unknown_routing.yaml:7:14: error: topology.network.routing: unknown routing 'adaptive'; valid values are: minimal, valiant"},
  {"system_order_and_rankfile.yaml", "system_order_and_rankfile.yaml:8:12: error: topology.placement.order: give either 'order' or 'rankfile', not both (a rankfile is the order)"},
  // kind: system. Values out of range, checked key by key.
  {"system_pcie_gen_7.yaml", "system_pcie_gen_7.yaml:8:12: error: topology.node.pcie.gen: PCIe gen must be 3, 4, 5 or 6, got 7"},
  {"system_pcie_lanes_3.yaml", "system_pcie_lanes_3.yaml:8:14: error: topology.node.pcie.lanes: PCIe lanes must be 1, 2, 4, 8 or 16, got 3"},
  {"system_pcie_duplex_efficiency_zero.yaml", "system_pcie_duplex_efficiency_zero.yaml:7:71: error: topology.node.pcie.staged_duplex_efficiency: expected a number greater than 0 and at most 1, got 0"},
  {"system_nic_efficiency_above_one.yaml", "system_nic_efficiency_above_one.yaml:8:21: error: topology.node.nic_efficiency: expected a number greater than 0 and at most 1, got 1.5"},
  {"system_zero_nic_bandwidth.yaml", "system_zero_nic_bandwidth.yaml:7:20: error: topology.node.nic_bandwidth: a bandwidth must be positive, got '0 GB/s'"},
  {"system_negative_latency.yaml", "system_negative_latency.yaml:9:16: error: topology.node.nvlink.latency: a duration cannot be negative, got '-2 us'"},
  {"system_fat_tree_levels_4.yaml", "system_fat_tree_levels_4.yaml:7:13: error: topology.network.levels: a fat-tree has 1, 2 or 3 levels, got 4"},
  {"system_taper_below_one.yaml", "system_taper_below_one.yaml:7:12: error: topology.network.taper: a taper is down:up at the leaves and at least 1 (1:1 is non-blocking), got '1:2'"},
  {"system_taper_garbage.yaml", "system_taper_garbage.yaml:7:12: error: topology.network.taper: expected a ratio like '2:1' or a number >= 1, got 'two to one'"},
  {"system_torus_four_dims.yaml", "system_torus_four_dims.yaml:7:11: error: topology.network.dims: a torus has 2 or 3 dimensions, got 4"},
  {"system_torus_dim_of_one.yaml", "system_torus_dim_of_one.yaml:7:15: error: topology.network.dims[1]: a torus dimension has at least 2 routers, got 1"},
  {"system_nvlink_entry_not_a_triple.yaml", "system_nvlink_entry_not_a_triple.yaml:9:26: error: topology.node.nvlink.links[1]: expected [gpu, gpu, links], got a list of 2"},
  // kind: system. Checks between values (topologies::validate, check_network), at the value
  // behind the problem; at the `topology` key when that value was not written (a default).
  {"system_torus_without_dims.yaml", "system_torus_without_dims.yaml:3:1: error: topology.network.dims: a torus has 2 or 3 dimensions, got 0 ([])"},
  {"system_nvlink_explicit_without_links.yaml", "system_nvlink_explicit_without_links.yaml:3:1: error: topology.node.nvlink.links: an explicit NVLink topology needs a 'links' list of [gpu, gpu, links]"},
  {"system_nvlink_gpu_out_of_range.yaml", "system_nvlink_gpu_out_of_range.yaml:9:26: error: topology.node.nvlink.links[1]: GPU 9 does not exist: the node has 8 GPUs (0 to 7)"},
  {"system_nvlink_pair_twice.yaml", "system_nvlink_pair_twice.yaml:11:11: error: topology.node.nvlink.links[1]: GPUs 1 and 0 are listed twice"},
  {"system_nvlink_gpu_to_itself.yaml", "system_nvlink_gpu_to_itself.yaml:9:26: error: topology.node.nvlink.links[1]: an NVLink joins two different GPUs, got 2 and 2"},
  {"system_nvlink_bridges_odd_gpus.yaml", "system_nvlink_bridges_odd_gpus.yaml:8:13: error: topology.node.nvlink.kind: NVLink bridges join GPUs in pairs, but the node has 3 GPUs"},
  {"system_nvlink_without_gpus.yaml", "system_nvlink_without_gpus.yaml:8:13: error: topology.node.nvlink.kind: a node without GPUs (gpus: 0) cannot have NVLink"},
  {"system_ranks_per_node_above_gpus.yaml", "system_ranks_per_node_above_gpus.yaml:8:21: error: topology.placement.ranks_per_node: 8 ranks per node, but a node has 4 GPUs"},
  {"system_more_numa_than_cores.yaml", "system_more_numa_than_cores.yaml:8:24: error: topology.node.cpu.numa_per_socket: 8 NUMA domains per socket but only 4 cores per socket"},
  {"system_fat_tree_too_small.yaml", "system_fat_tree_too_small.yaml:11:12: error: topology.network.radix: 400 NICs do not fit a 2-level fat tree of radix 8: it attaches at most 32 (8 leaves x 4 ports down)"},
  {"system_dragonfly_too_few_global_links.yaml", "system_dragonfly_too_few_global_links.yaml:11:30: error: topology.network.global_links_per_router: 20 groups need 19 global links per group to join every pair of groups, but routers_per_group 2 x global_links_per_router 2 = 4"},
  {"system_sharp_on_dragonfly.yaml", "system_sharp_on_dragonfly.yaml:9:12: error: topology.network.sharp: SHARP needs an InfiniBand fat-tree or switch, not a dragonfly network"},
  {"system_no_nics_on_several_nodes.yaml", "system_no_nics_on_several_nodes.yaml:8:11: error: topology.node.nics: nics: 0 leaves the 2 nodes disconnected; a system of more than one node needs at least one NIC per node"},
  {"system_study_beyond_capacity.yaml", "system_study_beyond_capacity.yaml:11:12: error: studies[0].ranks: 16 ranks, but the topology has room for 8 (nodes x ranks per node)"},
  // Rankfiles (in rankfiles/, read relative to the scenario): errors in the rankfile point into
  // it; the rankfile's own path is absolute here because the scenario's is.
  {"system_rankfile_missing.yaml", "system_rankfile_missing.yaml:8:15: error: topology.placement.rankfile: cannot open rankfile '" + bad_dir() + "/rankfiles/no_such_rankfile.txt': No such file or directory"},
  {"system_rankfile_syntax_error.yaml", "rankfiles/syntax_error.txt:3:8: error: expected '=' after the rank ('rank N=HOST slot=SLOT'), got 'node0 slot=1'"},
  {"system_rankfile_rank_twice.yaml", "rankfiles/rank_twice.txt:3:6: error: rank 1 is placed twice"},
  {"system_rankfile_empty.yaml", "rankfiles/empty.txt:1:1: error: the rankfile places no rank (expected lines like 'rank 0=node0 slot=0')"},
  {"system_rankfile_node_beyond_nodes.yaml", "rankfiles/node_beyond_nodes.txt:3:1: error: topology.placement.rankfile: rank 2 is placed on node 2, but the system has 2 nodes (0 to 1)"},
  {"system_rankfile_slot_beyond_slots.yaml", "rankfiles/slot_beyond_slots.txt:2:1: error: topology.placement.rankfile: slot 4 does not exist: a node has 4 GPUs (slots 0 to 3)"},
  {"system_rankfile_socket_beyond_sockets.yaml", "rankfiles/socket_beyond_sockets.txt:2:1: error: topology.placement.rankfile: socket 2 does not exist: a node has 2 sockets"},
  // `base`. The list of presets after "valid values are: " grows with every file added to
  // scenarios/, so only the start of that message is compared.
  {"base_unknown_preset.yaml", "base_unknown_preset.yaml:2:7: error: base: unknown preset 'juwels-boster' (did you mean 'juwels-booster'?); valid values are: ", true},
  // Two files naming each other: the chain is cut at depth 8, in whichever file is reached there.
  {"base_circular_a.yaml", "base_circular_a.yaml:2:7: error: base: 'base' chain deeper than 8 scenarios (is it circular?)"},
  {"base_circular_b.yaml", "base_circular_b.yaml:2:7: error: base: 'base' chain deeper than 8 scenarios (is it circular?)"},
  // A base file that does not exist is reported at that file, not at the `base` line.
  {"base_file_missing.yaml", "base_file_missing.yaml:2:7: error: base: cannot open base scenario '" + bad_dir() + "/no_such_base.yaml': No such file or directory"},
  // YAML syntax, reported with yaml-cpp's own message and position.
  // The SimGrid engine's settings.
  {"nccl_unknown_protocol.yaml", "nccl_unknown_protocol.yaml:6:3: error: nccl.ll64: unknown key 'll64' (did you mean 'll'?); valid keys are: call_overhead, net_latency, net_step, net_step_simple, group_launch, version, ll, ll128, simple, env"},
  {"nccl_version_not_a_release.yaml", "nccl_version_not_a_release.yaml:6:12: error: nccl.version: '3.1' is not an NCCL release (expected 2.MINOR.PATCH such as 2.19.3, or a version code such as 21903)"},
  {"nccl_env_not_nccl.yaml", "nccl_env_not_nccl.yaml:7:5: error: nccl.env.CUDA_VISIBLE_DEVICES: 'CUDA_VISIBLE_DEVICES' is not an NCCL environment variable (they start with NCCL_)"},
  {"mpi_unknown_key.yaml", "mpi_unknown_key.yaml:6:3: error: mpi.rndv_thresh: unknown key 'rndv_thresh'; valid keys are: call_overhead, env"},
  {"mpi_env_not_a_variable.yaml", "mpi_env_not_a_variable.yaml:7:5: error: mpi.env.ucx-tls: 'ucx-tls' is not an environment variable name (such as UCX_TLS or OMPI_MCA_coll_tuned_use_dynamic_rules)"},
  {"nccl_efficiency_above_one.yaml", "nccl_efficiency_above_one.yaml:7:24: error: nccl.simple.efficiency_factor: expected a number greater than 0 and at most 1, got 1.2"},
  {"nccl_net_latency_without_unit.yaml", "nccl_net_latency_without_unit.yaml:6:16: error: nccl.net_latency: expected a duration like '1.5 us', '200 ns' or '2 ms', got '75'"},
  {"nccl_call_overhead_without_unit.yaml", "nccl_call_overhead_without_unit.yaml:6:18: error: nccl.call_overhead: expected a duration like '1.5 us', '200 ns' or '2 ms', got '20'"},
  {"simgrid_bad_send_port.yaml", "simgrid_bad_send_port.yaml:6:14: error: simgrid.send_port: unknown send port 'parallel'; valid values are: serial, shared"},
  {"simgrid_bad_tcp_gamma.yaml", "simgrid_bad_tcp_gamma.yaml:6:14: error: simgrid.tcp_gamma: expected a size like '64 KiB', '1 MB' or '8 B', got 'big'"},
  {"simgrid_factor_not_a_number.yaml", "simgrid_factor_not_a_number.yaml:6:19: error: simgrid.latency_factor: expected a number greater than 0, got 'fast'"},
  {"simgrid_negative_weight.yaml", "simgrid_negative_weight.yaml:6:13: error: simgrid.weight_s: expected a number of at least 0, got -1"},
  {"simgrid_not_a_map.yaml", "simgrid_not_a_map.yaml:5:10: error: simgrid: expected a map, got 'CM02'"},
  {"simgrid_unknown_key.yaml", "simgrid_unknown_key.yaml:6:3: error: simgrid.tcp_window: unknown key 'tcp_window'; valid keys are: network_model, tcp_gamma, latency_factor, bandwidth_factor, weight_s, crosstraffic, send_port"},
  {"simgrid_unknown_model.yaml", "simgrid_unknown_model.yaml:6:18: error: simgrid.network_model: unknown SimGrid network model 'CM2' (did you mean 'CM02'?); valid values are: CM02, LV08, SMPI, IB, Constant"},
  {"simgrid_zero_factor.yaml", "simgrid_zero_factor.yaml:6:21: error: simgrid.bandwidth_factor: expected a number greater than 0, got 0"},
  // The measured accuracy (collsim check's band).
  {"accuracy_not_a_percentage.yaml", "accuracy_not_a_percentage.yaml:6:55: error: accuracy.from_1MiB.slower: expected a percentage like '7.4 %', got 'lots'"},
  {"accuracy_range_missing_key.yaml", "accuracy_range_missing_key.yaml:6:15: error: accuracy.below_1MiB: missing required key 'slower'"},
  {"accuracy_unknown_key.yaml", "accuracy_unknown_key.yaml:6:3: error: accuracy.below_1mib: unknown key 'below_1mib' (did you mean 'below_1MiB'?); valid keys are: measured_on, below_1MiB, from_1MiB"},
  {"accuracy_unordered.yaml", "accuracy_unordered.yaml:6:15: error: accuracy.below_1MiB: expected median <= p90 <= the larger of slower and faster, got median 6 %, p90 5 %, slower 7 %, faster 1 %"},
  {"accuracy_zero_rows.yaml", "accuracy_zero_rows.yaml:6:22: error: accuracy.below_1MiB.rows: must be at least 1, got 0"},
  {"invalid_yaml.yaml", "invalid_yaml.yaml:10:10: error: invalid YAML: end of sequence flow not found"},
  {"stray_comma.yaml", "stray_comma.yaml:3:1: error: invalid YAML: unexpected ','"},
  };
}
// clang-format on

std::string message_of(const std::string& path) {
  try {
    (void)load_scenario(path);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(loaded without error)";
}

} // namespace

TEST_CASE("every bad scenario is rejected with its exact message", "[io][scenario][errors]") {
  for (const auto& bad : bad_scenarios()) {
    INFO("file: " << bad.file);
    const std::string expected = bad_dir() + "/" + bad.message;
    if (bad.prefix) {
      CHECK_THAT(message_of(bad_dir() + "/" + bad.file), Catch::Matchers::StartsWith(expected));
    } else {
      CHECK(message_of(bad_dir() + "/" + bad.file) == expected);
    }
  }
}

TEST_CASE("every file in scenarios_bad has an expected message and every message a file",
          "[io][scenario][errors]") {
  // Only the scenarios at the top: rankfiles/ holds files that scenarios refer to.
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(bad_dir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      on_disk.insert(entry.path().filename().string());
    }
  }
  std::set<std::string> expected;
  for (const auto& bad : bad_scenarios()) {
    CHECK(expected.insert(bad.file).second); // listed once
  }
  CHECK(on_disk == expected);
}

TEST_CASE("a scenario error exposes its position, path and message separately",
          "[io][scenario][errors]") {
  const std::string path = bad_dir() + "/unknown_engine.yaml";
  try {
    (void)load_scenario(path);
    FAIL("the scenario loaded");
  } catch (const ScenarioError& e) {
    CHECK(e.pos() == collsim::core::SourcePos{path, 12, 13});
    CHECK(e.yaml_path() == "studies[0].engine");
    CHECK(e.message() == "unknown engine 'logp' (did you mean 'loggp'?); valid values are: loggp, "
                         "analytic, simgrid");
    CHECK(e.is_input_error());
  }
}

TEST_CASE("a scenario file that does not exist is reported with the system's reason",
          "[io][scenario][errors]") {
  const std::string path = bad_dir() + "/no_such_file.yaml";
  CHECK(message_of(path) == path + ": error: cannot open scenario file: No such file or directory");
}

TEST_CASE("a directory given as a scenario file is reported, not read as empty",
          "[io][scenario][errors]") {
  CHECK(message_of(bad_dir()) == bad_dir() + ": error: cannot open scenario file: Is a directory");
}

TEST_CASE("parse_scenario uses the given file name in messages", "[io][scenario][errors]") {
  CHECK_THROWS_WITH(collsim::io::parse_scenario("name: [", "inline.yaml"),
                    Catch::Matchers::StartsWith("inline.yaml:1:"));
  CHECK_THROWS_WITH(collsim::io::parse_scenario("name: x\n", "inline.yaml"),
                    "inline.yaml:1:1: error: missing required key 'topology'");
}
