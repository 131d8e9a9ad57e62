#pragma once
// Internal: the constants of NCCL's tuning model and topology search that stacks/nccl_inputs.cpp
// and stacks/nccl_tuning.cpp share (algorithms.md 3.1; NCCL src/graph/tuning.cc
// ncclTunerConstantsDefaults, src/graph/search.cc speed arrays, src/graph/topo.h, device.h).

#include "collsim/stacks/nccl_model.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>

namespace collsim::stacks::nccl_detail {

using algorithms::nccl::Proto;

// ---- tuner constants (algorithms.md 3.1, ncclTunerConstantsDefaults) ---------------------------
// Rows: compCap index (Volta, Ampere, Hopper, Blackwell); columns: N1, N2, N4+.
using PerArch = std::array<std::array<double, 3>, 4>;
// llMaxBws[index1][index2]: index1 = compCap index on one node, else 0 Intel / 1 AMD or mixed.
inline constexpr PerArch kLlMaxBw{
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 90.0, 70.0}}};
inline constexpr PerArch kPerChMaxRingLl128Bw{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
inline constexpr PerArch kPerChMaxTreeLl128Bw{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
inline constexpr PerArch kPerChMaxTreeBw{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
inline constexpr PerArch kPerChMaxNvlsTreeBw{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};
inline constexpr std::array<double, 4> kNvlsEfficiency{0.0, 0.0, 0.85, 0.74};
// treeCorrectionFactor[proto][log2(nBytes/64)], protocols LL, LL128, Simple; 64 B .. 256 MiB.
inline constexpr std::array<std::array<double, 24>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

// ---- topology constants (src/graph/topo.h, algorithms.md 3.1 "Other constants") --------------
inline constexpr double kLocBw = 5000.0;
// NCCL charges each NVLink a calibrated constant, not its signalling rate: SM70/SM80 20 GB/s,
// SM90 20.6 GB/s, SM100 40.1 GB/s per link. The collsim topology carries the signalling rate
// (25 GB/s per NVLink 2-4 link, 50 GB/s per NVLink 5 link), so a GPU's NVLink rate is scaled by
// NCCL's constant over the generation's nominal per-link rate (A100: 12 x 25 -> 12 x 20 = 240).
inline constexpr double nvlink_scale(std::uint32_t cc) {
  return cc >= 100 ? 40.1 / 50.0 : cc >= 90 ? 20.6 / 25.0 : 20.0 / 25.0;
}
// NCCL's PCI link bandwidth is width x gen speed / 80 (topo.cc): Gen3 x16 = 12 GB/s (PCI_BW),
// doubling per generation. collsim's PCIe rates are after line coding (Gen3 x16 = 15.75 GB/s), so
// the ratio 12 / 15.75 converts every generation.
inline constexpr double kPciScale = 12.0 / 15.75;
// NCCL_NET_OVERHEAD default (us): Intel x86 1.0, AMD x86 2.0, otherwise 1.0.
inline constexpr double net_overhead_us(NcclCpu cpu) {
  return cpu == NcclCpu::amd ? 2.0 : 1.0;
}
// ... unless NCCL_NET_OVERHEAD sets it (tuning.cc getNetOverhead reads the parameter first).
inline double net_overhead_us(NcclCpu cpu, const std::optional<double>& env_us) {
  return env_us ? *env_us : net_overhead_us(cpu);
}

// ---- search.cc speed arrays (GB/s per channel) -------------------------------------------------
inline constexpr std::array<double, 13> kSpeedIntra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                    9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
inline constexpr std::array<double, 19> kSpeedInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                                    12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                                    3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 11> kSm90SpeedIntra{60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                                        15.0, 12.0, 11.0, 6.0,  3.0};
inline constexpr std::array<double, 17> kSm90SpeedInter{48.0, 45.0, 42.0, 40.0, 30.0, 24.0,
                                                        22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                                        3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 12> kSm100SpeedIntra{90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                                         40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
inline constexpr std::array<double, 20> kSm100SpeedInter{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                                         30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                         6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

inline std::span<const double> speed_array(std::uint32_t cc, bool inter) {
  if (cc >= 100) {
    return inter ? std::span<const double>(kSm100SpeedInter) : kSm100SpeedIntra;
  }
  if (cc >= 90) {
    return inter ? std::span<const double>(kSm90SpeedInter) : kSm90SpeedIntra;
  }
  return inter ? std::span<const double>(kSpeedInter) : kSpeedIntra;
}

// ---- device and thread constants (src/include/device.h, comm.h) --------------------------------
inline constexpr std::uint32_t kMaxChannels = 64;       // MAXCHANNELS (since 2.25.1)
inline constexpr std::uint32_t kMaxNvlsArity = 32;      // NCCL_MAX_NVLS_ARITY
inline constexpr std::uint32_t kMaxDirectArity = 7;     // NCCL_MAX_DIRECT_ARITY
inline constexpr std::uint32_t kNvlsChannels = 16;      // NCCL_NVLS_NCHANNELS default
inline constexpr std::uint32_t kWarp = 32;              // WARP_SIZE
inline constexpr std::uint32_t kMaxThreads = 640;       // NCCL_MAX_NTHREADS
inline constexpr std::uint32_t kSimpleMaxThreads = 512; // NCCL_SIMPLE_MAX_NTHREADS
inline constexpr std::uint32_t kLlMaxThreads = 512;     // NCCL_LL_MAX_NTHREADS
inline constexpr std::uint32_t kLl128MaxThreads = 640;  // NCCL_LL128_MAX_NTHREADS
inline constexpr double kPciBw = 12.0; // PCI_BW, for the Simple ring's thread count

inline std::size_t cc_index(std::uint32_t cc) {
  return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}
/// NCCL's tables index protocols LL, LL128, Simple.
inline std::size_t proto_index(Proto p) {
  return p == Proto::ll ? 0 : p == Proto::ll128 ? 1 : 2;
}
inline std::uint32_t log2i(std::uint64_t n) {
  return n == 0 ? 0 : static_cast<std::uint32_t>(std::bit_width(n) - 1);
}

} // namespace collsim::stacks::nccl_detail
