#pragma once
// Plain value types of a cluster document ("format": "scaleacross.cluster").
// Units live in the member names, as in the JSON keys.

#include "model/routing.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sa {

enum class GpuArch { Unknown, Ampere, Hopper, Blackwell };

struct GpuModel {
    std::string name;
    double peak_tflops_bf16 = 0;
    double peak_tflops_fp8 = 0; // 0 = no FP8 support
    double memory_gib = 0;
    double hbm_tbps = 0;
    // Streaming multiprocessors: GEMM wave quantisation (tiles per wave).
    int sms = 108;
    // Fraction of the dense peak that large, well-shaped GEMMs reach with
    // cuBLAS (vendor and MLPerf measurements; see docs/COST_MODEL.md).
    double gemm_efficiency = 0.8;
    // The same for FP8 GEMMs, of the FP8 peak: H100/H800 FP8 GEMMs reach
    // 68-76% of 1,979 TFLOP/s where BF16 reaches ~80% of 989 (DeepGEMM,
    // TileLang and FlashAttention-3 figures; see docs/COST_MODEL.md).
    double gemm_efficiency_fp8 = 0.7;
    // Board power the peaks are rated at, and the limit the GPU runs under
    // (0: not given / at the rated power). A lower limit lowers the
    // sustained tensor clock: peak x (power_limit_w / tdp_w)^(1/3).
    double tdp_w = 0;
    double power_limit_w = 0;
    // The SM clock the efficiencies above are figures at (a short kernel
    // benchmark runs at the boost clock), and the clock a training run
    // sustains under back-to-back GEMMs at the rated board power, where the
    // power limit holds it down (both 0: the architecture's measured pair,
    // KernelConstants::hopper_*_clock_mhz for Hopper, no change elsewhere;
    // docs/COST_MODEL.md "GPU clocks"). Tensor-core work runs at
    // sustained / boost of the benchmark rate; HBM keeps its clock.
    double boost_clock_mhz = 0;
    double sustained_clock_mhz = 0;
    // Board power with nothing running (0: 15% of the board power; docs/RUN.md).
    double idle_w = 0;
    // "ampere", "hopper" or "blackwell"; empty: read off the name (H100,
    // H200, H800, H20 -> hopper; A100, A800, A30, A10 -> ampere; B100, B200,
    // B300 -> blackwell). It picks the attention kernels' efficiencies
    // (docs/COST_MODEL.md "Attention").
    std::string architecture;

    bool operator==(const GpuModel&) const = default;
};

// The GPU's architecture: `architecture` when given, else read off its name.
GpuArch gpuArch(const GpuModel& g);
const char* toString(GpuArch a);

// A transport profile for a link: what limits a long fat pipe beyond its
// raw rate. Built-ins are in core/cost/network.h; a cluster may override or
// add profiles by name.
struct Technology {
    std::string name;
    double efficiency = 0.9;     // goodput / line rate on a clean, busy link
    double window_mib = 0;       // per-flow window (0 = not window limited)
    int flows = 1;               // parallel flows / QPs per transfer
    double loss_rate = 0;        // packet loss probability (0 for lossless)
    bool lossless = true;        // PFC-style: loss is never seen by the transport
    double mtu_bytes = 4096;     // packet size, for loss recovery and Mathis' bound
    double per_message_us = 2.0; // software + NIC overhead per message

    // NCCL's net transport (docs/COST_MODEL.md "NCCL transport knobs").
    // All 0: the plain window_mib x flows profile above. Any given: one
    // transfer between two ranks uses nccl_channels connections (one per
    // channel), each with qps_per_connection QPs (RDMA) or
    // sockets_per_connection sockets (TCP); `flows` is then channels x QPs
    // (or sockets) unless given, and the transfer keeps at most
    // flows / (QPs or sockets) x buffsize_mib in flight (the staging
    // buffers, simple protocol). core/cost/network.h completes the rest
    // with NCCL's defaults.
    int nccl_channels = 0;          // NCCL_NCHANNELS_PER_NET_PEER (NCCL: 2)
    int qps_per_connection = 0;     // NCCL_IB_QPS_PER_CONNECTION (NCCL: 1)
    int sockets_per_connection = 0; // NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS (<= 64)
    double buffsize_mib = 0;        // NCCL_BUFFSIZE per channel (NCCL: 4 MiB)
    // Host copies of a socket (non-RDMA) transport: what one core drives,
    // the cores given to the network per host, the flows past which a host
    // gains nothing (0 = no such limit).
    double host_gbps_per_core = 0;
    int host_net_cores = 0;
    int max_flows_per_host = 0;
    // PFC on a RoCE link: switch buffer per port reserved as headroom (0 =
    // not modelled: lossless as declared), the port's rate (0 = the
    // link's), and the loss rate once the headroom cannot hold the RTT.
    double pfc_headroom_mib = 0;
    double port_gbps = 0;
    double lossy_loss_rate = 0;

    bool operator==(const Technology&) const = default;
};

struct Building {
    std::string name;
    std::string region;
    std::string gpu_model;
    std::int64_t gpus = 0;
    int gpus_per_host = 8;
    double scale_up_gbps = 0;             // NVLink per GPU, one direction, Gbit/s
    double scale_out_gbps = 0;            // NIC per GPU, Gbit/s
    std::int64_t zone_gpus = 0;           // GPUs per non-blocking zone (pod)
    double zone_oversubscription = 1;     // zone -> building spine
    double building_oversubscription = 1; // building fabric -> aggregation
    // Measured by the user (scaleacross calibrate, docs/CALIBRATION.md);
    // absent: the built-in values (docs/COST_MODEL.md). Efficiency: the bus
    // bandwidth a ring collective reaches / the line rate; latency: what one
    // ring step costs, microseconds.
    std::optional<double> scale_up_efficiency;  // NVLink, of scale_up_gbps
    std::optional<double> scale_up_latency_us;  // a step inside the NVLink domain
    std::optional<double> scale_out_efficiency; // NIC fabric, of scale_out_gbps
    std::optional<double> scale_out_latency_us; // a step between hosts of one zone

    // Reliability, storage, prices and power (docs/RUN.md); 0 = the default
    // the page names (Llama 3's interruption rates, its storage throughput).
    double gpu_mtbf_hours = 0;  // mean time between GPU-caused job interruptions, per GPU
    double host_mtbf_hours = 0; // the same for everything else, per host
    double restart_s = 0;       // detect, reschedule, re-initialise (the checkpoint read is added)
    double storage_write_gbps = 0; // checkpoint writes, the building in all, Gbit/s
    double storage_read_gbps = 0;  // checkpoint reads on restart, Gbit/s
    // Stragglers: the slowest GPU's compute time over the others' (1: none),
    // and the step-to-step jitter of one GPU's compute time (coefficient of
    // variation).
    double straggler_slowdown = 1;
    double step_jitter = 0;
    double gpu_hour_usd = 0;            // 0: not priced
    double host_power_w = 0;            // per host besides its GPUs (CPUs, memory, NICs, fans)
    double network_power_w_per_gpu = 0; // switches and optics, per GPU
    double pue = 0;                     // power usage effectiveness (0: 1.2)

    std::int64_t zones() const { return zone_gpus > 0 ? (gpus + zone_gpus - 1) / zone_gpus : 1; }
    bool operator==(const Building&) const = default;
};

struct Link {
    std::string a;
    std::string b;
    std::string name; // defaults to "A-B"
    double bandwidth_gbps = 0;
    double latency_ms = 0;
    std::string technology = "roce";
    // Traffic of others on the link, Gbit/s in each direction (inelastic
    // cross traffic: the job gets bandwidth_gbps - background_gbps).
    double background_gbps = 0;
    double price_per_gb_usd = 0; // transport price per GB carried (egress), 0: not priced
    // A degraded link (a failed optic, a fibre cut rerouted, a flapping
    // port): for `degraded_fraction` of the time the link carries only
    // `degraded_bandwidth_gbps` (docs/RUN.md "Stragglers"); 0: never.
    double degraded_fraction = 0;
    double degraded_bandwidth_gbps = 0;

    bool operator==(const Link&) const = default;
};

struct Cluster {
    std::string name;
    std::string description;
    std::map<std::string, GpuModel> gpu_models;
    std::vector<Building> buildings;
    std::vector<Link> links;
    std::map<std::string, Technology> technologies; // user profiles (override built-ins)
    Routing routing;

    std::int64_t totalGpus() const {
        std::int64_t n = 0;
        for (const auto& b : buildings)
            n += b.gpus;
        return n;
    }
    int buildingIndex(const std::string& buildingName) const {
        for (std::size_t i = 0; i < buildings.size(); ++i)
            if (buildings[i].name == buildingName)
                return static_cast<int>(i);
        return -1;
    }
    const GpuModel* gpuOf(const Building& b) const {
        auto it = gpu_models.find(b.gpu_model);
        return it == gpu_models.end() ? nullptr : &it->second;
    }
    bool operator==(const Cluster&) const = default;
};

} // namespace sa
