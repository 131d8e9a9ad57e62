#pragma once
// The pieces of the nccl-tests parser (logs_nccl_tests.cpp): what a run's preamble says, where
// each field is in a row (from the table's header), the rows, and the rank count read back from
// the printed bandwidths or sizes (logs_nccl_tests_columns.cpp). Internal to the io layer.

#include "logs_common.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collsim::io::logs::nccl_tests_detail {

struct Device {
  std::string host;
  std::string name;
};

/// What the lines before a table (banner, parameters, device list, command) say about its run.
struct Preamble {
  std::size_t line = 0; ///< its first line
  std::string program;
  std::string tool_version;
  std::string nccl_version;
  std::optional<std::uint32_t> threads;
  std::optional<std::uint32_t> gpus;
  std::vector<Device> devices;
  std::optional<Command> command;
  /// NCCL_ variables of the run's own command and of NCCL's INFO lines.
  std::vector<EnvSetting> env;
  bool any = false;

  void touch(std::size_t at) {
    if (!any) {
      line = at;
    }
    any = true;
  }
};

/// Where each field is in a data row, from the header's column names.
struct Columns {
  std::size_t fields = 0;
  int size = -1;
  int count = -1;
  int type = -1;
  int redop = -1;
  int root = -1;
  // [0] out-of-place, [1] in-place: nccl-tests prints the out-of-place group first.
  std::array<int, 2> time{-1, -1};
  std::array<int, 2> algbw{-1, -1};
  std::array<int, 2> busbw{-1, -1};
  std::array<int, 2> wrong{-1, -1};
  bool wrong_is_count = false;     ///< "#wrong" counts wrong elements; "error"/"res" is a deviation
  bool trailing_timestamp = false; ///< -S 1 adds a timestamp that may hold blanks
};

struct Side {
  bool present = false;
  double time = 0.0;
  double algbw = 0.0;
  double busbw = 0.0;
};

struct Row {
  std::size_t line = 0;
  std::uint64_t size = 0;
  std::uint64_t count = 0;
  std::string type;
  std::string redop;
  std::optional<std::int64_t> root;
  std::array<Side, 2> sides;
};

struct Run {
  Preamble pre;
  std::vector<EnvSetting> env; ///< exported before the run, then the preamble's
  Columns columns;
  std::size_t line = 0;
  std::vector<Row> rows;
  bool footer = false;
};

std::optional<Columns> columns_from_names(const std::vector<std::string_view>& names);

Columns columns_of(std::string_view header);

/// The layouts of a row pasted without its header: current (13 fields) and pre-2022 (12).
std::optional<Columns> columns_for_width(std::size_t fields);

/// A line that starts like a data row: a size, then a count (or nothing: cut after the size).
bool row_like(const std::vector<std::string_view>& w);

std::string operation_of_program(std::string_view program);

/// NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + minor*100 + patch
/// before.
std::string nccl_version_of_code(std::uint64_t code);

/// busbw / algbw of an operation on n ranks (nccl-tests' factors), or nullopt when it does not
/// depend on n.
std::optional<double> rank_factor(std::string_view operation, std::uint32_t n);

/// The rank count that every printed busbw agrees with (busbw = algbw x factor(n), up to the two
/// decimals printed), searched near the n that the fastest row's ratio gives. nullopt when the
/// factor does not depend on n, the bandwidths are too small to tell, or several n fit.
std::optional<std::uint32_t> ranks_from_bandwidth(const std::vector<Row>& rows,
                                                  std::string_view operation);

/// Ranks from size = count x type size x n, which holds for the gathering and scattering tests.
std::optional<std::uint32_t> ranks_from_sizes(const std::vector<Row>& rows);

} // namespace collsim::io::logs::nccl_tests_detail
