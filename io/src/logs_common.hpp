#pragma once
// Shared pieces of the measured-log parsers (logs_*.cpp): line clean-up, tokens, numbers, launch
// commands, and the warning list. Private to collsim::io.

#include "collsim/io/logs.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::io::logs {

/// One line of a log after the clean-up every format needs.
struct Line {
  std::size_t number = 0; ///< 1-based
  /// The line without its line end, ANSI colour codes, launcher prefix (`0: `,
  /// `[1,0]<stdout>:`) and surrounding blanks.
  std::string text;
  /// `text` without a leading `#` (or the `\#` of escaped markdown) and the blanks after it.
  std::string body;
  bool comment = false; ///< text started with '#'
  bool fence = false;   ///< a markdown code fence (```), neither data nor a problem
  /// 1-based column of the first byte that no text file holds (NUL, other control bytes); 0: none.
  std::size_t binary_column = 0;
  unsigned char binary_byte = 0; ///< that byte
  [[nodiscard]] bool blank() const { return text.empty(); }
};

/// Splits `text` into cleaned lines (CRLF, a UTF-8 byte-order mark and a missing final line end
/// are all accepted).
std::vector<Line> split_lines(std::string_view text);

/// Blank-separated words.
std::vector<std::string_view> words(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string lower(std::string_view s);
/// Appends `word` to `list`, after `separator` unless `list` is empty.
void append_word(std::string& list, std::string_view word, char separator = ' ');

/// Whole-token numbers; nullopt for anything else ("N/A", "1.5x", "", negative or non-finite).
std::optional<std::uint64_t> to_u64(std::string_view s);
std::optional<std::int64_t> to_i64(std::string_view s);
std::optional<double> to_double(std::string_view s);
/// The decimal `s` divided by 10^shift with a single rounding, so that OSU's "1.19" MB/s becomes
/// the double nearest to 0.00119 GB/s (and prints as such).
std::optional<double> to_double_scaled(std::string_view s, int shift);

/// Bytes per element of a type name as nccl-tests, MPI or OSU print it ("float", "MPI_CHAR",
/// "bfloat16"); nullopt when unknown.
std::optional<std::uint32_t> type_size(std::string_view type);

/// The text of a line as a warning quotes it: control bytes and invalid UTF-8 escaped as \xNN,
/// cut to about 80 characters.
std::string excerpt(std::string_view text, std::size_t max = 80);
/// The most characters of a launch command kept whole (RunInfo::command_line).
inline constexpr std::size_t kCommandLineMax = 4096;

/// A command line that starts a benchmark (`mpirun -np 96 ... osu_reduce -d cuda -f`,
/// `root@host:~/nccl-tests# ./build/all_reduce_perf -g 8`), as far as it tells the run's size.
struct Command {
  std::string text;    ///< the command as written (continuation lines joined)
  std::string program; ///< basename of the benchmark: "all_reduce_perf", "osu_bw", "IMB-MPI1"
  std::vector<std::string> args; ///< the benchmark's own arguments
  /// Ranks started: 1 for a direct invocation at a prompt, the launcher's -np/-n/--ntasks or the
  /// sum of its -H slots; nullopt when not a number (`-n $GPUS`) or not given.
  std::optional<std::uint32_t> processes;
  std::optional<std::uint32_t> nodes; ///< -H host list entries, srun/flux -N
  /// Open MPI MCA parameters the launch sets (mca_settings), names without OMPI_MCA_.
  std::vector<EnvSetting> mca;
  /// The value of a benchmark argument (`-g 8` -> "8"), or nullopt.
  [[nodiscard]] std::optional<std::string> arg(std::string_view name) const;
  [[nodiscard]] bool has_arg(std::string_view name) const;
};

/// The command starting at lines[i] (joining lines that end in '\'), or nullopt when that line
/// does not run a known benchmark. `consumed` gets the number of lines the command spans.
std::optional<Command> command_at(const std::vector<Line>& lines, std::size_t i,
                                  std::size_t& consumed);

/// The Open MPI MCA parameters that a launch command on lines [i, i + count) sets before its
/// benchmark `program`: mpirun's `--mca NAME VALUE` (also `-mca`, `--gmca`, `-gmca`) and the
/// environment forms of OMPI_MCA_NAME (`-x OMPI_MCA_NAME=VALUE`, `OMPI_MCA_NAME=VALUE mpirun`,
/// Hydra's `-genv OMPI_MCA_NAME VALUE`, srun's `--export=ALL,OMPI_MCA_NAME=VALUE`; Open MPI's
/// opal/mca/base/mca_base_var.c reads OMPI_MCA_-prefixed variables as the parameter). Names are
/// given without the prefix; a later setting comes later in the list. A value the shell computes
/// (`$ALG`) is left out.
std::vector<EnvSetting> mca_settings(const std::vector<Line>& lines, std::size_t i,
                                     std::size_t count, std::string_view program);

/// The NCCL_ variables that the lines [i, i + count) set (EnvSetting lists the forms). A value
/// the shell computes (`NCCL_ALGO=$ALGO`) is not a setting: its text goes to `unread` instead.
/// Comment lines set nothing.
std::vector<EnvSetting> nccl_env_settings(const std::vector<Line>& lines, std::size_t i,
                                          std::size_t count, std::vector<EnvSetting>& unread);

/// Collects warnings; lines that are not part of the log are reported in blocks (one warning
/// per run of consecutive skipped lines) so that pasted prose does not bury the real problems.
class Warnings {
public:
  /// `format` names the expected output in messages: "nccl-tests", "OSU", "IMB-MPI1".
  explicit Warnings(std::string format) : format_(std::move(format)) {}
  /// A line that is not part of the log.
  void skip(const Line& line);
  /// A line that is part of the log: ends the current block of skipped lines.
  void seen();
  /// A warning about one line.
  void add(std::size_t line, std::string text);
  /// All warnings, sorted by line (the open block included).
  std::vector<LogWarning> take();

private:
  void flush();
  std::string format_;
  std::vector<LogWarning> out_;
  std::size_t block_first_ = 0;
  std::size_t block_last_ = 0;
  std::size_t block_count_ = 0;
  std::string block_text_;
};

/// Throws core::LogParseError at file:line:column.
[[noreturn]] void fail(const std::string& file, std::size_t line, std::size_t column,
                       const std::string& message);

/// The collective of an operation name ("allreduce" -> allreduce, "latency" -> nullopt).
std::optional<core::CollectiveKind> collective_of(std::string_view operation);

// The format parsers. Each reads every run of its format and throws core::LogParseError when
// no data row is found.
ParsedLog parse_nccl_tests(const std::vector<Line>& lines, const std::string& file);
ParsedLog parse_osu(const std::vector<Line>& lines, const std::string& file);
ParsedLog parse_imb(const std::vector<Line>& lines, const std::string& file);

/// `line` with the second '#' of a line that a wrapper commented out again ("# #  Rank  0 ...")
/// removed from its body; other lines unchanged.
Line without_second_hash(Line line);
/// nccl-tests output that a wrapper printed behind '#' (logs_nccl_commented.cpp): every line
/// through without_second_hash, and the commented rows of a table without plain data rows made
/// data rows, with one warning per such table.
std::vector<Line> uncomment_nccl_tables(std::vector<Line> lines, Warnings& warn);

// Signatures used to detect the format (and by the parsers to recognise the same lines).
bool is_nccl_column_header(const Line& line);
bool is_nccl_data_row(const Line& line);
bool is_osu_banner(const Line& line);
bool is_imb_column_header(const Line& line);

} // namespace collsim::io::logs
