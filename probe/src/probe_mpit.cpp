// MPI_T control variables and Open MPI coll/tuned algorithm forcing (see probe_mpit.hpp for what
// works and why).

#include "probe_mpit.hpp"

#include "collsim/core/errors.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <mpi.h>

namespace collsim::probe {
namespace {

/// A failure of the MPI tool interface while running (exit code 1).
class MpitError : public core::Error {
public:
  using core::Error::Error;
  [[nodiscard]] bool is_input_error() const override { return false; }
};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// A cvar handle freed on scope exit.
class Handle {
public:
  explicit Handle(int index) {
    if (MPI_T_cvar_handle_alloc(index, nullptr, &handle_, &count_) != MPI_SUCCESS) {
      throw MpitError(fmt::format("MPI_T_cvar_handle_alloc failed for control variable {}", index));
    }
  }
  ~Handle() { MPI_T_cvar_handle_free(&handle_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  [[nodiscard]] MPI_T_cvar_handle get() const { return handle_; }
  [[nodiscard]] int count() const { return count_; }

private:
  MPI_T_cvar_handle handle_{};
  int count_ = 0;
};

struct CvarInfo {
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
};

CvarInfo cvar_info(int index) {
  std::array<char, 256> name{};
  int name_len = static_cast<int>(name.size());
  int verbosity = 0;
  int bind = 0;
  int scope = 0;
  CvarInfo info;
  if (MPI_T_cvar_get_info(index, name.data(), &name_len, &verbosity, &info.datatype, &info.enumtype,
                          nullptr, nullptr, &bind, &scope) != MPI_SUCCESS) {
    throw MpitError(fmt::format("MPI_T_cvar_get_info failed for control variable {}", index));
  }
  return info;
}

std::string_view collective_variable_part(core::CollectiveKind c) {
  return core::to_string(c); // allreduce, bcast, reduce_scatter, ... are coll/tuned's spellings
}

} // namespace

ControlVariables::ControlVariables() {
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
    throw MpitError("MPI_T_init_thread failed: this MPI library offers no MPI tool interface");
  }
  int n = 0;
  MPI_T_cvar_get_num(&n);
  for (int i = 0; i < n; ++i) {
    std::array<char, 256> name{};
    int name_len = static_cast<int>(name.size());
    int verbosity = 0;
    int bind = 0;
    int scope = 0;
    MPI_Datatype datatype{};
    MPI_T_enum enumtype{};
    if (MPI_T_cvar_get_info(i, name.data(), &name_len, &verbosity, &datatype, &enumtype, nullptr,
                            nullptr, &bind, &scope) == MPI_SUCCESS) {
      index_.emplace(std::string(name.data()), i);
    }
  }
}

ControlVariables::~ControlVariables() {
  MPI_T_finalize();
}

std::optional<int> ControlVariables::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? std::nullopt : std::optional<int>(it->second);
}

std::vector<EnumItem> ControlVariables::enum_items(int index) const {
  const CvarInfo info = cvar_info(index);
  std::vector<EnumItem> out;
  if (info.enumtype == MPI_T_ENUM_NULL) {
    return out;
  }
  int num = 0;
  std::array<char, 256> enum_name{};
  int enum_name_len = static_cast<int>(enum_name.size());
  if (MPI_T_enum_get_info(info.enumtype, &num, enum_name.data(), &enum_name_len) != MPI_SUCCESS) {
    return out;
  }
  for (int k = 0; k < num; ++k) {
    std::array<char, 256> item{};
    int item_len = static_cast<int>(item.size());
    int value = 0;
    if (MPI_T_enum_get_item(info.enumtype, k, &value, item.data(), &item_len) == MPI_SUCCESS) {
      out.push_back(EnumItem{value, std::string(item.data())});
    }
  }
  return out;
}

long long ControlVariables::read_int(int index) const {
  const CvarInfo info = cvar_info(index);
  const Handle h(index);
  // Zeroed and large enough for any scalar: Open MPI stores booleans in one byte.
  alignas(8) std::array<unsigned char, 64> buf{};
  if (MPI_T_cvar_read(h.get(), buf.data()) != MPI_SUCCESS) {
    throw MpitError(fmt::format("MPI_T_cvar_read failed for control variable {}", index));
  }
  if (info.datatype == MPI_INT) {
    int v = 0;
    std::memcpy(&v, buf.data(), sizeof v);
    return v;
  }
  if (info.datatype == MPI_UNSIGNED) {
    unsigned v = 0;
    std::memcpy(&v, buf.data(), sizeof v);
    return v;
  }
  if (info.datatype == MPI_LONG_LONG || info.datatype == MPI_UNSIGNED_LONG_LONG ||
      info.datatype == MPI_LONG || info.datatype == MPI_UNSIGNED_LONG) {
    long long v = 0;
    std::memcpy(&v, buf.data(), sizeof v);
    return v;
  }
  // Booleans and anything else: nonzero bytes mean true.
  return std::any_of(buf.begin(), buf.begin() + 8, [](unsigned char b) { return b != 0; }) ? 1 : 0;
}

std::string ControlVariables::read_string(int index) const {
  const Handle h(index);
  std::vector<char> buf(static_cast<std::size_t>(std::max(h.count(), 1)) + 1, '\0');
  if (MPI_T_cvar_read(h.get(), buf.data()) != MPI_SUCCESS) {
    throw MpitError(fmt::format("MPI_T_cvar_read failed for control variable {}", index));
  }
  return std::string(buf.data());
}

void ControlVariables::write_int(int index, int value) const {
  const Handle h(index);
  const int rc = MPI_T_cvar_write(h.get(), &value);
  if (rc != MPI_SUCCESS) {
    throw MpitError(fmt::format("MPI_T_cvar_write of {} failed with MPI_T error {}{}", value, rc,
                                rc == MPI_T_ERR_CVAR_SET_NEVER     ? " (read-only variable)"
                                : rc == MPI_T_ERR_CVAR_SET_NOT_NOW ? " (cannot be set now)"
                                                                   : ""));
  }
}

OmpiAlgorithmForcing::OmpiAlgorithmForcing(const ControlVariables& cvars) : cvars_(cvars) {}

ForcedAlgorithm OmpiAlgorithmForcing::resolve(core::CollectiveKind c,
                                              std::string_view token) const {
  ForcedAlgorithm a;
  a.collective = c;
  a.variable = fmt::format("coll_tuned_{}_algorithm", collective_variable_part(c));
  const std::optional<int> index = cvars_.find(a.variable);
  if (!index) {
    throw core::UsageError(fmt::format(
        "--ompi-algorithm: this MPI library has no control variable {} (forcing an algorithm "
        "needs Open MPI's coll/tuned component)",
        a.variable));
  }
  a.variable_index = *index;
  const std::vector<EnumItem> items = cvars_.enum_items(*index);
  std::string valid;
  for (const EnumItem& item : items) {
    valid += fmt::format("{}{} {}", valid.empty() ? "" : ", ", item.value, item.name);
  }
  int id = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), id);
  const bool numeric = ec == std::errc() && ptr == token.data() + token.size();
  if (numeric) {
    const auto it = std::find_if(items.begin(), items.end(),
                                 [&](const EnumItem& item) { return item.value == id; });
    if (!items.empty() && it == items.end()) {
      throw core::UsageError(fmt::format(
          "--ompi-algorithm: {} is not an algorithm of {}; valid: {}", id, a.variable, valid));
    }
    if (items.empty() && id < 0) {
      throw core::UsageError(fmt::format("--ompi-algorithm: expected an id >= 0, got {}", id));
    }
    a.id = id;
    a.name = it != items.end() ? it->name : "";
    return a;
  }
  const auto it = std::find_if(items.begin(), items.end(), [&](const EnumItem& item) {
    return lower(item.name) == lower(token);
  });
  if (it == items.end()) {
    throw core::UsageError(
        items.empty() ? fmt::format("--ompi-algorithm: {} takes numeric ids only, got '{}'",
                                    a.variable, token)
                      : fmt::format("--ompi-algorithm: '{}' is not an algorithm of {}; valid: {}",
                                    token, a.variable, valid));
  }
  a.id = it->value;
  a.name = it->name;
  return a;
}

void OmpiAlgorithmForcing::apply(const ForcedAlgorithm& a) const {
  const std::optional<int> rules = cvars_.find("coll_tuned_use_dynamic_rules");
  if (!rules || cvars_.read_int(*rules) == 0) {
    throw MpitError(fmt::format(
        "--ompi-algorithm: coll_tuned_use_dynamic_rules is false although collsim-probe set {}=1 "
        "before MPI_Init (an MCA parameter file or launcher option may override it); pass "
        "--mca coll_tuned_use_dynamic_rules 1 to mpirun",
        kDynamicRulesEnv));
  }
  cvars_.write_int(a.variable_index, a.id);
  const long long back = cvars_.read_int(a.variable_index);
  if (back != a.id) {
    throw MpitError(fmt::format("--ompi-algorithm: wrote {} to {} but it reads back {}", a.id,
                                a.variable, back));
  }
}

std::string OmpiAlgorithmForcing::describe(const ForcedAlgorithm& a) {
  const std::string name = a.name.empty() ? "" : fmt::format(" ({})", a.name);
  return fmt::format("# forced algorithm: {} {}{}, Open MPI coll/tuned via MPI_T ({} = {}, "
                     "coll_tuned_use_dynamic_rules = true)",
                     core::to_string(a.collective), a.id, name, a.variable, a.id);
}

std::vector<std::string> OmpiAlgorithmForcing::competing_components(
    const std::vector<core::CollectiveKind>& collectives) const {
  std::vector<std::string> notes;
  const std::optional<int> tuned = cvars_.find("coll_tuned_priority");
  if (!tuned) {
    return notes;
  }
  const long long tuned_priority = cvars_.read_int(*tuned);
  // The framework's selection list: "^han,hcoll" excludes, "tuned,basic" includes only those.
  std::string selection;
  if (const auto coll = cvars_.find("coll")) {
    selection = cvars_.read_string(*coll);
  }
  const bool exclude = !selection.empty() && selection.front() == '^';
  const auto listed = [&](std::string_view component) {
    std::string_view s(selection);
    if (exclude) {
      s.remove_prefix(1);
    }
    while (!s.empty()) {
      const auto comma = s.find(',');
      if (s.substr(0, comma) == component) {
        return true;
      }
      s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    }
    return false;
  };
  std::string names;
  for (const core::CollectiveKind c : collectives) {
    names += (names.empty() ? "" : ", ") + std::string(core::to_string(c));
  }
  // Components that implement blocking collectives of intra-communicators; self (one rank),
  // inter (inter-communicators), sync and the accelerator wrappers are left out.
  for (const std::string_view component : {"han", "hcoll", "ucc", "adapt", "acoll", "xhc", "sm"}) {
    const auto priority = cvars_.find(fmt::format("coll_{}_priority", component));
    if (!priority) {
      continue;
    }
    const long long p = cvars_.read_int(*priority);
    if (p <= tuned_priority || (exclude && listed(component)) ||
        (!exclude && !selection.empty() && !listed(component))) {
      continue;
    }
    if (const auto enable = cvars_.find(fmt::format("coll_{}_enable", component))) {
      if (cvars_.read_int(*enable) == 0) {
        continue;
      }
    }
    notes.push_back(fmt::format("# note: coll/{} has priority {} > coll/tuned's {} and may run {} "
                                "instead of the forced algorithm; add --mca coll ^{} to rule it "
                                "out",
                                component, p, tuned_priority, names, component));
  }
  return notes;
}

} // namespace collsim::probe
