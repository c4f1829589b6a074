// What the pack runtime's guard costs a call (the target is under 2 microseconds). It times
// runtime::Guard::check() on a softmax call's argument stack, accepted and rejected, and with a pack
// folder given (kforge-pack-guard-bench PACK), the whole call of the pack's first operator through the
// dispatcher with the pack loaded, on a shape the pack covers and one it does not (the guard, the boxing
// and the redispatch to the original), against the same call with no pack.
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

    // Whole calls through the dispatcher, with and without the pack.
    const auto manifest = pack::readPack(packDir, {});
    const auto &k = manifest.kernels.front();
    const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(k.atenOp.c_str(), k.atenOverload.c_str());
    std::vector<int64_t> covered, outside;
    for (const auto &d : k.inputs.front().dims) {
        covered.push_back(k.symbols.at(d).min);
        outside.push_back(k.symbols.at(d).max + 1);
    }
    const int callIters = std::max(1, iters / 100);
    const auto call = [&](const std::vector<int64_t> &shape) {
        std::vector<c10::IValue> proto;
        for (const auto &a : k.arguments) {
            if (a.contains("input"))
                proto.emplace_back(at::randn(shape));
            else if (a.contains("int"))
                proto.emplace_back(a["int"].get<int64_t>());
            else if (a.contains("bool"))
                proto.emplace_back(a["bool"].get<bool>());
            else if (a.contains("double"))
                proto.emplace_back(a["double"].get<double>());
            else if (a.contains("str"))
                proto.emplace_back(a["str"].get<std::string>());
            else
                proto.emplace_back();
        }
        return nsPerCall(callIters, [&] {
            torch::jit::Stack s(proto.begin(), proto.end());
            handle.callBoxed(s);
        });
    };
    const double plainIn = call(covered), plainOut = call(outside);
    std::printf("%s\n", runtime::loadPack(packDir).c_str());
    const double packIn = call(covered), packOut = call(outside);
    std::printf("%s at %s: no pack %.0f ns, with the pack's kernel %.0f ns\n", k.qualifiedOp().c_str(), at::IntArrayRef(covered).vec().size() ? "the smallest covered shape" : "", plainIn, packIn);
    std::printf("%s outside the pack: no pack %.0f ns, with the pack (guard, then the original) %.0f ns: %+.0f ns\n",
                k.qualifiedOp().c_str(), plainOut, packOut, packOut - plainOut);
    std::printf("counters: %s\n", runtime::countersJson().c_str());
    return sink == -1;
}
