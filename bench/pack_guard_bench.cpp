// What the pack runtime's guard costs a call (the target is under 2 microseconds). It times
// runtime::Guard::check() on a softmax call's argument stack, accepted and rejected, and with a pack
// folder given (kforge-pack-guard-bench PACK), the whole call of the pack's first operator through the
// dispatcher with the pack loaded, on a shape the pack covers and one it does not (the guard, the boxing
// and the redispatch to the original), against the same call with no pack, on the kernel's device (a
// CUDA pack on the GPU, synchronized around each batch of calls), and the outputs' largest difference.
//
//   kforge-pack-guard-bench [PACK] [--iters N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "pack/pack_reader.h"
#include "runtime/guard.h"
#include "runtime/kforge_runtime.h"

using namespace kforge;

namespace {

template <class F>
double nsPerCall(int iters, F &&f)
{
    std::vector<double> runs;
    for (int r = 0; r < 5; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i)
            f();
        runs.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / iters);
    }
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

pack::PackKernel softmaxKernel()
{
    pack::PackKernel k;
    k.key = "softmax.bench";
    k.atenOp = "aten::_softmax";
    k.arguments = nlohmann::json::array({{{"input", 0}}, {{"int", -1}}, {{"bool", false}}});
    k.inputs = {{"x", DType::F32, {"rows", "cols"}, true, true}};
    k.outputs = {{"y", DType::F32, {"rows", "cols"}, true, true}};
    k.symbols = {{"rows", {1, 4096}}, {"cols", {1, 4096}}};
    return k;
}

} // namespace

int main(int argc, char **argv)
{
    std::string packDir;
    int iters = 200000;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = std::max(1, std::atoi(argv[++i]));
        else
            packDir = argv[i];
    }
    const auto op = c10::Dispatcher::singleton().findSchemaOrThrow("aten::_softmax", "");
    runtime::Guard guard(softmaxKernel(), op.schema(), c10::DeviceType::CPU);
    std::vector<c10::IValue> ok{at::randn({8, 64, 256}), int64_t(-1), false};
    std::vector<c10::IValue> wrongType{at::randn({8, 64, 256}, at::kDouble), int64_t(-1), false};
    std::vector<c10::IValue> wrongLayout{at::randn({256, 512}).t(), int64_t(-1), false};
    runtime::Binding b;
    volatile int sink = 0;
    std::printf("guard check, accepted (f32 [8, 64, 256] as rows x cols): %.0f ns\n",
                nsPerCall(iters, [&] { sink = sink + int(guard.check(ok.data(), b)); }));
    std::printf("guard check, rejected by dtype:                         %.0f ns\n",
                nsPerCall(iters, [&] { sink = sink + int(guard.check(wrongType.data(), b)); }));
    std::printf("guard check, rejected by layout:                        %.0f ns\n",
                nsPerCall(iters, [&] { sink = sink + int(guard.check(wrongLayout.data(), b)); }));
    if (packDir.empty())
        return 0;

    // Whole calls through the dispatcher, with and without the pack, on the kernel's device.
    const auto manifest = pack::readManifest(packDir);
    const auto &k = manifest.kernels.front();
    const auto device = k.backend == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(k.atenOp.c_str(), k.atenOverload.c_str());
    // The smallest covered shape, and one row fewer (more, where the range starts at 1), which the guard
    // rejects: both small, so the call's own work does not drown what the guard and the redispatch cost.
    const auto shapeOf = [&](bool covered) {
        std::vector<int64_t> shape;
        for (const auto &d : k.inputs.front().dims)
            shape.push_back(k.symbols.at(d).min);
        if (!covered) {
            const auto &r = k.symbols.at(k.inputs.front().dims.front());
            shape.front() = r.min > 1 ? r.min - 1 : r.max + 1;
        }
        return shape;
    };
    const auto stackFor = [&](const std::vector<int64_t> &shape) {
        std::vector<c10::IValue> proto;
        int input = 0;
        for (const auto &a : k.arguments) {
            if (a.contains("input")) {
                const auto &t = k.inputs.at(a["input"].get<size_t>());
                std::vector<int64_t> sizes = input++ == 0 ? shape : std::vector<int64_t>{};
                if (sizes.empty())
                    for (const auto &d : t.dims)
                        sizes.push_back(d == "cols" ? shape.back() : k.symbols.at(d).min);
                proto.emplace_back(at::randn(sizes, at::TensorOptions().device(device).dtype(at::kFloat)).to(
                    t.dtype == DType::F16 ? at::kHalf : t.dtype == DType::BF16 ? at::kBFloat16 : at::kFloat));
            } else if (a.contains("int")) {
                proto.emplace_back(a["int"].get<int64_t>());
            } else if (a.contains("bool")) {
                proto.emplace_back(a["bool"].get<bool>());
            } else if (a.contains("double")) {
                proto.emplace_back(a["double"].get<double>());
            } else if (a.contains("str")) {
                proto.emplace_back(a["str"].get<std::string>());
            } else if (a.contains("int_list")) {
                proto.emplace_back(a["int_list"].get<std::vector<int64_t>>());
            } else if (a.contains("sym_list")) {
                proto.emplace_back(std::vector<int64_t>{shape.back()});
            } else {
                proto.emplace_back();
            }
        }
        return proto;
    };
    const auto sync = [&] {
        if (device.is_cuda())
            at::empty({1}, at::TensorOptions().device(device)).cpu(); // waits for the stream
    };
    const int callIters = std::max(1, iters / 100);
    // A softmax is also called as C++ calls it, unboxed (the runtime's kernel is boxed, so the dispatcher
    // boxes the arguments for it); every other operator boxed, as TorchScript calls it.
    const bool unboxed = k.atenOp == "aten::_softmax";
    const auto batch = [&](const std::vector<c10::IValue> &proto) {
        sync();
        const auto t0 = std::chrono::steady_clock::now();
        if (unboxed) {
            const auto &x = proto[0].toTensor();
            for (int i = 0; i < callIters; ++i)
                at::_softmax(x, -1, false);
        } else {
            for (int i = 0; i < callIters; ++i) {
                torch::jit::Stack s(proto.begin(), proto.end());
                handle.callBoxed(s);
            }
        }
        sync();
        return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / callIters;
    };
    const auto firstOutput = [&](const std::vector<c10::IValue> &proto) {
        torch::jit::Stack once(proto.begin(), proto.end());
        handle.callBoxed(once);
        return once.front().toTensor();
    };
    const auto in = stackFor(shapeOf(true)), out = stackFor(shapeOf(false));
    const auto plainY = firstOutput(in);
    std::printf("%s\n", runtime::loadPack(packDir).c_str());
    const auto packY = firstOutput(in);
    runtime::unloadPacks();
    // Rounds of a batch without the pack and a batch with it, interleaved, so a busy machine slows both.
    std::vector<double> plainIn, packIn, plainOut, packOut, extra;
    for (int round = 0; round < 11; ++round) {
        plainIn.push_back(batch(in));
        plainOut.push_back(batch(out));
        runtime::loadPack(packDir);
        packIn.push_back(batch(in));
        packOut.push_back(batch(out));
        runtime::unloadPacks();
        extra.push_back(packOut.back() - plainOut.back());
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::printf("%s on %s, the smallest covered shape: no pack %.0f ns a call, with the pack's kernel %.0f ns; "
                "largest difference of the outputs %.3g\n",
                k.qualifiedOp().c_str(), device.str().c_str(), median(plainIn), median(packIn),
                (packY.to(at::kDouble) - plainY.to(at::kDouble)).abs().max().item<double>());
    std::printf("%s outside the pack: no pack %.0f ns, with the pack (guard, then the original) %.0f ns; the pack adds %.0f ns a call "
                "(median of 11 interleaved rounds of %d %s calls)\n",
                k.qualifiedOp().c_str(), median(plainOut), median(packOut), median(extra), callIters, unboxed ? "unboxed" : "boxed");
    runtime::loadPack(packDir);
    batch(in);
    batch(out);
    std::printf("counters: %s\n", runtime::countersJson().c_str());
    return sink == -1;
}
