// The mapping `collsim place` chose, written for the launchers that start MPI jobs
// (placement.hpp, "Launcher files"; docs/placement.md). Each file starts with comment lines that
// say what it is and how to launch with it, then the mapping in the launcher's own grammar:
//
//   * Open MPI rankfile (mpirun(1) of Open MPI 4.1, "Rankfiles"): `rank N=HOST slot=S:C`, core
//     C of socket S in hwloc's logical numbering, so no caveat about how the OS numbers CPUs.
//     HOST is `+nK` (the K-th node of a batch allocation; mpirun refuses it outside one: "A
//     relative host was specified, but no prior allocation has been made") or a name given.
//     One line per rank in rank order: Open MPI 4.1.4 rejects a file whose first line is not
//     rank 0 ("Error, rank 0 is already assigned to ..."; found by the real run below). collsim's
//     reader (io/rankfile.cpp) numbers named hosts by first appearance, so a file with names
//     reads back with the nodes renumbered; `+nK` reads back exactly.
//   * MPICH/Hydra machinefile: `HOST:COUNT binding=user:C0,C1,...` per run of consecutive ranks
//     on one host. Hydra starts ranks in line order, one proxy per line, and binds the i-th
//     process of a line to the i-th CPU of its list (the `binding=` token of Hydra's machinefile
//     parser, HYDU_process_mfile_token, MPICH 3.x and 4.x; not in the Hydra wiki). A global
//     `-bind-to user:` list could not express most mappings: it is indexed by the process's
//     place on its line, the same list for every line. Consecutive lines never name the same
//     host: Hydra would merge them into one line and reject the second binding.
//   * Slurm (srun(1)): a hostfile for SLURM_HOSTFILE with --distribution=arbitrary, line i the
//     host of rank i, and --cpu-bind=map_cpu:LIST (or --gpu-bind=map_gpu:LIST). srun applies one
//     list to every node, entry i to the node's i-th task, so it expresses a mapping only when
//     every node's CPUs, in rank order, begin one common list. Otherwise the header gives a
//     command that binds each rank itself (taskset, or CUDA_VISIBLE_DEVICES for GPUs) from the
//     `#by-rank` comment lines. Slurm reads the file with 4096-byte lines (slurm_read_hostfile),
//     so long lists are wrapped.
//
// Hydra's user binding and Slurm's map_cpu take OS CPU ids; collsim writes core k of a node
// counted socket by socket, which is the OS id where the OS numbers the cores of socket 0
// first (many two-socket Intel servers interleave the sockets instead: compare
// `lscpu -p=CPU,SOCKET,CORE`). On GPU nodes a slot is a GPU: no launcher binds GPUs by rank
// except Slurm's map_gpu, so the files list each rank's GPU for the application to select.
// tests/probe/placement_launch_mpi_test.cpp runs Open MPI and MPICH with these files.

#include "collsim/analysis/placement.hpp"

#include "collsim/core/errors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace collsim::analysis {
namespace {

constexpr std::uint32_t kPerCommentLine = 32; ///< list entries per wrapped comment line

std::uint32_t node_count(const PlacementProblem& p) {
  std::uint32_t n = 0;
  for (const std::uint32_t k : p.node) {
    n = std::max(n, k + 1);
  }
  return n;
}

/// The host of node k: the name given, else `fallback` followed by k.
std::string host_of(const LaunchNames& names, std::uint32_t k, std::string_view fallback) {
  return names.hosts.empty() ? fmt::format("{}{}", fallback, k) : names.hosts[k];
}

void check_hosts(const PlacementProblem& p, const LaunchNames& names) {
  if (names.hosts.empty()) {
    return;
  }
  std::set<std::string> seen;
  for (const std::string& h : names.hosts) {
    const bool bad =
        h.empty() || h[0] == '+' || h.find_first_of(" \t\r\n,:#=") != std::string::npos;
    if (bad) {
      throw core::UsageError(fmt::format("--hosts: '{}' is not a host name", h));
    }
    if (!seen.insert(h).second) {
      throw core::UsageError(fmt::format("--hosts names '{}' twice", h));
    }
  }
  const std::uint32_t nodes = node_count(p);
  if (names.hosts.size() < nodes) {
    throw core::UsageError(fmt::format("--hosts names {} host{}, the placement uses {} nodes",
                                       names.hosts.size(), names.hosts.size() == 1 ? "" : "s",
                                       nodes));
  }
}

std::string file_of(const LaunchNames& names) {
  return names.file.empty() || names.file == "-" ? std::string("FILE") : names.file;
}

std::string title(const PlacementProblem& p, std::string_view what) {
  return fmt::format("# collsim place: {} for {}, {} ranks on {} node{}\n", what, p.pattern.name,
                     p.pattern.ranks, node_count(p), node_count(p) == 1 ? "" : "s");
}

bool on_gpus(const std::vector<RankPlace>& places) {
  return !places.empty() && places.front().gpu;
}

std::string join(const std::vector<std::uint32_t>& v, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    out += fmt::format("{}{}", i > from ? "," : "", v[i]);
  }
  return out;
}

/// `#by-rank` lines: the CPU (or GPU) of every rank in rank order, wrapped.
std::string by_rank_lines(const std::vector<RankPlace>& places) {
  std::vector<std::uint32_t> v;
  for (const RankPlace& r : places) {
    v.push_back(r.device);
  }
  std::string out =
      fmt::format("# The {} of each rank, in rank order:\n", on_gpus(places) ? "GPU" : "CPU");
  for (std::size_t i = 0; i < v.size(); i += kPerCommentLine) {
    out += fmt::format("#by-rank {}\n", join(v, i, std::min(v.size(), i + kPerCommentLine)));
  }
  return out;
}

/// A shell command that takes rank `$rank_var`'s entry of the `#by-rank` lines of `file`.
std::string by_rank_lookup(const std::string& file, std::string_view rank_var) {
  return fmt::format("$(sed -n \"s/^#by-rank //p\" {} | tr , \"\\n\" | sed -n \"$(({} + 1))p\")",
                     file, rank_var);
}

/// How each rank (its number in `$rank_var`) selects its GPU from the `#by-rank` lines.
std::string gpu_note(const std::string& file, std::string_view rank_var) {
  return fmt::format(
      "# GPU nodes: launchers do not bind GPUs by rank; each rank selects its GPU, e.g.\n"
      "#   ... sh -c 'CUDA_VISIBLE_DEVICES={} exec ./app'\n",
      by_rank_lookup(file, rank_var));
}

} // namespace

std::vector<RankPlace> rank_places(const PlacementProblem& p, const Mapping& m) {
  if (m.size() != p.pattern.ranks) {
    throw core::InternalError(
        fmt::format("a mapping of {} ranks for a pattern of {}", m.size(), p.pattern.ranks));
  }
  // Per device: its index among the devices of its kind in its node (system.cpp adds cores
  // socket by socket and GPUs in order), and for cores their socket (the core's host, numbered
  // in order of appearance within the node) and index within the socket.
  const std::vector<core::Device>& devices = p.topology.devices();
  struct Where {
    std::uint32_t device = 0;
    std::uint32_t socket = 0;
    std::uint32_t in_socket = 0;
  };
  std::vector<Where> where(devices.size());
  std::map<std::pair<std::uint32_t, core::DeviceKind>, std::uint32_t> per_kind;
  std::map<std::pair<std::uint32_t, core::DeviceId>, std::pair<std::uint32_t, std::uint32_t>>
      socket_of; // (node, host) -> (socket index, cores so far)
  std::map<std::uint32_t, std::uint32_t> sockets;
  for (core::DeviceId d = 0; d < devices.size(); ++d) {
    const core::Device& dev = devices[d];
    if (dev.kind != core::DeviceKind::core && dev.kind != core::DeviceKind::gpu) {
      continue;
    }
    where[d].device = per_kind[{dev.node, dev.kind}]++;
    if (dev.kind == core::DeviceKind::core) {
      auto [it, fresh] = socket_of.try_emplace({dev.node, dev.host}, sockets[dev.node], 0U);
      sockets[dev.node] += fresh ? 1 : 0;
      where[d].socket = it->second.first;
      where[d].in_socket = it->second.second++;
    }
  }
  std::vector<RankPlace> out(m.size());
  for (std::uint32_t r = 0; r < m.size(); ++r) {
    if (m[r] >= p.slots.size()) {
      throw core::InternalError(
          fmt::format("rank {} mapped to slot {} of {}", r, m[r], p.slots.size()));
    }
    const core::DeviceId d = p.slots[m[r]];
    RankPlace& place = out[r];
    place.rank = r;
    place.node = p.node[m[r]];
    place.gpu = devices[d].kind != core::DeviceKind::core;
    place.device = where[d].device;
    place.socket = where[d].socket;
    place.core_in_socket = where[d].in_socket;
  }
  return out;
}

std::vector<std::string> launcher_format_names() {
  return {"ompi-rankfile", "mpich-hostfile", "slurm"};
}

LauncherFormat parse_launcher_format(const std::string& name) {
  if (name == "ompi-rankfile") {
    return LauncherFormat::ompi_rankfile;
  }
  if (name == "mpich-hostfile") {
    return LauncherFormat::mpich_hostfile;
  }
  if (name == "slurm") {
    return LauncherFormat::slurm;
  }
  throw core::UnknownNameError("launcher format", name, launcher_format_names());
}

std::string ompi_rankfile(const PlacementProblem& p, const Mapping& m, const LaunchNames& names) {
  check_hosts(p, names);
  const std::vector<RankPlace> places = rank_places(p, m);
  const std::string file = file_of(names);
  std::string out = title(p, "Open MPI rankfile");
  out += "# rank N=HOST slot=SOCKET:CORE binds rank N to that core of HOST, logical (hwloc)\n"
         "# indexes (mpirun(1) of Open MPI 4.1, \"Rankfiles\"); rank 0 must come first.\n";
  out += fmt::format("# Launch: mpirun --rankfile {} -np {} ./app   (--report-bindings shows "
                     "where ranks run)\n",
                     file, p.pattern.ranks);
  if (names.hosts.empty()) {
    out += "# +nK is the K-th node of the job's allocation (Slurm, PBS, SGE): mpirun resolves it\n"
           "# only inside one. Elsewhere name the hosts: collsim place --hosts h0,h1,...\n";
  }
  if (on_gpus(places)) {
    out += "# slot=K is GPU K of the node (as collsim reads it); Open MPI binds the rank to core "
           "K.\n";
    out += gpu_note(file, "OMPI_COMM_WORLD_RANK") + by_rank_lines(places);
  }
  for (const RankPlace& r : places) {
    const std::string slot =
        r.gpu ? fmt::format("{}", r.device) : fmt::format("{}:{}", r.socket, r.core_in_socket);
    out += fmt::format("rank {}={} slot={}\n", r.rank, host_of(names, r.node, "+n"), slot);
  }
  return out;
}

std::string mpich_hostfile(const PlacementProblem& p, const Mapping& m, const LaunchNames& names) {
  check_hosts(p, names);
  const std::vector<RankPlace> places = rank_places(p, m);
  const std::string file = file_of(names);
  const bool gpus = on_gpus(places);
  std::string out = title(p, "MPICH/Hydra machinefile");
  out += "# HOST:COUNT starts the next COUNT ranks on HOST, in line order; binding=user:CPU,...\n"
         "# binds the i-th of them to the i-th CPU, an OS CPU id (the binding= token of Hydra's\n"
         "# machinefile parser, MPICH 3.x and 4.x). A host may come back on a later line.\n";
  out += fmt::format("# Launch: mpiexec.hydra -f {} -n {} ./app   (mpiexec.mpich on Debian)\n",
                     file, p.pattern.ranks);
  if (gpus) {
    out += gpu_note(file, "PMI_RANK") + by_rank_lines(places);
  } else {
    out +=
        "# CPU k is core k of the node counted socket by socket: the OS id where the OS numbers\n"
        "# the cores of socket 0 first (compare lscpu -p=CPU,SOCKET,CORE).\n";
  }
  if (names.hosts.empty()) {
    out += "# nodeK stands for the K-th node: replace it, or name the hosts with collsim place "
           "--hosts.\n";
  }
  for (std::uint32_t r = 0; r < places.size();) {
    std::uint32_t end = r;
    std::vector<std::uint32_t> cpus;
    while (end < places.size() && places[end].node == places[r].node) {
      cpus.push_back(places[end].device);
      ++end;
    }
    out += fmt::format("{}:{}", host_of(names, places[r].node, "node"), end - r);
    out += gpus ? "\n" : fmt::format(" binding=user:{}\n", join(cpus, 0, cpus.size()));
    r = end;
  }
  return out;
}

std::string slurm_hostfile(const PlacementProblem& p, const Mapping& m, const LaunchNames& names) {
  check_hosts(p, names);
  const std::vector<RankPlace> places = rank_places(p, m);
  const std::string file = file_of(names);
  const bool gpus = on_gpus(places);
  // One list for every node, entry i for the node's i-th task: every node's devices in rank
  // order must begin the longest node's list.
  std::map<std::uint32_t, std::vector<std::uint32_t>> per_node;
  for (const RankPlace& r : places) {
    per_node[r.node].push_back(r.device);
  }
  std::vector<std::uint32_t> common;
  for (const auto& [node, list] : per_node) {
    common = list.size() > common.size() ? list : common;
  }
  bool one_list = true;
  for (const auto& [node, list] : per_node) {
    one_list = one_list && std::equal(list.begin(), list.end(), common.begin());
  }
  const std::string list = join(common, 0, common.size());
  one_list = one_list && list.size() < 3000; // the header line stays within Slurm's 4096 bytes
  std::string out = title(p, "Slurm hostfile");
  out += "# srun --distribution=arbitrary starts rank i on the host of line i of SLURM_HOSTFILE\n"
         "# (srun(1)); run it inside an allocation of these hosts.\n";
  const std::string srun =
      fmt::format("SLURM_HOSTFILE={} srun --distribution=arbitrary -n {}", file, p.pattern.ranks);
  if (one_list) {
    out += fmt::format("# Launch: {} --{}-bind=map_{}:{} ./app\n", srun, gpus ? "gpu" : "cpu",
                       gpus ? "gpu" : "cpu", list);
  } else {
    out += fmt::format("# --{}-bind=map_{} cannot express this mapping: srun gives every node one "
                       "list\n# (entry i to the node's i-th task) and the nodes' lists differ. "
                       "Each rank binds itself:\n",
                       gpus ? "gpu" : "cpu", gpus ? "gpu" : "cpu");
    out += gpus ? fmt::format("# Launch: {} sh -c 'CUDA_VISIBLE_DEVICES={} exec ./app'\n", srun,
                              by_rank_lookup(file, "SLURM_PROCID"))
                : fmt::format("# Launch: {} --cpu-bind=none sh -c 'exec taskset -c {} ./app'\n",
                              srun, by_rank_lookup(file, "SLURM_PROCID"));
  }
  if (!gpus) {
    out +=
        "# CPU k is core k of the node counted socket by socket: the OS id where the OS numbers\n"
        "# the cores of socket 0 first (compare lscpu -p=CPU,SOCKET,CORE).\n";
  }
  if (names.hosts.empty()) {
    out += "# nodeK stands for the K-th node: replace it (scontrol show hostnames lists the\n"
           "# allocation's), or name the hosts with collsim place --hosts.\n";
  }
  out += by_rank_lines(places);
  for (const RankPlace& r : places) {
    out += host_of(names, r.node, "node") + "\n";
  }
  return out;
}

std::string launcher_file(const PlacementProblem& p, const Mapping& m, LauncherFormat format,
                          const LaunchNames& names) {
  switch (format) {
  case LauncherFormat::ompi_rankfile: return ompi_rankfile(p, m, names);
  case LauncherFormat::mpich_hostfile: return mpich_hostfile(p, m, names);
  case LauncherFormat::slurm: return slurm_hostfile(p, m, names);
  }
  throw core::InternalError("unknown launcher format");
}

} // namespace collsim::analysis
