#pragma once
// The declarative launch plan of a CUDA candidate: which kernels to launch, in order, with grid, block
// and dynamic shared memory as integer expressions over the card's shape symbols, their arguments, and
// the workspace buffers the worker allocates for them. No generated host code runs; the worker reads
// this and launches it.
//
//   {"kernels":[{"name":"softmax_rows","grid":["ceil_div(rows, 4)",1,1],"block":[128,1,1],
//                "shared_bytes":"0","args":["in:x","out:y","sym:rows","sym:cols","ws:tmp"]}],
//    "workspace":[{"name":"tmp","bytes":"rows*4"}]}
//
// "cluster":[2,1,1] (optional, constants) launches thread-block clusters of that shape (sm_90): the
// grid must divide by it and a cluster has at most 16 blocks (more than 8, the portable size, only
// where the device allows it).
//
// Arguments: in:<input> / out:<output> / ws:<workspace> pass a device pointer; sym:<symbol> passes the
// symbol's extent as a 64-bit integer; i64:<expr> and i32:<expr> pass an expression's value; f32:<number>
// passes a float. Expressions: integers, symbols, + - * / % (C semantics, 64-bit, overflow is an
// error), parentheses, ceil_div(a, b), min(a, b, ...), max(a, b, ...). Besides the card's shape symbols,
// expressions may name sm_count, the device's number of SMs (a persistent grid: "min(rows, sm_count * 4)").
//
// Pure C++: no CUDA, no torch, so it is tested everywhere.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"

namespace kforge::worker {

// Evaluates one expression; throws Error naming the expression and what is wrong with it.
int64_t evalExpression(const std::string &expr, const ShapeBindings &symbols);

struct PlanArg {
    enum class Kind { Input, Output, Workspace, Symbol, I64, I32, F32 };
    Kind kind = Kind::Input;
    std::string text;   // as written, for messages
    std::string name;   // tensor, workspace or symbol name; expression for I64/I32; number for F32
    int index = -1;     // input, output or workspace index
};

struct PlanKernel {
    std::string name;
    std::array<std::string, 3> grid{"1", "1", "1"};
    std::array<std::string, 3> block{"1", "1", "1"};
    std::string sharedBytes = "0";
    std::array<int, 3> cluster{1, 1, 1};
    std::vector<PlanArg> args;
};

struct PlanWorkspace {
    std::string name;
    std::string bytes;
};

struct LaunchPlan {
    std::vector<PlanKernel> kernels;
    std::vector<PlanWorkspace> workspace;
};

// What the device allows; the defaults are Hopper's (the backend reads the real ones off the device).
struct DeviceLimits {
    int maxThreadsPerBlock = 1024;
    std::array<int64_t, 3> maxBlock{1024, 1024, 64};
    std::array<int64_t, 3> maxGrid{2147483647, 65535, 65535};
    int64_t maxSharedPerBlockOptin = 232448; // 227 KiB on sm_90
    int maxClusterBlocks = 16;               // sm_90's non-portable cluster size; 0 where clusters are unsupported
    int64_t maxWorkspaceBytes = int64_t(16) << 30;
    int64_t smCount = 132; // bound to the symbol sm_count in expressions
};

// Parses and checks the plan's structure against the card (kernel names, argument tensors, symbols,
// workspaces). Throws Error with a message that says which kernel and which field is wrong.
LaunchPlan parseLaunchPlan(const nlohmann::json &plan, const OperatorCard &card);

struct ResolvedArg {
    PlanArg::Kind kind = PlanArg::Kind::Input;
    int index = -1;
    int64_t value = 0; // Symbol, I64, I32
    float f32 = 0;     // F32
};

struct ResolvedKernel {
    std::string name;
    std::array<uint32_t, 3> grid{1, 1, 1};
    std::array<uint32_t, 3> block{1, 1, 1};
    uint32_t sharedBytes = 0;
    std::array<uint32_t, 3> cluster{1, 1, 1};
    std::vector<ResolvedArg> args;
    int64_t threadsPerBlock() const { return int64_t(block[0]) * block[1] * block[2]; }
    int64_t clusterBlocks() const { return int64_t(cluster[0]) * cluster[1] * cluster[2]; }
};

struct ResolvedPlan {
    std::vector<ResolvedKernel> kernels;
    std::vector<int64_t> workspaceBytes;
};

// Evaluates every expression at one shape and checks the result against the device's limits. Throws
// Error with the kernel, the field, the value and the limit.
ResolvedPlan resolveLaunchPlan(const LaunchPlan &plan, const ShapeBindings &shape, const DeviceLimits &limits = {});

} // namespace kforge::worker
