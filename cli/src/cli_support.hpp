#pragma once
// Shared helpers of the collsim commands: option value parsing, output files, progress.

#include "collsim/algorithms/registry.hpp"
#include "collsim/analysis/simulate.hpp"
#include "collsim/core/errors.hpp"
#include "collsim/core/result.hpp"
#include "collsim/core/scenario.hpp"
#include "collsim/io/logs.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace collsim::cli {

/// "16", "8,16,64", "1..64" or "2..1024:x2" (geometric). Throws UsageError naming `option`.
std::vector<std::uint32_t> parse_ranks(const std::string& text, const std::string& option);
/// "--sizes" values: a sweep ("8B:1GiB:x2") or a comma list. Throws UsageError.
std::vector<core::Bytes> parse_sizes(const std::string& text, const std::string& option);
core::Bytes parse_size(const std::string& text, const std::string& option);
/// "name=value" pairs; values may carry size units ("segment_size=64KiB").
/// NAME=VALUE items, values as written (the registry resolves them per algorithm).
std::map<std::string, std::string> parse_params(const std::vector<std::string>& items);

/// `--collective NAME --counts SPEC --skew SPEC` (docs/imbalance.md): the collective (a v-name
/// or a neighbourhood name sets counts: uniform unless --counts says otherwise; a neighbourhood
/// collective needs --counts cart:... or graph:...), the counts and the skew with their files
/// read. Throws UsageError (exit 2) naming the option, or ScenarioError inside a file.
struct CollectiveOptions {
  core::CollectiveKind kind = core::CollectiveKind::allreduce;
  core::CountsSpec counts;
  core::SkewSpec skew;
};
CollectiveOptions parse_collective_options(const std::string& collective, const std::string& counts,
                                           const std::string& skew);

/// The whole file at `path`; UsageError "PATH: cannot open the file" when it cannot be read.
std::string read_input_file(const std::string& path);

/// Writes `text` to `path`, or to stdout when path is empty or "-".
void emit(const std::string& text, const std::string& path);

/// Prints "[done/total]" progress on stderr when stderr is a terminal.
analysis::Progress terminal_progress(const std::string& label);

/// The crossover summary as a table for people.
std::string format_crossovers(const std::vector<analysis::CrossoverRange>& ranges);
/// ... and as a JSON array.
std::string crossovers_json(const std::vector<analysis::CrossoverRange>& ranges);

/// `--ranks N` and `--nodes M` of ingest, validate and calibrate: counts for every log of the
/// command, for logs that do not state them (docs/logs.md). Kept as text so that a bad value gets
/// collsim's own one-line error.
struct LogShapeOptions {
  std::string ranks;
  std::string nodes;
  CLI::Option* ranks_option = nullptr;
  CLI::Option* nodes_option = nullptr;
};
void add_log_shape_options(CLI::App& cmd, LogShapeOptions& options);
/// The counts given, checked: whole numbers from 1 to 2^24, nodes at most ranks and dividing
/// them. Throws UsageError (exit 2) with one line naming the option.
io::LogShape log_shape(const LogShapeOptions& options);

/// `--stack NAME` and `--buffers device|host`: the library stack a command runs under and where
/// its buffers live, over the scenario's `stack:` and `buffers:`.
struct StackOptions {
  std::string stack;
  std::string buffers;
};
/// --stack and --buffers; `buffers_default` says where buffers live when neither the option nor
/// the scenario says.
void add_stack_options(CLI::App& cmd, StackOptions& options,
                       std::string_view buffers_default = "device on GPU ranks");
/// Sets the options given on `scenario`, checked (UnknownNameError or UsageError: exit 2).
void apply_stack_options(const StackOptions& options, core::Scenario& scenario);

/// The options every command that predicts and prints shares: --engine, --format (`formats`
/// lists the accepted ones for --help), -o/--output, --threads, --stack and --buffers.
struct PrintOptions {
  std::string engine = "loggp";
  std::string format = "table";
  std::string output;
  unsigned threads = 0;
  StackOptions stack;
};
void add_print_options(CLI::App& cmd, PrintOptions& options, const std::string& formats);

/// --max-memory SIZE: the most memory the points a sweep runs at once may hold together
/// (analysis::MemoryGate).
void add_memory_option(CLI::App& cmd, std::string& text);
/// The bytes of --max-memory, or nullopt when not given (the memory available: the default of
/// distributed::executor). UsageError for a size that does not parse or is 0.
std::optional<std::uint64_t> parse_memory_option(const std::string& text);

/// Output formats accepted by --format.
enum class Format { table, csv, json };
Format parse_format(const std::string& text);

} // namespace collsim::cli

namespace collsim::cli {

/// A command that ran and found a failure (e.g. `collsim verify` found a wrong schedule): exit 1.
class CommandFailed : public core::Error {
public:
  using core::Error::Error;
  [[nodiscard]] bool is_input_error() const override { return false; }
};

/// scenarios/default.yaml in the working directory, else in the source tree collsim was built from.
std::string default_scenario_path();

} // namespace collsim::cli
