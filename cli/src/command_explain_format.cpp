// `collsim explain`'s output: the table for people and the JSON object (explain_support.hpp).

#include "explain_support.hpp"

#include "collsim/core/layout.hpp"

#include "collsim/algorithms/nccl_constants.hpp"

#include <fmt/format.h>
#include <map>

namespace collsim::cli::explain_detail {

using algorithms::nccl::Algo;

std::string label(const std::string& algorithm, const algorithms::RawParams& params) {
  const std::string p = analysis::params_text(params);
  return p.empty() ? algorithm : algorithm + " " + p;
}

/// "1 MiB (1048576 B)", or "1000 B" when there is no larger unit.
std::string bytes_text(core::Bytes b) {
  const std::string human = core::format_bytes(b);
  return human.ends_with(" B") ? human : fmt::format("{} ({} B)", human, b.value);
}

namespace {

double us(const core::ResultRow& r) {
  return r.time.value * 1e6;
}
double gbps(core::Bandwidth b) {
  return b.bytes_per_second / 1e9;
}

std::string_view cpu_name(analysis::NcclCpu c) {
  switch (c) {
  case analysis::NcclCpu::intel: return "Intel";
  case analysis::NcclCpu::amd: return "AMD";
  case analysis::NcclCpu::other: return "other";
  }
  return "other";
}

std::string graph_text(const char* name, const analysis::NcclGraph& g) {
  if (g.channels == 0) {
    return fmt::format("{} none", name);
  }
  return fmt::format("{} {} x {:.1f}/{:.1f} GB/s", name, g.channels, g.bw_intra, g.bw_inter);
}

std::string format_nccl(const Explanation& e) {
  const analysis::NcclModelInputs& in = *e.inputs;
  std::string t;
  t += fmt::format("#   NCCL's inputs: {} ranks on {} node{} (at most {} per node), sm{} ({}), "
                   "CPU {}\n",
                   in.ranks, in.nodes, in.nodes == 1 ? "" : "s", in.local_ranks,
                   in.compute_capability, in.compute_capability_from, cpu_name(in.cpu));
  t += fmt::format("#     NVLink {}, NVSwitch {}, NVLS {}, CollNet {}{}; per GPU: NVLink {:.1f} "
                   "GB/s, PCI {:.1f} GB/s, network {:.1f} GB/s over {} NIC{}\n",
                   in.nvlink ? "yes" : "no", in.nvswitch ? "yes" : "no",
                   in.nvls_support ? "yes" : "no", in.collnet_support ? "yes" : "no",
                   in.collnet_support && !in.collnet_enable ? " (NCCL_COLLNET_ENABLE unset)" : "",
                   in.gpu_nvlink_bw, in.gpu_pci_bw, in.net_bw, in.nics, in.nics == 1 ? "" : "s");
  t += fmt::format("#     channels: comm {}, nvls {}; graphs (channels x intra/inter GB/s per "
                   "channel): {}, {}, {}\n",
                   in.comm_channels, in.nvls_channels, graph_text("ring", in.ring),
                   graph_text("tree", in.tree), graph_text("nvls", in.nvls));
  const analysis::NcclChoice& n = *e.nccl;
  if (!n.modelled) {
    return t;
  }
  t += "#   NCCL's cost table (time = latency + bytes / bandwidth):\n";
  t += fmt::format("#   {:<14} {:<8} {:>12} {:>12} {:>12}\n", "algorithm", "protocol",
                   "latency (us)", "bw (GB/s)", "time (us)");
  for (const analysis::NcclCost& c : n.table) {
    const bool chosen = c.algo == n.algo && c.proto == n.proto;
    if (c.time_us < 0.0) {
      t += fmt::format("    {:<14} {:<8} {:>12} {:>12} {:>12}  disabled: {}\n",
                       algorithms::nccl::algo_name(c.algo),
                       algorithms::nccl::protocol_name(c.proto), "-", "-", "-", c.disabled);
    } else {
      t +=
          fmt::format("    {:<14} {:<8} {:>12.2f} {:>12.2f} {:>12.2f}{}\n",
                      algorithms::nccl::algo_name(c.algo), algorithms::nccl::protocol_name(c.proto),
                      c.latency_us, c.bandwidth, c.time_us, chosen ? "  <- chosen" : "");
    }
  }
  t += fmt::format("#   tuned for the chosen pair: {} channels, {} threads per channel\n",
                   n.channels, n.threads);
  return t;
}

} // namespace

std::string format_table(const Explanation& e, std::size_t top) {
  std::string t;
  const Timed& def = e.library_default();
  t += fmt::format("# default: {}\n", e.choice.library);
  t += fmt::format("#   picks {}: {}\n", e.choice.library_name, e.choice.reason);
  if (e.nccl) {
    t += format_nccl(e);
  }
  t += fmt::format("#   collsim runs it as: {}\n", label(def.algorithm, def.params));
  if (!e.stack_note.empty()) {
    t += fmt::format("#   {}\n", e.stack_note);
  }
  t += fmt::format("#   simulated: {:.2f} us, algbw {:.2f} GB/s, busbw {:.2f} GB/s\n", us(def.row),
                   gbps(def.row.algbw), gbps(def.row.busbw));
  t += "#\n";
  t += fmt::format("# collsim's fastest among {}: {} ran, {} refused\n", e.considered,
                   e.ranking.size(), e.refused.size());
  const bool estimates = e.nccl && e.nccl->modelled;
  t += fmt::format("#   {:>4}  {:<44} {:>12} {:>12} {:>12}{}\n", "rank", "algorithm", "time (us)",
                   "algbw (GB/s)", "busbw (GB/s)", estimates ? "  NCCL est. (us)" : "");
  for (std::size_t i = 0; i < e.ranking.size(); ++i) {
    const Timed& r = e.ranking[i];
    if (i >= top && !r.is_default) {
      continue;
    }
    std::string est;
    if (estimates) {
      est = r.nccl_estimate_us ? fmt::format("  {:>14.2f}", *r.nccl_estimate_us)
                               : fmt::format("  {:>14}", "-");
    }
    t += fmt::format("    {:>4}  {:<44} {:>12.2f} {:>12.2f} {:>12.2f}{}{}\n", i + 1,
                     label(r.algorithm, r.params), us(r.row), gbps(r.row.algbw), gbps(r.row.busbw),
                     est, r.is_default ? "  <- default" : "");
  }
  for (const std::string& r : e.refused) {
    t += fmt::format("#   not run: {}\n", r);
  }
  t += "#\n";
  const Timed& best = e.fastest();
  if (e.default_rank == 1) {
    t += e.ranking.size() == 1
             ? std::string("# regret: 0.0 % (the default is the only candidate)\n")
             : fmt::format("# regret: 0.0 % (the default is the fastest of {} candidates)\n",
                           e.ranking.size());
  } else {
    t += fmt::format("# regret: {:.1f} %: the default ({:.2f} us) ranks {} of {}; {} ({:.2f} us) "
                     "is {:.2f}x faster\n",
                     e.regret_pct, us(def.row), e.default_rank, e.ranking.size(),
                     label(best.algorithm, best.params), us(best.row), e.speedup);
  }
  return t;
}

namespace {

nlohmann::json timed_json(const Timed& t) {
  nlohmann::json j{{"algorithm", t.algorithm},
                   {"params", t.params},
                   {"time_us", us(t.row)},
                   {"algbw_GBps", gbps(t.row.algbw)},
                   {"busbw_GBps", gbps(t.row.busbw)},
                   {"default", t.is_default}};
  if (t.nccl_estimate_us) {
    j["nccl_estimate_us"] = *t.nccl_estimate_us;
  }
  return j;
}

nlohmann::json graph_json(const analysis::NcclGraph& g) {
  return {{"channels", g.channels}, {"bw_intra_GBps", g.bw_intra}, {"bw_inter_GBps", g.bw_inter}};
}

nlohmann::json nccl_json(const Explanation& e) {
  const analysis::NcclModelInputs& in = *e.inputs;
  nlohmann::json inputs{{"ranks", in.ranks},
                        {"nodes", in.nodes},
                        {"local_ranks", in.local_ranks},
                        {"compute_capability", in.compute_capability},
                        {"compute_capability_from", in.compute_capability_from},
                        {"cpu", cpu_name(in.cpu)},
                        {"nvlink", in.nvlink},
                        {"nvswitch", in.nvswitch},
                        {"gpu_nvlink_bw_GBps", in.gpu_nvlink_bw},
                        {"gpu_pci_bw_GBps", in.gpu_pci_bw},
                        {"net_bw_GBps", in.net_bw},
                        {"nics", in.nics},
                        {"nvls_support", in.nvls_support},
                        {"collnet_support", in.collnet_support},
                        {"collnet_enable", in.collnet_enable},
                        {"comm_channels", in.comm_channels},
                        {"nvls_channels", in.nvls_channels},
                        {"ring", graph_json(in.ring)},
                        {"tree", graph_json(in.tree)},
                        {"nvls", graph_json(in.nvls)}};
  const analysis::NcclChoice& n = *e.nccl;
  nlohmann::json table = nlohmann::json::array();
  for (const analysis::NcclCost& c : n.table) {
    nlohmann::json row{{"algorithm", algorithms::nccl::algo_name(c.algo)},
                       {"protocol", algorithms::nccl::protocol_name(c.proto)}};
    if (c.time_us < 0.0) {
      row["disabled"] = c.disabled;
    } else {
      row["latency_us"] = c.latency_us;
      row["bandwidth_GBps"] = c.bandwidth;
      row["time_us"] = c.time_us;
    }
    table.push_back(std::move(row));
  }
  nlohmann::json j{{"inputs", inputs}, {"modelled", n.modelled}, {"cost_table", table}};
  if (n.modelled) {
    j["channels"] = n.channels;
    j["threads"] = n.threads;
    j["estimated_us"] = n.time_us;
  }
  return j;
}

} // namespace

nlohmann::json to_json(const Explanation& e, const Call& call, const core::Scenario& scenario,
                       const std::string& engine, std::size_t top) {
  nlohmann::json def = timed_json(e.library_default());
  def["library"] = e.choice.library;
  def["library_name"] = e.choice.library_name;
  def["reason"] = e.choice.reason;
  if (e.nccl) {
    def["nccl"] = nccl_json(e);
  }
  nlohmann::json ranking = nlohmann::json::array();
  for (std::size_t i = 0; i < e.ranking.size() && i < top; ++i) {
    nlohmann::json r = timed_json(e.ranking[i]);
    r["rank"] = i + 1;
    ranking.push_back(std::move(r));
  }
  nlohmann::json out = {
      {"scenario", scenario.name},
      {"collective", core::collective_display_name(call.collective, !call.counts.empty())},
      {"ranks", call.ranks},
      {"bytes", call.bytes.value},
      {"engine", engine},
      {"library", key(e.library)},
      {"commutative", call.commutative},
      {"library_default", def},
      {"default_rank", e.default_rank},
      {"fastest", timed_json(e.fastest())},
      {"ranking", ranking},
      {"considered", e.considered},
      {"candidates", e.ranking.size()},
      {"refused", e.refused},
      {"regret_pct", e.regret_pct},
      {"speedup", e.speedup}};
  if (!call.counts.empty()) {
    out["counts"] = call.counts_text;
  }
  if (!call.arrivals.empty()) {
    out["skew"] = call.skew_text;
  }
  if (!e.stack_note.empty()) {
    out["stack_note"] = e.stack_note;
  }
  return out;
}

} // namespace collsim::cli::explain_detail
