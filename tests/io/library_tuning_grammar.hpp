#pragma once
// Checkers of the library tuning files collsim tune writes, each from the grammar in
// ../shared/reference/formats.md (not from the library's parser): MPICH's selection JSON
// (e), SimGrid SMPI's --cfg settings (algorithms.md 2.5 for the names), NCCL's example tuner CSV
// (f.3) and UCC's TUNE string (f.1). Each returns the list of violations; empty means the text
// follows the grammar. Used by the io tests on generated output and by the real-client tests.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace collsim::test {

// ---- MPICH (formats.md e) ----------------------------------------------------------------------

/// The collectives MPICH's csel looks up (blocking, neighbourhood and non-blocking): a file
/// without one of them fails MPICH 4.0.2's assertion "cnt" when the program calls it.
inline const std::vector<std::string>& mpich_collectives() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> base{"allgather",      "allgatherv",
                                  "allreduce",      "alltoall",
                                  "alltoallv",      "alltoallw",
                                  "barrier",        "bcast",
                                  "exscan",         "gather",
                                  "gatherv",        "reduce",
                                  "reduce_scatter", "reduce_scatter_block",
                                  "scan",           "scatter",
                                  "scatterv"};
    std::vector<std::string> out = base;
    for (const char* n : {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"}) {
      out.push_back(std::string("neighbor_") + n);
      out.push_back(std::string("ineighbor_") + n);
    }
    for (const auto& b : base) {
      out.push_back("i" + b);
    }
    return out;
  }();
  return names;
}

/// A condition key of formats.md e's KEY rule, or a wildcard. formats.md allows "<anything
/// ending in =any>", but MPICH 4.0.2 aborts with "unknown key is_op_built_in=any": there only the
/// size, count and hierarchy keys take "=any" (as in MPICH's own generic.json), and yes/no
/// conditions come in pairs. The checker follows MPICH.
inline bool mpich_key_ok(const std::string& key) {
  static const std::regex re(
      "comm_type=(intra|inter)|comm_size=(pow2|node_comm_size)|comm_size<=?[0-9]+|"
      "(avg_msg_size|total_msg_size|count)<=?[0-9]+|count<pow2|"
      "is_(commutative|sendbuf_inplace|op_built_in|block_regular|node_consecutive|multi_threaded)="
      "(yes|no)|comm_avg_ppn<=?[0-9]+|comm_hierarchy=(parent|node_roots|node|flat)|any|"
      "(comm_size|avg_msg_size|total_msg_size|count|comm_hierarchy)=any");
  return std::regex_match(key, re);
}

inline bool mpich_wildcard(const std::string& key) {
  return key == "any" || (key.size() > 4 && key.compare(key.size() - 4, 4, "=any") == 0);
}

/// "Allreduce" for "allreduce", "Ireduce_scatter" for "ireduce_scatter".
inline std::string mpich_function_part(const std::string& collective) {
  std::string s = collective;
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

inline void check_mpich_node(const nlohmann::ordered_json& node, const std::string& collective,
                             const std::string& path, std::vector<std::string>& errors) {
  if (!node.is_object() || node.empty()) {
    errors.push_back(path + ": not a non-empty object");
    return;
  }
  const std::string first = node.begin().key();
  if (first.rfind("algorithm=", 0) == 0 || first.rfind("composition=", 0) == 0) {
    if (node.size() != 1) {
      errors.push_back(path + ": an algorithm leaf with siblings");
    }
    const std::string name = first.substr(first.find('=') + 1);
    const std::regex fn("MPIR_" + mpich_function_part(collective) +
                        "_(intra|inter|allcomm)_[a-z_0-9]+");
    if (!std::regex_match(name, fn)) {
      errors.push_back(path + ": '" + name + "' is not an MPIR function of " + collective);
    }
    for (const auto& [param, value] : node.begin().value().items()) {
      if (param.find('=') == std::string::npos || !value.is_object() || !value.empty()) {
        errors.push_back(path + ": parameter '" + param + "' is not \"PARAM=VALUE\": {}");
      }
    }
    return;
  }
  std::set<std::string> keys;
  for (const auto& [key, child] : node.items()) {
    if (key.rfind("algorithm=", 0) == 0) {
      errors.push_back(path + ": an algorithm leaf with siblings");
    } else if (!mpich_key_ok(key)) {
      errors.push_back(path + ": '" + key + "' is not a condition of formats.md e");
    }
    keys.insert(key);
    check_mpich_node(child, collective, path + "/" + key, errors);
  }
  // A chain must not fall off its end: the last key is a wildcard, or the keys cover both
  // values of a yes/no or intra/inter condition.
  const std::string last = std::prev(node.end()).key();
  bool complete = mpich_wildcard(last) ||
                  (keys.count("comm_type=intra") != 0 && keys.count("comm_type=inter") != 0);
  const auto eq = last.find('=');
  if (!complete && eq != std::string::npos) {
    const std::string cond = last.substr(0, eq);
    complete = keys.count(cond + "=yes") != 0 && keys.count(cond + "=no") != 0;
  }
  if (!complete) {
    errors.push_back(path + ": the chain ends in '" + last + "', not in a wildcard");
  }
}

/// Checks an MPICH selection file: the document rule, every key, the algorithm names per
/// collective, chains that end in a wildcard, and every collective MPICH looks up present.
inline std::vector<std::string> check_mpich_json(const std::string& text) {
  std::vector<std::string> errors;
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return {std::string("not JSON: ") + e.what()};
  }
  if (!doc.is_object()) {
    return {"the document is not an object"};
  }
  const auto& known = mpich_collectives();
  std::set<std::string> seen;
  for (const auto& [key, node] : doc.items()) {
    if (key.rfind("collective=", 0) != 0) {
      errors.push_back("top-level key '" + key + "' is not collective=NAME");
      continue;
    }
    const std::string c = key.substr(11);
    if (std::find(known.begin(), known.end(), c) == known.end()) {
      errors.push_back("unknown collective '" + c + "'");
      continue;
    }
    seen.insert(c);
    check_mpich_node(node, c, key, errors);
  }
  for (const auto& c : known) {
    if (seen.count(c) == 0) {
      errors.push_back("collective " + c + " is missing (MPICH would fail its assertion)");
    }
  }
  return errors;
}

// ---- SimGrid SMPI (algorithms.md 2.5) ---------------------------------------------------------

/// SMPI 3.32's algorithm names per collective (algorithms.md 2.5, and smpirun's own list).
inline const std::map<std::string, std::set<std::string>>& smpi_algorithms() {
  static const std::map<std::string, std::set<std::string>> names{
      {"allreduce",
       {"lr", "rab1", "rab2", "rab_rdb", "rdb", "smp_binomial", "smp_binomial_pipeline", "smp_rdb",
        "smp_rsag", "smp_rsag_lr", "smp_rsag_rab", "redbcast", "ompi_ring_segmented", "mvapich2_rs",
        "mvapich2_two_level", "rab"}},
      {"bcast",
       {"arrival_pattern_aware", "arrival_pattern_aware_wait", "arrival_scatter", "binomial_tree",
        "flattree", "flattree_pipeline", "NTSB", "NTSL", "NTSL_Isend", "scatter_LR_allgather",
        "scatter_rdb_allgather", "SMP_binary", "SMP_binomial", "SMP_linear", "ompi_split_bintree",
        "ompi_pipeline", "mvapich2_inter_node", "mvapich2_intra_node",
        "mvapich2_knomial_intra_node"}},
      {"reduce",
       {"arrival_pattern_aware", "binomial", "flat_tree", "NTSL", "scatter_gather", "ompi_chain",
        "ompi_pipeline", "ompi_basic_linear", "ompi_in_order_binary", "ompi_binary",
        "ompi_binomial", "mvapich2_knomial", "mvapich2_two_level", "rab"}},
      {"allgather",
       {"2dmesh", "3dmesh", "bruck", "GB", "loosely_lr", "NTSLR", "NTSLR_NB", "pair", "rdb", "rhv",
        "ring", "SMP_NTS", "smp_simple", "spreading_simple", "ompi_neighborexchange",
        "mvapich2_smp"}},
      {"reduce_scatter",
       {"ompi_basic_recursivehalving", "ompi_ring", "ompi_butterfly", "mpich_pair", "mpich_rdb",
        "mpich_noncomm"}},
      {"alltoall",
       {"2dmesh", "3dmesh", "basic_linear", "bruck", "pair", "pair_rma", "pair_light_barrier",
        "pair_mpi_barrier", "pair_one_barrier", "rdb", "ring", "ring_light_barrier",
        "ring_mpi_barrier", "ring_one_barrier", "mvapich2_scatter_dest"}},
      {"gather", {"ompi_basic_linear", "ompi_binomial", "ompi_linear_sync", "mvapich2_two_level"}},
      {"scatter",
       {"ompi_basic_linear", "ompi_linear_nb", "ompi_binomial", "mvapich2_two_level_binomial",
        "mvapich2_two_level_direct"}},
      {"barrier",
       {"ompi_basic_linear", "ompi_two_procs", "ompi_tree", "ompi_bruck", "ompi_recursivedoubling",
        "ompi_doublering", "mpich_smp", "mvapich2_pair"}},
  };
  return names;
}

/// Checks an smpi-cfg file: comments, blank lines and `--cfg=smpi/<collective>:<name>` lines,
/// with a name SMPI has for the collective and each collective at most once. `settings`, when
/// given, receives collective -> name.
inline std::vector<std::string>
check_smpi_cfg(const std::string& text, std::map<std::string, std::string>* settings = nullptr) {
  std::vector<std::string> errors;
  std::map<std::string, std::string> seen;
  std::istringstream in(text);
  const std::regex line_re("--cfg=smpi/([a-z_]+):([A-Za-z0-9_]+)");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) {
      errors.push_back("not a --cfg=smpi/COLLECTIVE:ALGORITHM line: '" + line + "'");
      continue;
    }
    const auto it = smpi_algorithms().find(m[1]);
    if (it == smpi_algorithms().end()) {
      errors.push_back("SMPI has no collective '" + m[1].str() + "'");
    } else if (it->second.count(m[2]) == 0) {
      errors.push_back("SMPI's " + m[1].str() + " has no algorithm '" + m[2].str() + "'");
    }
    if (!seen.emplace(m[1], m[2]).second) {
      errors.push_back("collective " + m[1].str() + " set twice");
    }
  }
  if (seen.empty()) {
    errors.push_back("no setting");
  }
  if (settings != nullptr) {
    *settings = seen;
  }
  return errors;
}

// ---- NCCL example tuner (formats.md f.3) --------------------------------------------------------

struct NcclTunerRow {
  std::string collective;
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::string algorithm;
  std::string protocol;
  long long channels = 0, nodes = 0, ranks = 0, pipe_ops = -1, reg_buff = -1;
};

/// Checks the CSV: '#' comments, rows of 8 or 10 fields with the documented names and -1
/// wildcards, min <= max, and per (collective, nNodes, nRanks) ranges that start at 0 and follow
/// each other without gap or overlap.
inline std::vector<std::string> check_nccl_tuner(const std::string& text,
                                                 std::vector<NcclTunerRow>* rows = nullptr) {
  std::vector<std::string> errors;
  const std::set<std::string> colls{"broadcast", "reduce", "allgather", "reducescatter",
                                    "allreduce"};
  const std::set<std::string> algos{"tree",      "ring", "collnet_direct", "collnet_chain", "nvls",
                                    "nvls_tree", "pat"};
  const std::set<std::string> protos{"ll", "ll128", "simple"};
  const std::regex uint_re("[0-9]+");
  const std::regex int_re("-1|[0-9]+");
  std::vector<NcclTunerRow> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) {
      f.push_back(x);
    }
    if (f.size() != 8 && f.size() != 10) {
      errors.push_back("not 8 or 10 fields: '" + line + "'");
      continue;
    }
    NcclTunerRow r;
    r.collective = f[0];
    r.algorithm = f[3];
    r.protocol = f[4];
    if (colls.count(f[0]) == 0 || algos.count(f[3]) == 0 || protos.count(f[4]) == 0) {
      errors.push_back("unknown collective, algorithm or protocol: '" + line + "'");
    }
    if (!std::regex_match(f[1], uint_re) || !std::regex_match(f[2], uint_re)) {
      errors.push_back("byte bounds are not plain integers: '" + line + "'");
      continue;
    }
    r.min_bytes = std::stoull(f[1]);
    r.max_bytes = std::stoull(f[2]);
    if (r.min_bytes > r.max_bytes) {
      errors.push_back("min_bytes above max_bytes: '" + line + "'");
    }
    for (std::size_t k = 5; k < f.size(); ++k) {
      if (!std::regex_match(f[k], int_re) || (f[k] == "0" && k != 9)) {
        errors.push_back("field " + std::to_string(k + 1) + " is neither -1 nor a count: '" + line +
                         "'");
      }
    }
    r.channels = std::stoll(f[5]);
    r.nodes = std::stoll(f[6]);
    r.ranks = std::stoll(f[7]);
    if (f.size() == 10) {
      r.pipe_ops = std::stoll(f[8]);
      r.reg_buff = std::stoll(f[9]);
      if (r.reg_buff > 1) {
        errors.push_back("regBuff is not -1, 0 or 1: '" + line + "'");
      }
    }
    out.push_back(r);
  }
  std::map<std::tuple<std::string, long long, long long>, std::uint64_t> next;
  for (const auto& r : out) {
    const auto key = std::make_tuple(r.collective, r.nodes, r.ranks);
    const auto it = next.find(key);
    const std::uint64_t expected = it == next.end() ? 0 : it->second;
    if (r.min_bytes != expected) {
      errors.push_back(r.collective + " at " + std::to_string(r.ranks) +
                       " ranks: a range starts at " + std::to_string(r.min_bytes) + ", not at " +
                       std::to_string(expected));
    }
    next[key] = r.max_bytes + 1;
  }
  if (out.empty()) {
    errors.push_back("no rows");
  }
  if (rows != nullptr) {
    *rows = out;
  }
  return errors;
}

// ---- UCC TUNE (formats.md f.1) ------------------------------------------------------------------

/// "4k" -> 4096: UCC's memunits (powers of 2^10).
inline std::uint64_t ucc_bytes(const std::string& s) {
  std::uint64_t v = std::stoull(s);
  for (char c : s) {
    const std::string units = "kmgt";
    const auto k = units.find(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    if (k != std::string::npos) {
      v <<= 10 * (k + 1);
    }
  }
  return v;
}

/// Checks a ucc-tune file: comments and one UCC_<CL|TL>_<NAME>_TUNE=VALUE line whose tokens
/// ('#') have qualifiers (':') each recognised by its form, at least a score or an alg, ranges
/// with start below end, team sizes with start not above end.
inline std::vector<std::string> check_ucc_tune(const std::string& text) {
  std::vector<std::string> errors;
  const std::regex var_re("UCC_(CL|TL)_[A-Z0-9]+_TUNE=(.*)");
  const std::string coll = "(allreduce|allgather|allgatherv|alltoall|alltoallv|barrier|bcast|"
                           "fanin|fanout|gather|gatherv|reduce|reduce_scatter|reduce_scatterv|"
                           "scatter|scatterv)";
  const std::regex colls_re(coll + "(," + coll + ")*");
  const std::string size = "([0-9]+[KMGTkmgt]?[bB]?|inf)"; // "4k" in ucc.conf, "4K" in the help
  const std::regex range_re(size + "-" + size);
  const std::regex mem_re("(host|cpu|cuda|cuda_managed|CudaManaged|rocm|rocm_managed|RocmManaged)"
                          "(,(host|cpu|cuda|cuda_managed|CudaManaged|rocm|rocm_managed|"
                          "RocmManaged))*");
  const std::regex team_re("\\[[0-9]+-[0-9]+(,[0-9]+-[0-9]+)*\\]");
  const std::regex score_re("[0-9]+|inf");
  const std::regex alg_re("@([0-9]+|[A-Za-z_][A-Za-z0-9_]*)");
  int lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    ++lines;
    std::smatch m;
    if (!std::regex_match(line, m, var_re)) {
      errors.push_back("not UCC_<CL|TL>_<NAME>_TUNE=...: '" + line + "'");
      continue;
    }
    std::istringstream tokens(m[2].str());
    for (std::string token; std::getline(tokens, token, '#');) {
      bool score_or_alg = false;
      std::istringstream quals(token);
      for (std::string q; std::getline(quals, q, ':');) {
        if (std::regex_match(q, score_re) || std::regex_match(q, alg_re)) {
          score_or_alg = true;
          continue;
        }
        if (std::regex_match(q, colls_re) || std::regex_match(q, mem_re)) {
          continue;
        }
        if (std::regex_match(q, team_re)) {
          std::istringstream parts(q.substr(1, q.size() - 2));
          for (std::string p; std::getline(parts, p, ',');) {
            if (std::stoull(p.substr(0, p.find('-'))) > std::stoull(p.substr(p.find('-') + 1))) {
              errors.push_back("team size range '" + p + "' runs backwards");
            }
          }
          continue;
        }
        bool ranges_ok = true;
        std::istringstream ranges(q);
        for (std::string r; std::getline(ranges, r, ',');) {
          std::smatch rm;
          if (!std::regex_match(r, rm, range_re)) {
            ranges_ok = false;
            break;
          }
          if (rm[2] != "inf" && (rm[1] == "inf" || ucc_bytes(rm[1]) >= ucc_bytes(rm[2]))) {
            errors.push_back("message range '" + r + "' is empty");
          }
        }
        if (!ranges_ok) {
          errors.push_back("qualifier '" + q + "' has none of the forms of formats.md f.1");
        }
      }
      if (!score_or_alg) {
        errors.push_back("token '" + token + "' has neither a score nor an alg");
      }
    }
  }
  if (lines != 1) {
    errors.push_back("expected one TUNE line, got " + std::to_string(lines));
  }
  return errors;
}

} // namespace collsim::test
