#pragma once
// The comparison of selected nodes as plain rows, one per node: timings (median and spread), the
// kernel's resources as ptxas reported them in the compile log (registers, static shared memory,
// spills; the launch plan's dynamic shared memory beside it), the roofline fraction and the status.
// Pure functions, so tests/tst_gui.cpp checks them as a table without a widget.
#include <optional>
#include <string>
#include <vector>

#include "store/session_store.h"

namespace kforge::ui {

// The worst of a candidate's kernels as ptxas reported them ("ptxas info : Used 40 registers, ...
// 1024 bytes smem", "N bytes spill stores, M bytes spill loads"); nullopt when the log has none (a
// CPU candidate, a failed compile).
struct KernelUsage {
    int kernels = 0;
    int registers = 0;          // the most any kernel uses
    long long sharedBytes = 0;  // the most static shared memory
    long long spillBytes = 0;   // stores plus loads, summed over kernels
};
std::optional<KernelUsage> parseKernelUsage(const std::string &compileLog);

struct CompareRow {
    long long id = 0;
    std::string status;
    std::string templateId;
    double medianUs = 0; // 0: not timed
    double spread = 0;   // half the inter-quartile range over the median
    int samples = 0;
    double speedup = 0;
    double rooflineFraction = 0; // floor over median; 0: unknown
    std::optional<KernelUsage> usage;
    std::string dynamicShared; // the launch plan's shared_bytes expressions, "" when none
};

CompareRow compareRow(const NodeDetail &detail);
std::vector<CompareRow> compareRows(const std::vector<NodeDetail> &details);

// The table's columns and how each row reads in them (what the model shows and tests compare).
enum class CompareColumn { Node, Status, Template, Median, Spread, Speedup, Registers, Shared, Spills, Roofline, Count };
std::string compareHeader(CompareColumn column);
std::string compareCell(const CompareRow &row, CompareColumn column);

} // namespace kforge::ui
