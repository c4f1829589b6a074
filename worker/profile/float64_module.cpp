#include "worker/profile/float64_module.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>

namespace kforge::worker {

namespace {

bool floatingCode(int64_t code)
{
    return code >= 0 && code < int64_t(c10::NumScalarTypes) && at::isFloatingType(static_cast<at::ScalarType>(code));
}

int retarget(torch::jit::Graph &g, torch::jit::Block *block, at::ScalarType to)
{
    int changed = 0;
    for (auto *n : block->nodes()) {
        for (auto *inner : n->blocks())
            changed += retarget(g, inner, to);
        const auto *schema = n->maybeSchema();
        if (!schema)
            continue;
        const auto &args = schema->arguments();
        for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
            if (args[i].name() != "dtype")
                continue;
            const auto c = torch::jit::toIValue(n->input(i));
            if (!c || !c->isInt() || !floatingCode(c->toInt()) || c->toInt() == int64_t(to))
                continue;
            torch::jit::WithInsertPoint at(n);
            n->replaceInput(i, g.insertConstant(int64_t(to)));
            ++changed;
        }
    }
    return changed;
}

} // namespace

int retargetFloatingDtypes(torch::jit::Module &module, at::ScalarType to)
{
    int changed = 0;
    for (auto m : module.modules())
        for (auto &method : m.get_methods()) {
            auto g = method.graph();
            changed += retarget(*g, g->block(), to);
        }
    return changed;
}

} // namespace kforge::worker
