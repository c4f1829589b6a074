#include "worker/cuda/cuda_driver.h"

#include <cstring>

namespace kforge::worker::cudadrv {

std::string errorName(CUresult r)
{
    const char *name = nullptr, *text = nullptr;
    cuGetErrorName(r, &name);
    cuGetErrorString(r, &text);
    return std::string(name ? name : "CUDA_ERROR_" + std::to_string(int(r))) + (text ? std::string(" (") + text + ")" : "");
}

bool isSticky(CUresult r)
{
    switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return true;
    default:
        return false;
    }
}

void check(CUresult r, const std::string &what)
{
    if (r != CUDA_SUCCESS)
        throw DriverError(r, what);
}

DeviceInfo queryDevice(int index)
{
    DeviceInfo d;
    d.index = index;
    check(cuDeviceGet(&d.device, index), "cuDeviceGet(" + std::to_string(index) + ")");
    char name[256] = {};
    cuDeviceGetName(name, sizeof name - 1, d.device);
    d.name = name;
    auto attr = [&](CUdevice_attribute a) {
        int v = 0;
        cuDeviceGetAttribute(&v, a, d.device);
        return v;
    };
    d.major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    d.l2Bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    cuDeviceTotalMem(&d.memoryBytes, d.device);
    d.limits.maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d.limits.maxBlock = {attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X), attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y),
                         attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)};
    d.limits.maxGrid = {attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
                        attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
    d.limits.maxSharedPerBlockOptin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    // 8 blocks is the portable cluster size; sm_90 allows 16 to kernels that opt in (checkAgainstFunctions).
    d.limits.maxClusterBlocks = attr(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) ? 16 : 0;
    // Workspaces: at most a quarter of the device, so verification keeps room for inputs and references.
    d.limits.maxWorkspaceBytes = int64_t(d.memoryBytes / 4);
    d.limits.smCount = d.sms;
    return d;
}

Module::~Module()
{
    if (m_module)
        cuModuleUnload(m_module);
}

CUresult Module::load(const std::string &cubin)
{
    return cuModuleLoadData(&m_module, cubin.data());
}

CUfunction Module::function(const std::string &name) const
{
    CUfunction f = nullptr;
    if (!m_module || cuModuleGetFunction(&f, m_module, name.c_str()) != CUDA_SUCCESS)
        return nullptr;
    return f;
}

KernelAttributes Module::attributes(CUfunction f) const
{
    KernelAttributes a;
    cuFuncGetAttribute(&a.maxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    cuFuncGetAttribute(&a.staticShared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    cuFuncGetAttribute(&a.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    cuFuncGetAttribute(&a.localBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
    for (size_t i = 0; i < 256; ++i) {
        size_t offset = 0, size = 0;
        if (cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS)
            break;
        a.paramSizes.push_back(size);
    }
    return a;
}

namespace {

size_t argSize(PlanArg::Kind k)
{
    return k == PlanArg::Kind::I32 || k == PlanArg::Kind::F32 ? 4 : 8;
}

const char *argKindName(PlanArg::Kind k)
{
    switch (k) {
    case PlanArg::Kind::Input: return "in: (a pointer)";
    case PlanArg::Kind::Output: return "out: (a pointer)";
    case PlanArg::Kind::Workspace: return "ws: (a pointer)";
    case PlanArg::Kind::Symbol: return "sym: (a 64-bit integer)";
    case PlanArg::Kind::I64: return "i64: (a 64-bit integer)";
    case PlanArg::Kind::I32: return "i32: (a 32-bit integer)";
    case PlanArg::Kind::F32: return "f32: (a float)";
    }
    return "?";
}

} // namespace

void checkAgainstFunctions(const ResolvedPlan &plan, const std::vector<CUfunction> &functions, const Module &module,
                           const DeviceLimits &limits)
{
    for (size_t i = 0; i < plan.kernels.size(); ++i) {
        const auto &k = plan.kernels[i];
        const auto a = module.attributes(functions[i]);
        const std::string where = "launch plan: kernel " + std::to_string(i) + " '" + k.name + "'";
        if (!a.paramSizes.empty() || k.args.empty()) {
            if (a.paramSizes.size() != k.args.size())
                throw Error(where + " passes " + std::to_string(k.args.size()) + " arguments; the kernel takes "
                            + std::to_string(a.paramSizes.size()));
            for (size_t p = 0; p < k.args.size(); ++p)
                if (a.paramSizes[p] != argSize(k.args[p].kind))
                    throw Error(where + " argument " + std::to_string(p) + " is " + argKindName(k.args[p].kind)
                                + " but the kernel's parameter " + std::to_string(p) + " has " + std::to_string(a.paramSizes[p]) + " bytes");
        }
        if (k.threadsPerBlock() > a.maxThreadsPerBlock)
            throw Error(where + " asks for " + std::to_string(k.threadsPerBlock()) + " threads per block; with "
                        + std::to_string(a.registers) + " registers per thread (or its __launch_bounds__) it can run at most "
                        + std::to_string(a.maxThreadsPerBlock));
        if (int64_t(k.sharedBytes) + a.staticShared > limits.maxSharedPerBlockOptin)
            throw Error(where + " needs " + std::to_string(a.staticShared) + " bytes of static and " + std::to_string(k.sharedBytes)
                        + " of dynamic shared memory; this device allows " + std::to_string(limits.maxSharedPerBlockOptin)
                        + " per block");
        if (k.clusterBlocks() > 8) {
            const CUresult r = cuFuncSetAttribute(functions[i], CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
            if (r != CUDA_SUCCESS)
                throw Error(where + " asks for clusters of " + std::to_string(k.clusterBlocks()) + " blocks, more than the portable 8, "
                            + "and the device refused: " + errorName(r));
        }
        if (int64_t(k.sharedBytes) > 48 * 1024 - a.staticShared) {
            const CUresult r = cuFuncSetAttribute(functions[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(k.sharedBytes));
            if (r != CUDA_SUCCESS)
                throw Error(where + " could not be given " + std::to_string(k.sharedBytes) + " bytes of dynamic shared memory: " + errorName(r));
        }
    }
}

CUresult launchPlan(const ResolvedPlan &plan, const std::vector<CUfunction> &functions, const PlanPointers &ptrs,
                    CUstream stream, std::string *failed)
{
    for (size_t i = 0; i < plan.kernels.size(); ++i) {
        const auto &k = plan.kernels[i];
        // One 8-byte slot per argument; the driver reads each parameter's size from its slot.
        std::vector<uint64_t> slots(k.args.size(), 0);
        std::vector<void *> params(k.args.size());
        for (size_t a = 0; a < k.args.size(); ++a) {
            const auto &arg = k.args[a];
            switch (arg.kind) {
            case PlanArg::Kind::Input: slots[a] = ptrs.inputs.at(size_t(arg.index)); break;
            case PlanArg::Kind::Output: slots[a] = ptrs.outputs.at(size_t(arg.index)); break;
            case PlanArg::Kind::Workspace: slots[a] = ptrs.workspace.at(size_t(arg.index)); break;
            case PlanArg::Kind::Symbol:
            case PlanArg::Kind::I64: {
                const int64_t v = arg.value;
                std::memcpy(&slots[a], &v, 8);
                break;
            }
            case PlanArg::Kind::I32: {
                const int32_t v = int32_t(arg.value);
                std::memcpy(&slots[a], &v, 4);
                break;
            }
            case PlanArg::Kind::F32: std::memcpy(&slots[a], &arg.f32, 4); break;
            }
            params[a] = &slots[a];
        }
        CUresult r = CUDA_SUCCESS;
        if (k.clusterBlocks() > 1) {
            // Thread-block clusters are a launch attribute; only the extended launch takes it.
            CUlaunchAttribute attr{};
            attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.x = k.cluster[0];
            attr.value.clusterDim.y = k.cluster[1];
            attr.value.clusterDim.z = k.cluster[2];
            CUlaunchConfig cfg{};
            cfg.gridDimX = k.grid[0];
            cfg.gridDimY = k.grid[1];
            cfg.gridDimZ = k.grid[2];
            cfg.blockDimX = k.block[0];
            cfg.blockDimY = k.block[1];
            cfg.blockDimZ = k.block[2];
            cfg.sharedMemBytes = k.sharedBytes;
            cfg.hStream = stream;
            cfg.attrs = &attr;
            cfg.numAttrs = 1;
            r = cuLaunchKernelEx(&cfg, functions[i], params.empty() ? nullptr : params.data(), nullptr);
        } else {
            r = cuLaunchKernel(functions[i], k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.sharedBytes,
                               stream, params.empty() ? nullptr : params.data(), nullptr);
        }
        if (r != CUDA_SUCCESS) {
            if (failed)
                *failed = k.name;
            return r;
        }
    }
    return CUDA_SUCCESS;
}

Graph::~Graph()
{
    if (m_exec)
        cuGraphExecDestroy(m_exec);
    if (m_graph)
        cuGraphDestroy(m_graph);
}

CUresult Graph::capture(const ResolvedPlan &plan, const std::vector<CUfunction> &functions, const PlanPointers &ptrs, CUstream stream)
{
    CUresult r = cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != CUDA_SUCCESS)
        return r;
    const CUresult launched = launchPlan(plan, functions, ptrs, stream);
    r = cuStreamEndCapture(stream, &m_graph);
    if (launched != CUDA_SUCCESS)
        return launched;
    if (r != CUDA_SUCCESS)
        return r;
    return cuGraphInstantiate(&m_exec, m_graph, 0);
}

} // namespace kforge::worker::cudadrv
