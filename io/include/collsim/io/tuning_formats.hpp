#pragma once
// Writers of tuning tables (core::TuneTable, filled by analysis::tune): a table for people, CSV,
// JSON, Open MPI coll/tuned's dynamic rules file (formats.md d.4), MPICH's selection JSON (e),
// SimGrid SMPI settings (algorithms.md 2.5), NCCL's example tuner CSV (f.3) and a UCC TUNE
// string (f.1). docs/tuning.md documents every column and field.

#include "collsim/core/tuning.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::io {

/// The formats `collsim tune --format` writes (and collsim-gui exports).
enum class TuningFormat : std::uint8_t {
  table,
  csv,
  json,
  ompi_rules,
  mpich_json,
  smpi_cfg,
  nccl_tuner,
  ucc_tune
};
/// "table", "csv", "json", "ompi-rules", "mpich-json", "smpi-cfg", "nccl-tuner", "ucc-tune".
std::vector<std::string> tuning_format_names();
/// The format of that name; UnknownNameError ("format") listing them otherwise.
TuningFormat tuning_format_from_name(std::string_view name);
/// The library whose algorithms a format names ("ompi", "mpich", "smpi", "nccl", "ucc"), or
/// "all" for table, csv and json.
std::string_view tuning_format_library(TuningFormat format);
/// The table in `format` (the versions matter to ompi-rules and mpich-json only).
std::string format_tuning(const core::TuneTable& table, TuningFormat format, core::OmpiVersion ompi,
                          core::MpichVersion mpich);

/// The message size coll/tuned's dynamic rules compare for a call of `collective` whose buffer
/// is S bytes (collsim's and nccl-tests' convention): coll_tuned_decision_dynamic.c computes
/// dtype size x count for allreduce, bcast and reduce, dtype size x comm size x per-rank count
/// for allgather, alltoall, gather and scatter, dtype size x sum(recvcounts) for reduce_scatter
/// -- all of them S -- and uses 0 for barrier. (The fixed rules compare other sizes:
/// analysis::ompi41_metric.)
std::uint64_t ompi_rules_message_size(core::CollectiveKind collective, core::Bytes s);

/// Column-aligned text: per (collective, ranks) one line per range with the winner, runner-up,
/// margin, Open MPI 4.1's default and its regret, then the ranges where the default is not the
/// best.
std::string format_tuning_table(const core::TuneTable& table);

/// One row per range, a header row first (docs/tuning.md: columns).
std::string format_tuning_csv(const core::TuneTable& table);

/// {"scenario", "engine", "sizes", "ompi_version", "blocks": [{collective, ranks, ranges: [...]}],
///  "default_not_best": [...], "skipped": [...]}.
std::string format_tuning_json(const core::TuneTable& table);

/// An Open MPI coll/tuned dynamic rules file for `version`: 4.1 writes the classic format (no
/// header, 4 numbers per rule: every 4.1.x and 5.0.x reads it); 5.0 writes
/// "rule-file-version-2" with a fifth number (max requests, 0) per rule, which 5.0.7 and later
/// read. Throws UsageError when the table was not swept for `version` (table.ompi) or a winner
/// has no Open MPI id.
std::string format_ompi_rules(const core::TuneTable& table, core::OmpiVersion version);

/// An MPICH collective selection file (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, formats.md e):
/// per tuned collective a comm_size chain (the block of the largest swept count not above the
/// communicator's size, like coll/tuned) of message-size chains naming MPIR_<Coll>_intra_<name>,
/// plus a plain fallback for every other collective MPICH looks up, because the file replaces
/// MPICH's built-in tree as a whole. `version` names the fallbacks (barrier: dissemination in
/// 4.0, k_dissemination later). Throws UsageError when a winner has no "mpich:" name.
std::string format_mpich_json(const core::TuneTable& table, core::MpichVersion version);

/// SimGrid SMPI settings, one `--cfg=smpi/<collective>:<name>` line per collective. SMPI runs
/// one algorithm per collective at every size, so the line names the winner of most swept
/// points; '#' comments list every range. Throws UsageError when a winner has no "smpi:" name.
std::string format_smpi_cfg(const core::TuneTable& table);

/// The CSV of NCCL's example tuner plugin (NCCL_TUNER_CONFIG_FILE, formats.md f.3): one row
/// per range, `collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,
/// numPipeOps,regBuff`. Throws UsageError for a collective NCCL's tuner does not choose for or
/// a winner without an "nccl:" name.
std::string format_nccl_tuner(const core::TuneTable& table);

/// A UCC TL/UCP TUNE string (UCC_TL_UCP_TUNE=..., formats.md f.1): one
/// `coll:start-end:[team sizes]:@alg` token per range, '#'-separated. Throws UsageError when a
/// winner has no "ucc:" name.
std::string format_ucc_tune(const core::TuneTable& table);

} // namespace collsim::io
