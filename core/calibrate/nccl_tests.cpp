#include "calibrate/nccl_tests.h"
#include "util/text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace sa {

namespace {

using text::trim;

std::vector<std::string> tokens(const std::string& s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string t; in >> t;)
        out.push_back(t);
    return out;
}

bool startsWith(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

std::optional<double> number(const std::string& s) {
    return text::finiteNumber(s);
}

std::optional<std::int64_t> integer(const std::string& s) {
    if (s.empty())
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || end != s.c_str() + s.size())
        return std::nullopt;
    return std::int64_t(v);
}

// The collective a program or file name stands for: "all_reduce_perf",
// "node1_allreduce.txt", ...
std::optional<NcclCollective> collectiveInName(std::string name) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
    name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
    // Longest names first: "alltoall" before "all", "reducescatter" before "reduce".
    if (name.find("allreduce") != std::string::npos)
        return NcclCollective::AllReduce;
    if (name.find("allgather") != std::string::npos)
        return NcclCollective::AllGather;
    if (name.find("reducescatter") != std::string::npos)
        return NcclCollective::ReduceScatter;
    if (name.find("sendrecv") != std::string::npos)
        return NcclCollective::SendRecv;
    if (name.find("alltoall") != std::string::npos && name.find("alltoallv") == std::string::npos)
        return NcclCollective::AllToAll;
    return std::nullopt;
}

std::string baseName(const std::string& path) {
    const auto slash = path.find_last_of("/\\");
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Column positions of the result table, from its header line.
struct Columns {
    int size = -1, count = -1, type = -1, redop = -1;
    int oop = -1, ip = -1; // first column (time) of the out-of-place and in-place groups
    int needed = 0;        // tokens a row must have
};

std::optional<Columns> columnsOf(const std::vector<std::string>& names) {
    Columns c;
    for (int i = 0; i < int(names.size()); ++i) {
        const std::string& n = names[std::size_t(i)];
        if (n == "size")
            c.size = i;
        else if (n == "count")
            c.count = i;
        else if (n == "type")
            c.type = i;
        else if (n == "redop")
            c.redop = i;
        else if (n == "time" || n == "cputime") {
            if (c.oop < 0)
                c.oop = i;
            else if (c.ip < 0)
                c.ip = i;
        }
    }
    if (c.size < 0 || c.oop < 0)
        return std::nullopt;
    // Each group is time, algbw, busbw, #wrong (older versions: "error").
    for (int g : {c.oop, c.ip}) {
        if (g < 0)
            continue;
        if (g + 3 >= int(names.size()) || names[std::size_t(g + 1)] != "algbw" ||
            names[std::size_t(g + 2)] != "busbw")
            return std::nullopt;
        c.needed = std::max(c.needed, g + 4);
    }
    return c;
}

} // namespace

const char* collectiveName(NcclCollective c) {
    switch (c) {
    case NcclCollective::AllReduce:
        return "all_reduce";
    case NcclCollective::AllGather:
        return "all_gather";
    case NcclCollective::ReduceScatter:
        return "reduce_scatter";
    case NcclCollective::SendRecv:
        return "sendrecv";
    case NcclCollective::AllToAll:
        return "alltoall";
    }
    return "?";
}

const char* tierName(CalibrationTier t) {
    switch (t) {
    case CalibrationTier::Host:
        return "host";
    case CalibrationTier::Building:
        return "building";
    case CalibrationTier::CrossBuilding:
        return "cross-building";
    }
    return "?";
}

std::optional<NcclCollective> parseCollectiveName(const std::string& s) {
    for (NcclCollective c :
         {NcclCollective::AllReduce, NcclCollective::AllGather, NcclCollective::ReduceScatter,
          NcclCollective::SendRecv, NcclCollective::AllToAll})
        if (s == collectiveName(c) || s == std::string(collectiveName(c)) + "_perf")
            return c;
    return std::nullopt;
}

std::optional<CalibrationTier> parseTierName(const std::string& s) {
    for (CalibrationTier t :
         {CalibrationTier::Host, CalibrationTier::Building, CalibrationTier::CrossBuilding})
        if (s == tierName(t))
            return t;
    return std::nullopt;
}

double busFactor(NcclCollective c, int n) {
    if (n <= 1)
        return c == NcclCollective::SendRecv ? 1.0 : 0.0;
    switch (c) {
    case NcclCollective::AllReduce:
        return 2.0 * (n - 1) / n;
    case NcclCollective::AllGather:
    case NcclCollective::ReduceScatter:
    case NcclCollective::AllToAll:
        return double(n - 1) / n;
    case NcclCollective::SendRecv:
        return 1.0;
    }
    return 1.0;
}

NcclTestsTable readNcclTests(const std::string& text, const std::string& file,
                             std::vector<Diagnostic>& problems) {
    NcclTestsTable t;
    t.file = file;
    const std::size_t problemsBefore = problems.size();
    auto error = [&](int line, const std::string& message) {
        problems.push_back(
            {file, line > 0 ? "line " + std::to_string(line) : std::string{}, message});
    };
    std::optional<Columns> cols;
    int headerLine = 0;
    std::istringstream in(text);
    std::string raw;
    int lineNo = 0;
    while (std::getline(in, raw)) {
        ++lineNo;
        const std::string line = trim(raw);
        if (line.empty())
            continue;
        if (line[0] == '#') {
            const std::string c = trim(line.substr(1));
            const std::vector<std::string> tok = tokens(c);
            if (tok.empty())
                continue;
            if (startsWith(c, "scaleacross-tier:")) {
                const std::string v = trim(c.substr(17));
                if (auto tier = parseTierName(v))
                    t.tier = tier;
                else
                    error(lineNo,
                          "unknown tier '" + v + "' (expected host, building or cross-building)");
            } else if (startsWith(c, "scaleacross-building:")) {
                t.building = trim(c.substr(21));
            } else if (startsWith(c, "scaleacross-link:")) {
                t.link = trim(c.substr(17));
            } else if (startsWith(c, "scaleacross-collective:")) {
                const std::string v = trim(c.substr(23));
                if (auto coll = parseCollectiveName(v))
                    t.collective = coll;
                else
                    error(lineNo, "unknown collective '" + v +
                                      "' (expected all_reduce, all_gather, reduce_scatter, "
                                      "sendrecv or alltoall)");
            } else if (startsWith(c, "Collective test starting:")) {
                if (!t.collective)
                    t.collective = collectiveInName(trim(c.substr(25)));
            } else if (tok[0] == "Rank" && tok.size() >= 2) {
                // "#  Rank  0 Group  0 Pid  41862 on  node-a01 device  0 [0000:18:00] NVIDIA H100"
                // (older versions: no Group; the bus id as [0x18]).
                if (!integer(tok[1])) {
                    error(lineNo, "a '# Rank' line without a rank number");
                    continue;
                }
                const auto on = std::find(tok.begin(), tok.end(), "on");
                if (on == tok.end() || on + 1 == tok.end()) {
                    error(lineNo, "a '# Rank' line without 'on HOST'");
                    continue;
                }
                ++t.ranks;
                if (std::find(t.hosts.begin(), t.hosts.end(), *(on + 1)) == t.hosts.end())
                    t.hosts.push_back(*(on + 1));
                if (t.device.empty())
                    if (const auto close = c.find(']'); close != std::string::npos)
                        t.device = trim(c.substr(close + 1));
            } else if (tok[0] == "size") {
                if (cols) {
                    error(lineNo, "a second result table (the first begins at line " +
                                      std::to_string(headerLine) + "); give one run per file");
                    break;
                }
                cols = columnsOf(tok);
                headerLine = lineNo;
                if (!cols) {
                    error(lineNo, "a column header without 'size' and 'time algbw busbw' "
                                  "columns: not nccl-tests output");
                    break;
                }
            } else if (startsWith(c, "Avg bus bandwidth")) {
                const auto colon = c.find(':');
                const auto v =
                    colon == std::string::npos ? std::nullopt : number(trim(c.substr(colon + 1)));
                if (v)
                    t.avg_busbw_gbs = v;
                else
                    error(lineNo, "an 'Avg bus bandwidth' line without a number");
            }
            continue;
        }
        // NCCL's own log lines (NCCL_DEBUG=INFO/WARN) interleave with the table.
        if (line.find(" NCCL INFO ") != std::string::npos ||
            line.find(" NCCL WARN ") != std::string::npos)
            continue;
        if (!cols) // launcher output before the table (mpirun, srun banners)
            continue;
        const std::vector<std::string> tok = tokens(line);
        if (int(tok.size()) < cols->needed) {
            error(lineNo, "a result row with " + std::to_string(tok.size()) +
                              " columns, the header at line " + std::to_string(headerLine) +
                              " needs " + std::to_string(cols->needed));
            continue;
        }
        NcclTestsRow row;
        row.line = lineNo;
        const auto bytes = integer(tok[std::size_t(cols->size)]);
        if (!bytes || *bytes <= 0) {
            error(lineNo, "size must be a positive integer of bytes, got '" +
                              tok[std::size_t(cols->size)] + "'");
            continue;
        }
        row.bytes = *bytes;
        if (cols->count >= 0)
            row.count = integer(tok[std::size_t(cols->count)]).value_or(0);
        if (cols->type >= 0)
            row.type = tok[std::size_t(cols->type)];
        if (cols->redop >= 0)
            row.redop = tok[std::size_t(cols->redop)];
        bool ok = true;
        auto readGroup = [&](int g, const char* which, NcclTestsResult& r) {
            if (g < 0 || !ok)
                return;
            const auto time = number(tok[std::size_t(g)]);
            const auto alg = number(tok[std::size_t(g + 1)]);
            const auto bus = number(tok[std::size_t(g + 2)]);
            const std::string& w = tok[std::size_t(g + 3)];
            const auto wrong = w == "N/A" ? std::optional<double>(-1) : number(w);
            if (!time || !(*time > 0)) {
                error(lineNo, std::string(which) + " time must be a positive number of us, got '" +
                                  tok[std::size_t(g)] + "'");
                ok = false;
            } else if (!alg || !bus || *alg < 0 || *bus < 0) {
                error(lineNo, std::string(which) + " algbw and busbw must be numbers >= 0, got '" +
                                  tok[std::size_t(g + 1)] + "' and '" + tok[std::size_t(g + 2)] +
                                  "'");
                ok = false;
            } else if (!wrong) {
                error(lineNo,
                      std::string(which) + " #wrong must be a count or N/A, got '" + w + "'");
                ok = false;
            } else {
                r = {*time, *alg, *bus, std::int64_t(*wrong), true};
            }
        };
        readGroup(cols->oop, "out-of-place", row.out_of_place);
        readGroup(cols->ip, "in-place", row.in_place);
        if (ok)
            t.rows.push_back(row);
    }
    if (!t.collective)
        t.collective = collectiveInName(baseName(file));
    if (problems.size() == problemsBefore) {
        if (!cols)
            error(0, "no result table (the '#  size  count  type ...' header): not nccl-tests "
                     "output");
        else if (t.rows.empty())
            error(headerLine, "a result table without rows");
        if (t.ranks == 0)
            error(0, "no '#  Rank N ... on HOST device D' lines: the ranks and hosts are unknown");
        if (!t.collective)
            error(0, "the collective is unknown: no '# Collective test starting:' line, no "
                     "'# scaleacross-collective:' line and none in the file name");
    }
    return t;
}

} // namespace sa
