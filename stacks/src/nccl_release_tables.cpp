// The tuning tables of each revision of src/graph/tuning.cc
// (nccl_release.hpp, nccl_release_tables.hpp). Every value below is read from NCCL's sources at
// the tag named beside it (github.com/NVIDIA/nccl, v2.12.12-1 .. v2.30.7-1); releases between two
// tags ship the earlier tag's tables (2.19.3 and 2.19.4 have 2.19.1's tuning.cc).

#include "nccl_release_tables.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace collsim::stacks {

namespace nccl_detail {

namespace {

enum : std::size_t { kTree, kRing, kCnd, kCnc, kNvls, kNvlsTree, kPat };
enum : std::size_t { kNvl, kPci, kNet };
enum : std::size_t { kVolta, kAmpere, kHopper, kBlackwell };
constexpr std::size_t kSimple = 2;

/// 2.12.12 (and 2.13): Tree, Ring and one CollNet, whose rows the CollNetDirect slot holds.
NcclTunerTables tables_2_12() {
  NcclTunerTables t;
  t.base_lat[kTree] = {4.4, 4.4, 0};
  t.base_lat[kRing] = {3.6, 10.0, 8.4};
  t.base_lat[kCnd] = {4.4, 4.4, 0};
  t.hw_lat[kNvl][kTree] = {.52, 1.25, 28};
  t.hw_lat[kNvl][kRing] = {.47, 1.9, 3.4};
  t.hw_lat[kNvl][kCnd] = {.5, 1.2, 8.0};
  t.hw_lat[kPci][kTree] = {1.0, 1.9, 28};
  t.hw_lat[kPci][kRing] = {1.0, 2.5, 5.7};
  t.hw_lat[kPci][kCnd] = {1.0, 1.9, 8.0};
  t.hw_lat[kNet][kTree] = {5.0, 8.5, 28};
  t.hw_lat[kNet][kRing] = {2.7, 4.0, 28};
  t.hw_lat[kNet][kCnd] = {5.0, 5.0, 10.7};
  // Rows: Volta, Ampere, Hopper, Blackwell (a release without a row never selects it).
  t.ll_max_bw = {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}}};
  for (auto* caps : {&t.ring_ll128_bw, &t.tree_ll128_bw}) {
    for (auto& row : *caps) {
      row = {20.0, 20.0, 20.0}; // ll128MaxBwPerCh, one scalar
    }
  }
  t.tree_bw = {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {24.0, 23.6, 17.8}, {24.0, 23.6, 17.8}}};
  return t;
}

/// Applies the changes of the tuning.cc revision `tag` (its NCCL version code) to `t`.
void revise(NcclTunerTables& t, ReleaseCode tag) {
  switch (tag) {
  case 21403: // CollNetDirect and CollNetChain; the network ring Simple step 28 -> 9.6
    t.base_lat[kCnc] = {4.4, 4.4, 0};
    t.base_lat[kCnd] = {4.4, 4.4, 0};
    for (const std::size_t hw : {kNvl, kPci}) {
      t.hw_lat[hw][kCnd] = t.hw_lat[hw][kCnc] = {0, 0, 8.0};
    }
    t.hw_lat[kNet][kCnd] = t.hw_lat[kNet][kCnc] = {0, 0, 10.7};
    t.hw_lat[kNet][kRing][kSimple] = 9.6;
    break;
  case 21501: // a Hopper row (sm90 exactly)
    t.ll_max_bw[kHopper] = {87.7, 22.5, 19.0};
    t.tree_bw[kHopper] = {24.0, 23.6, 17.8};
    break;
  case 21701: // NVLS; per-architecture LL128 caps
    t.base_lat[kNvls] = {0, 0, 40.0};
    t.ring_ll128_bw[kHopper] = t.ring_ll128_bw[kBlackwell] = {36.7, 36.7, 36.7};
    t.tree_ll128_bw[kHopper] = t.tree_ll128_bw[kBlackwell] = {36.7, 36.7, 36.7};
    t.tree_bw[kHopper] = t.tree_bw[kBlackwell] = {38.7, 41.4, 33.0};
    break;
  case 21801: // the retune with NVLSTree
    t.base_lat[kTree] = {6.8, 14.0, 0};
    t.base_lat[kRing] = {6.6, 14.0, 8.4};
    t.base_lat[kCnd] = t.base_lat[kCnc] = {6.8, 14.0, 0};
    t.base_lat[kNvls] = t.base_lat[kNvlsTree] = {0, 0, 23.0};
    t.hw_lat[kNvl][kTree] = {.6, 1.25, 28};
    t.hw_lat[kNvl][kRing] = {.6, 1.9, 3.4};
    t.hw_lat[kNvl][kCnd] = {0, 0, 8.0};
    t.hw_lat[kNvl][kCnc] = {0, 0, 4.75};
    t.hw_lat[kPci][kCnd] = t.hw_lat[kPci][kCnc] = {0, 0, 8.0};
    t.hw_lat[kNet][kRing] = {2.7, 4.0, 14.0};
    t.hw_lat[kNet][kCnd] = {0, 0, 10.7};
    t.hw_lat[kNet][kCnc] = {0, 0, 14.0};
    t.hw_lat[kNet][kNvls] = {0, 0, 18.0};
    t.hw_lat[kNet][kNvlsTree] = {0, 0, 19.0};
    break;
  case 21803: // tree Simple steps 4 / 6 / 14 us; LL128 caps split into ring and tree
    t.hw_lat[kNvl][kTree][kSimple] = 4;
    t.hw_lat[kPci][kTree][kSimple] = 6;
    t.hw_lat[kNet][kTree][kSimple] = 14;
    t.tree_ll128_bw[kHopper] = t.tree_ll128_bw[kBlackwell] = {36.7, 36.7, 29.0};
    t.tree_bw[kHopper] = t.tree_bw[kBlackwell] = {38.7, 41.4, 36.0};
    break;
  case 21901: // tree Simple back to 28 us; NVLS and CollNet latencies in hwLat
    for (const std::size_t a : {kCnd, kCnc, kNvls, kNvlsTree}) {
      t.base_lat[a] = {0, 0, 0};
    }
    for (const std::size_t hw : {kNvl, kPci, kNet}) {
      t.hw_lat[hw][kTree][kSimple] = 28;
    }
    t.hw_lat[kNvl][kCnd] = t.hw_lat[kPci][kCnd] = {0, 0, 3.7};
    t.hw_lat[kNvl][kCnc] = t.hw_lat[kPci][kCnc] = {0, 0, 2.8};
    t.hw_lat[kNvl][kNvls] = t.hw_lat[kNvl][kNvlsTree] = {0, 0, 23};
    t.hw_lat[kNet][kCnd] = {0, 0, 31};
    t.hw_lat[kNet][kCnc] = {0, 0, 30};
    t.hw_lat[kNet][kNvlsTree] = {0, 0, 14};
    break;
  case 22105: // Hopper's LL ceiling; NVLS over NVLink 25 us
    t.ll_max_bw[kHopper] = t.ll_max_bw[kBlackwell] = {141.0, 45.0, 35.0};
    t.hw_lat[kNvl][kNvls] = t.hw_lat[kNvl][kNvlsTree] = {0, 0, 25};
    break;
  case 22304: // tree Simple: base 8.4, steps 4 / 4 / 14 us; PAT (its 8 us base in the formula)
    t.base_lat[kTree][kSimple] = 8.4;
    t.base_lat[kPat] = {8.0, 8.0, 8.0};
    t.hw_lat[kNvl][kTree][kSimple] = 4;
    t.hw_lat[kPci][kTree][kSimple] = 4;
    t.hw_lat[kNet][kTree][kSimple] = 14;
    break;
  case 22501: // Blackwell rows
    t.ll_max_bw[kBlackwell] = {282.0, 90.0, 70.0};
    t.ring_ll128_bw[kBlackwell] = {73.4, 73.4, 73.4};
    t.tree_ll128_bw[kBlackwell] = {73.4, 73.4, 58.0};
    t.tree_bw[kBlackwell] = {77.4, 82.8, 72.0};
    break;
  case 22803: // tuner constants: PAT rows, NVLSTree caps, NVLS efficiency
    t.hw_lat[kNvl][kPat] = t.hw_lat[kPci][kPat] = {0, 0, 4.0};
    t.hw_lat[kNet][kPat] = {0, 0, 14};
    t.tree_ll128_bw[kBlackwell] = {55.6, 31.67, 20.0};
    t.tree_bw[kBlackwell] = {70.0, 42.8, 24.0};
    t.nvls_tree_bw = {
        {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 43.1}}};
    t.nvls_efficiency = {0.0, 0.0, 0.85, 0.74};
    break;
  case 22807: t.ring_ll128_bw[kBlackwell] = {73.4, 34.6, 73.4}; break;
  case 22809:
    t.hw_lat[kNet][kNvlsTree][kSimple] = 20.9;
    t.nvls_tree_bw[kBlackwell][2] = 43.8;
    break;
  case 22902: t.ring_ll128_bw[kBlackwell] = {34.5, 34.6, 34.5}; break;
  case 22907: t.ring_ll128_bw[kBlackwell] = {40.0, 40.0, 40.0}; break;
  case 23003: t.nvls_tree_bw[kBlackwell] = {0.0, 96.0, 80.0}; break;
  default: break;
  }
}

/// The tuning.cc revisions whose tables differ, oldest first.
constexpr std::array<ReleaseCode, 16> kRevisions{21212, 21403, 21501, 21701, 21801, 21803,
                                                 21901, 22105, 22304, 22501, 22803, 22807,
                                                 22809, 22902, 22907, 23003};

} // namespace

const NcclTunerTables& nccl_tuner_tables(ReleaseCode release) {
  static const std::vector<NcclTunerTables> all = [] {
    std::vector<NcclTunerTables> v;
    NcclTunerTables t = tables_2_12();
    for (const ReleaseCode tag : kRevisions) {
      revise(t, tag);
      v.push_back(t);
    }
    return v;
  }();
  const auto it = std::upper_bound(kRevisions.begin(), kRevisions.end(), release);
  const std::size_t i =
      it == kRevisions.begin() ? 0 : static_cast<std::size_t>(it - kRevisions.begin()) - 1;
  return all[i];
}

namespace {

using Speeds = std::vector<double>;
struct SpeedRevision {
  ReleaseCode from;
  Speeds intra;
  Speeds inter;
};

// search.cc speedArrayIntra / speedArrayInter.
const std::vector<SpeedRevision> kGenericSpeeds{
    {21212,
     {44.0, 30.0, 22.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0},
     {48.0, 30.0, 24.0, 22.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24,
      0.12}},
    {21501,
     {44.0, 30.0, 22.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0},
     {48.0, 30.0, 28.0, 24.0, 22.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2,
      0.24, 0.12}},
    {21801, {kSpeedIntra.begin(), kSpeedIntra.end()}, {kSpeedInter.begin(), kSpeedInter.end()}},
};
// sm90SpeedArrayIntra / Inter (from 2.16.5).
const std::vector<SpeedRevision> kSm90Speeds{
    {21605,
     {66.0, 33.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0},
     {48.0, 45.0, 30.0, 24.0, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12}},
    {21801,
     {60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0},
     {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12}},
    {21803,
     {60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0},
     {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12}},
    {21901,
     {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0},
     {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12}},
    {21903,
     {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0},
     {kSm90SpeedInter.begin(), kSm90SpeedInter.end()}},
    {22105,
     {kSm90SpeedIntra.begin(), kSm90SpeedIntra.end()},
     {kSm90SpeedInter.begin(), kSm90SpeedInter.end()}},
};
// sm100SpeedArrayIntra / Inter (from 2.25.1).
const Speeds kSm100Inter2251{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                             15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const Speeds kSm100Intra2273{90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
const std::vector<SpeedRevision> kSm100Speeds{
    {22501, {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0}, kSm100Inter2251},
    {22703,
     kSm100Intra2273,
     {47.9, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
      0.12}},
    {22705,
     kSm100Intra2273,
     {48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24,
      0.12}},
    {22706,
     kSm100Intra2273,
     {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
      0.24, 0.12}},
    {22902,
     {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0},
     {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2,
      0.24, 0.12}},
    {22907,
     {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0},
     {96.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4,
      1.2, 0.24, 0.12}},
    {23003,
     {kSm100SpeedIntra.begin(), kSm100SpeedIntra.end()},
     {kSm100SpeedInter.begin(), kSm100SpeedInter.end()}},
};

const SpeedRevision& revision_at(const std::vector<SpeedRevision>& list, ReleaseCode r) {
  const SpeedRevision* out = &list.front();
  for (const SpeedRevision& s : list) {
    if (s.from <= r) {
      out = &s;
    }
  }
  return *out;
}

} // namespace

std::span<const double> speed_array(ReleaseCode r, std::uint32_t cc, bool inter) {
  const std::vector<SpeedRevision>* list = &kGenericSpeeds;
  if (cc >= 100 && r >= 22501) {
    list = &kSm100Speeds;
  } else if (cc >= 90 && r >= 21605) {
    list = &kSm90Speeds;
  }
  const SpeedRevision& s = revision_at(*list, r);
  return inter ? std::span<const double>(s.inter) : std::span<const double>(s.intra);
}

} // namespace nccl_detail

} // namespace collsim::stacks
