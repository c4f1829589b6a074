// The scan templates, CPU and CUDA, for every family of core/ops/scan_ops.h: one kernel text per kind
// (cpu_cumsum.cpp; on CUDA a block per row, cumsum_block_scan.cu, and chunks with a decoupled look-back,
// scan_lookback.cu, over scan_common.cuh) whose combine, direction, exclusivity and mask come from the
// family as defines.
#include <string>

#include "ops/scan_ops.h"
#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// SCAN_MASK: 0 without a mask, 1 for a bool mask (a byte per element), 2 for a mask of x's dtype.
int maskCode(const ScanOp &op, const OperatorCard &card)
{
    if (!op.masked || card.inputs.size() < 2)
        return 0;
    return card.inputs[1].dtype == DType::Bool ? 1 : 2;
}

bool maskFits(const ScanOp &op, const OperatorCard &card)
{
    if (!op.masked)
        return card.inputs.size() == 1;
    return card.inputs.size() == 2 && (card.inputs[1].dtype == DType::Bool || card.inputs[1].dtype == card.inputs[0].dtype);
}

std::string scanDefines(const ScanOp &op, const OperatorCard &card)
{
    return "#define SCAN_PROD " + std::to_string(int(op.product)) + "\n#define SCAN_REVERSE " + std::to_string(int(op.reverse))
           + "\n#define SCAN_EXCLUSIVE " + std::to_string(int(op.exclusive)) + "\n#define SCAN_MASK " + std::to_string(maskCode(op, card)) + "\n";
}

KernelTemplate cpuScan(const ScanOp &op)
{
    KernelTemplate t;
    t.id = "cpu." + op.family + ".rows";
    t.family = op.family;
    t.backend = "cpu";
    t.description = op.description + " per row in ACC precision";
    // A running product drifts by about sqrt(cols) float32 roundings, and ATen's CPU scan accumulates in
    // double: a product starts there (float is rejected on rows of 65536), a sum in float.
    t.space = {{"acc", op.product ? std::vector<J>{"double", "float"} : std::vector<J>{"float", "double"}}};
    t.valid = [&op](const J &, const OperatorCard &card) {
        return card.inputs.front().dtype == DType::F32 && maskFits(op, card);
    };
    t.render = [&op, id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + templateSource("cpu_rows.h") + scanDefines(op, card) + templateSource("cpu_cumsum.cpp");
    };
    return t;
}

std::string cudaScanSource(const std::string &id, const J &p, const ScanOp &op, const OperatorCard &card, const char *kernelFile)
{
    return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + cudaPackHelpers() + scanDefines(op, card)
           + templateSource("scan_common.cuh") + templateSource(kernelFile);
}

bool packFits(const J &p, const OperatorCard &card)
{
    return p.value("vec", 1) * dtypeSize(card.inputs.front().dtype) <= 16;
}

// A row per block: the GPU is full when there are many rows (KernelBench's 32768).
KernelTemplate cudaScan(const ScanOp &op)
{
    KernelTemplate t;
    t.id = "cuda." + op.family + ".block_scan";
    t.family = op.family;
    t.backend = "cuda";
    t.description = "a block per row, " + op.description + " of BLOCK*VEC elements per step with a running carry, "
                    + "VEC-element packs on aligned rows, optionally the next step's loads in flight";
    t.space = {{"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"prefetch", {0, 1}}};
    t.valid = [&op](const J &p, const OperatorCard &card) {
        return packFits(p, card) && maskFits(op, card);
    };
    t.render = [&op, id = t.id](const J &p, const OperatorCard &card) {
        return cudaScanSource(id, p, op, card, "cumsum_block_scan.cu");
    };
    // 16-byte packs, and the next step's loads issued before this step's barriers: a row of 32768 takes
    // 64 steps at BLOCK 128 (the best block on the H200 for rows of 65536 before packs), each waiting twice.
    // Fewer rows than fill the device's thread slots at 128 take larger blocks: each row's serial chain of
    // steps is then shorter (1024 rows of 16384 on the H200: 5.44x at 1024 threads, 4.91x at 128; 4096
    // rows of 4096: 5.08x at 128, 4.31x at 1024).
    t.seed = [](const OperatorCard &card) {
        const int64_t rows = card.shape.at("rows");
        int block = 128;
        while (block < 1024 && rows * block < kCudaResidentThreads)
            block *= 2;
        return J{{"block", block}, {"vec", cudaVecFor(card)}, {"prefetch", 1}};
    };
    t.launch = [&op](const J &p, const OperatorCard &) {
        return cudaOneKernelPlan("kf_cumsum", {"rows", 1, 1}, p.at("block"), {"in:x", op.masked ? (op.weighted ? "in:w" : "in:mask") : "in:x", "out:y", "sym:rows", "sym:cols"});
    };
    return t;
}

// Chunks of a row across blocks with a decoupled look-back: for few long rows, which a block per row
// leaves on a few SMs. Two kernels: the posts and the ticket cleared, then the chunks.
KernelTemplate cudaLookback(const ScanOp &op)
{
    KernelTemplate t;
    t.id = "cuda." + op.family + ".lookback";
    t.family = op.family;
    t.backend = "cuda";
    t.description = "rows cut into chunks of BLOCK*VEC*STEPS elements, a block per chunk in ticket order, " + op.description
                    + " of the chunk in registers, then a decoupled look-back over the posts of the chunks before it";
    t.space = {{"block", {256, 512}}, {"vec", {1, 2, 4, 8}}, {"steps", {1, 2, 4}}};
    // Two chunk-sized register arrays per thread (values and results): up to 16 elements each fit the
    // 64 registers a 512-thread block leaves with two blocks per SM.
    t.valid = [&op](const J &p, const OperatorCard &card) {
        return packFits(p, card) && maskFits(op, card) && p.value("vec", 1) * p.value("steps", 1) <= 16;
    };
    t.render = [&op, id = t.id](const J &p, const OperatorCard &card) { return cudaScanSource(id, p, op, card, "scan_lookback.cu"); };
    // 16 KiB chunks of 16-byte packs.
    t.seed = [](const OperatorCard &card) {
        const int vec = cudaVecFor(card);
        return J{{"block", 256}, {"vec", vec}, {"steps", 16 / vec}};
    };
    t.launch = [&op](const J &p, const OperatorCard &) {
        const int chunk = p.at("block").get<int>() * p.at("vec").get<int>() * p.at("steps").get<int>();
        const std::string chunks = "rows * ceil_div(cols, " + std::to_string(chunk) + ")";
        J plan = cudaOneKernelPlan("kf_scan_lookback", {chunks, 1, 1}, p.at("block"),
                                   {"in:x", op.masked ? (op.weighted ? "in:w" : "in:mask") : "in:x", "out:y", "ws:post", "ws:ticket", "sym:rows", "sym:cols"}, "0", 1,
                                   {{{"name", "post"}, {"bytes", chunks + " * 8"}}, {{"name", "ticket"}, {"bytes", "4"}}});
        const J reset = cudaOneKernelPlan("kf_scan_reset", {"ceil_div(" + chunks + ", 256)", 1, 1}, 256, {"ws:post", "ws:ticket", "i64:" + chunks});
        plan["kernels"].insert(plan["kernels"].begin(), reset["kernels"][0]);
        return plan;
    };
    return t;
}

} // namespace

void addScanTemplates(TemplateLibrary &lib)
{
    for (const auto &op : scanOps()) {
        lib.add(cpuScan(op));
        lib.add(cudaScan(op));
        lib.add(cudaLookback(op));
    }
}

} // namespace kforge
