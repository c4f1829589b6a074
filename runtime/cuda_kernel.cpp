#include "runtime/cuda_kernel.h"

#include <fstream>
#include <sstream>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "util/error.h"

namespace kforge::runtime {

namespace drv = worker::cudadrv;

namespace {

// Makes PyTorch's primary context of the device current on this thread for the scope, if it is not.
class ContextScope {
public:
    explicit ContextScope(CUcontext ctx)
    {
        CUcontext cur = nullptr;
        cuCtxGetCurrent(&cur);
        if (cur != ctx && cuCtxPushCurrent(ctx) == CUDA_SUCCESS)
            m_pushed = true;
    }
    ~ContextScope()
    {
        if (m_pushed) {
            CUcontext popped = nullptr;
            cuCtxPopCurrent(&popped);
        }
    }

private:
    bool m_pushed = false;
};

} // namespace

std::string cudaArchOfCurrentDevice()
{
    if (cuInit(0) != CUDA_SUCCESS)
        return {};
    int count = 0;
    if (cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1)
        return {};
    int index = 0;
    if (c10::cuda::device_count() > 0)
        index = c10::cuda::current_device();
    try {
        return drv::queryDevice(index).arch();
    } catch (const Error &) {
        return {};
    }
}

CudaKernel::CudaKernel(const pack::PackKernel &spec, const std::string &cubinPath) : m_key(spec.key)
{
    std::ifstream in(cubinPath, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    if (!in)
        throw Error("cannot read the cubin " + cubinPath);
    m_cubin = buf.str();
    const auto specs = [](const std::vector<pack::TensorGuard> &ts) {
        std::vector<TensorSpec> out;
        for (const auto &t : ts)
            out.push_back({t.name, t.dims, t.dtype});
        return out;
    };
    m_card.key = spec.key;
    m_card.inputs = specs(spec.inputs);
    m_card.outputs = specs(spec.outputs);
    for (const auto &[sym, r] : spec.symbols)
        m_card.shape[sym] = r.max;
    m_plan = worker::parseLaunchPlan(spec.launch, m_card);
}

CudaKernel::~CudaKernel()
{
    // Modules are unloaded in the context they were loaded in.
    for (auto &[index, d] : m_devices) {
        ContextScope scope(d->context);
        d->module.reset();
        cuDevicePrimaryCtxRelease(d->info.device);
    }
}

const CudaKernel::OnDevice *CudaKernel::onDevice(int index) const
{
    std::lock_guard lock(m_mutex);
    if (const auto it = m_devices.find(index); it != m_devices.end())
        return it->second.get();
    auto d = std::make_unique<OnDevice>();
    d->info = drv::queryDevice(index);
    drv::check(cuDevicePrimaryCtxRetain(&d->context, d->info.device), "cuDevicePrimaryCtxRetain");
    ContextScope scope(d->context);
    d->module = std::make_unique<drv::Module>();
    drv::check(d->module->load(m_cubin), "loading the cubin of " + m_key + " on " + d->info.arch());
    for (const auto &k : m_plan.kernels) {
        CUfunction f = d->module->function(k.name);
        if (!f)
            throw Error("the cubin of " + m_key + " has no kernel " + k.name);
        d->functions.push_back(f);
    }
    return (m_devices[index] = std::move(d)).get();
}

bool CudaKernel::launch(const std::vector<const at::Tensor *> &inputs, const std::vector<const at::Tensor *> &outputs, const Guard &guard,
                        const Binding &b) const
{
    const int index = b.device < 0 ? 0 : b.device;
    c10::cuda::CUDAGuard deviceGuard(index);
    const OnDevice *d = nullptr;
    try {
        d = onDevice(index);
    } catch (const Error &) {
        return false;
    }
    ShapeBindings shape;
    for (size_t i = 0; i < guard.symbols().size(); ++i)
        if (b.bound & (1u << i))
            shape[guard.symbols()[i]] = b.value[i];
    worker::ResolvedPlan plan;
    try {
        plan = worker::resolveLaunchPlan(m_plan, shape, d->info.limits);
        ContextScope scope(d->context);
        drv::checkAgainstFunctions(plan, d->functions, *d->module, d->info.limits);
    } catch (const Error &) {
        return false;
    }
    drv::PlanPointers ptrs;
    for (const auto *t : inputs)
        ptrs.inputs.push_back(CUdeviceptr(t->data_ptr()));
    for (const auto *t : outputs)
        ptrs.outputs.push_back(CUdeviceptr(t->data_ptr()));
    std::vector<at::Tensor> workspace; // from the caching allocator, freed in stream order after the launch
    for (const auto bytes : plan.workspaceBytes) {
        workspace.push_back(at::empty({std::max<int64_t>(bytes, 1)}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, index)));
        ptrs.workspace.push_back(CUdeviceptr(workspace.back().data_ptr()));
    }
    const auto stream = reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream(index).stream());
    ContextScope scope(d->context);
    std::string failed;
    const CUresult r = drv::launchPlan(plan, d->functions, ptrs, stream, &failed);
    if (r == CUDA_SUCCESS)
        return true;
    if (drv::isSticky(r))
        TORCH_CHECK(false, "kforge pack kernel ", m_key, " (", failed, "): ", drv::errorName(r), "; the CUDA context is unusable");
    return false;
}

} // namespace kforge::runtime
