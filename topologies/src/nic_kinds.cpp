// NIC kinds (nic_kinds.hpp). Source ids [Sn] are those of ../shared/reference/hardware.md
// (section 10); URLs are public pages found for the cloud transports. Line rates are per NIC and
// direction; latencies are per NIC link: a route between nodes crosses two NIC links, so an
// end-to-end latency is halved here (the existing presets write HDR's 0.6 us as 0.3 us).
//
// Efficiencies (large-transfer share of the line rate):
//   ib_edr  0.92  [unverified]: no EDR measurement; HDR's ib_read_bw ratio 23/25 [S45] assumed
//   ib_hdr  0.96  24 of 25 GB/s per HDR NIC through NCCL (maintainer: 2 NICs -> 48 GB/s) [S46]
//   ib_ndr  0.95  380 of 400 Gb/s GPUDirect RDMA threshold on Azure NDv5 [S28]
//   roce    0.80  [unverified]: no RoCE measurement; the ~80 % of advertised rule of thumb [S1]
//   efa     0.89  [derived from a published measurement]: nccl-tests all_reduce_perf on p5.48xlarge
//                 (8 H100, 32 x 100 Gb/s EFA = 400 GB/s per instance, aws-ofi-nccl) at 8 GiB
//                 holds busbw 355.4-357.1 GB/s from 4 to 16 instances [P5B]: a ring's bus
//                 bandwidth between nodes is each node's NIC rate times the efficiency, and no
//                 NCCL algorithm beats it from 4 nodes on, so 357 / 400 = 0.89 is a lower bound.
//                 (Before 2026-12-07: 0.59 from NVIDIA/nccl#527, an issue titled "Slow bus
//                 bandwidth" on 4 p4d-class instances with NCCL 2.9.9 running 2 channels: a
//                 misconfigured run, not the fabric's rate.)
//   tcpx    0.70  [unverified]: no published GPUDirect-TCPX efficiency; below roce's 0.8
//                 because the data path is TCP
//   tcpxo   0.90  [derived from a published measurement]: nccl-tests all_reduce_perf on 2 x A3
//                 Mega (16 H100, NCCL's Ring/Tree Simple profile of 2024), 8 GiB at algbw
//                 180.71 GB/s [A3M]. On 2 nodes NCCL's tree sends each node's half-reduced data
//                 up one tree and the result down the other, S bytes per node and direction over
//                 its 8 GPU NICs (200 GB/s): 180.71 / 200 = 0.90, a lower bound.
//
// Latencies (per NIC link):
//   ib_edr  0.25 us  EDR 0.5 us end to end [S1]
//   ib_hdr  0.3 us   HDR 0.6 us end to end [S1, S39]
//   ib_ndr  0.3 us   [unverified]: NDR latency not published [S1]; HDR's value
//   roce    1 us     RDMA "~2 us" end to end in OCI's RoCE cluster network,
//                    https://blogs.oracle.com/cloud-infrastructure/zettascale-osu-nccl-benchmark-h100-ai-workloads
//   efa     5 us     [unverified]: AWS only says EFA has "lower and more consistent latency" than
//                    TCP, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html ; half of
//                    TCP's lower bound (10-50 us end to end, OCI page above)
//   tcpx    10 us    [unverified]: TCP/IP 10-50 us end to end (OCI page above); 20 us end to end
//   tcpxo   15 us    [derived from a published measurement]: the same log [A3M] times an 8 B to
//                    256 B allreduce at 123 us (in place: 122.3-123.5); NCCL's own latency model
//                    for that run (Tree Simple, 4 channels, 8 GPUs a node: baseLat 8.4 +
//                    2 x (7 x 4.0 NVLink + 1 x 14 NET) = 92.4 us, tuning.cc) leaves 2 x 15.3 us
//                    for the two network crossings beyond NCCL's 14 us NET step: 29.3 us end to
//                    end, within TCP's 10-50 us (OCI page above), about 15 us per NIC link.
//   [P5B]
//   https://github.com/crazyguitar/aws-gpu-communication-benchmark/blob/4fdb5a4fab8b2e173e2c7e87d9faddd9f54ddfea/data/nccl_all_reduce.csv
//         (public, 2025; its k8s/nccl_all_reduce_perf.yaml: 8 ranks a p5.48xlarge, NCCL_BUFFSIZE
//         8388608, NCCL_P2P_NET_CHUNKSIZE 524288, aws-ofi-nccl's tuner; not a shared log).
//   [A3M]
//   https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/02dd8f455c43ced1cf442ef29334bda97149264b/ztan-NCCL-test-result
//         (public; not one of the shared validation logs).
//
// Line rates (per NIC):
//   ib_edr 100, ib_hdr 200, ib_ndr 400 Gb/s [S1, S44]; roce 200 Gb/s (ConnectX-6 EN 200GbE
//   [S96]); efa 100 Gb/s (p5: 32 network cards, 3,200 Gb/s,
//   https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/p5-efa.html ); tcpx and tcpxo 200 Gb/s
//   (A3 High 1,000 Gb/s with GPUDirect-TCPX, A3 Mega 1,800 Gb/s with GPUDirect-TCPXO, each
//   including one 200 Gb/s general-purpose NIC,
//   https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth ; the 200 Gb/s per GPU NIC
//   split is [unverified]).

#include "collsim/topologies/nic_kinds.hpp"

#include <array>

namespace collsim::topologies {
namespace {

constexpr core::Bandwidth gbit(double gbps) {
  return core::Bandwidth{gbps * 1e9 / 8.0};
}
constexpr core::Seconds us(double v) {
  return core::Seconds{v * 1e-6};
}

constexpr std::array<NicKind, 7> kNicKinds{{
    {"ib_edr", "InfiniBand EDR (ConnectX-5 class), RDMA", gbit(100), us(0.25), 0.92,
     "rate, latency [S1]; efficiency unverified (HDR's ratio [S45])", true},
    {"ib_hdr", "InfiniBand HDR (ConnectX-6), RDMA", gbit(200), us(0.3), 0.96,
     "rate, latency [S1, S39]; efficiency 24/25 GB/s through NCCL [S46]", true},
    {"ib_ndr", "InfiniBand NDR (ConnectX-7), RDMA", gbit(400), us(0.3), 0.95,
     "rate [S1, S44]; latency unverified (HDR's); efficiency 380/400 Gb/s [S28]", true},
    {"roce", "RDMA over Converged Ethernet (ConnectX, RoCE v2)", gbit(200), us(1.0), 0.80,
     "rate [S96]; latency ~2 us end to end (OCI); efficiency unverified (rule of thumb [S1])",
     true},
    {"efa", "AWS Elastic Fabric Adapter (SRD)", gbit(100), us(5.0), 0.89,
     "rate (AWS p5 EFA page); latency unverified; efficiency a lower bound from a published "
     "nccl-tests run on 4 - 16 p5 instances"},
    {"tcpx", "Google Cloud GPUDirect-TCPX (A3 High)", gbit(200), us(10.0), 0.70,
     "rate (GCP GPU network bandwidth page); latency and efficiency unverified"},
    {"tcpxo", "Google Cloud GPUDirect-TCPXO (A3 Mega)", gbit(200), us(15.0), 0.90,
     "rate (GCP GPU network bandwidth page); latency and efficiency from a published 2 x A3 Mega "
     "nccl-tests run"},
}};

} // namespace

std::span<const NicKind> nic_kinds() {
  return kNicKinds;
}

const NicKind* find_nic_kind(std::string_view name) {
  for (const NicKind& k : kNicKinds) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

std::vector<std::string> nic_kind_names() {
  std::vector<std::string> out;
  for (const NicKind& k : kNicKinds) {
    out.emplace_back(k.name);
  }
  return out;
}

} // namespace collsim::topologies
