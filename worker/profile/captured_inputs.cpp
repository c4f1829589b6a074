#include "worker/profile/captured_inputs.h"

#include <map>
#include <mutex>
#include <sys/stat.h>

#include "util/error.h"
#include "worker/profile/model_inputs.h"
#include "worker/torch/reference.h"

namespace kforge::worker {

namespace {

// The last container read, kept: every evaluation of a card reads the same file, and a model's samples
// can be gigabytes. A file changed since (size or time) is read again.
struct Cached {
    std::string path;
    off_t size = -1;
    int64_t mtime = -1;
    std::map<std::string, at::Tensor> buffers;
};

const std::map<std::string, at::Tensor> &buffersOf(const std::string &path)
{
    static std::mutex lock;
    static Cached cache;
    std::lock_guard g(lock);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw Error("the captured inputs " + path + " are missing (profile the workload again to write them)");
    if (cache.path == path && cache.size == st.st_size && cache.mtime == int64_t(st.st_mtime))
        return cache.buffers;
    auto module = loadModule(path, "the captured inputs");
    cache = Cached{path, st.st_size, int64_t(st.st_mtime), {}};
    for (const auto &b : module.named_buffers(false))
        cache.buffers[b.name] = b.value;
    return cache.buffers;
}

} // namespace

std::vector<at::Tensor> capturedInputs(const OperatorCard &card, at::Device device)
{
    const auto &buffers = buffersOf(card.capturedFile);
    std::vector<at::Tensor> out;
    for (size_t i = 0; i < card.inputs.size(); ++i) {
        const auto &spec = card.inputs[i];
        const auto name = card.capturedPrefix + std::to_string(i);
        const auto it = buffers.find(name);
        if (it == buffers.end())
            throw Error("the captured inputs " + card.capturedFile + " have no tensor '" + name + "' for input '" + spec.name + "'");
        const auto sizes = card.sizes(spec, card.shape);
        const auto &t = it->second;
        if (t.numel() != card.numel(spec, card.shape))
            throw Error("the captured tensor '" + name + "' has " + std::to_string(t.numel()) + " elements; input '" + spec.name + "' of card '"
                        + card.key + "' has " + std::to_string(card.numel(spec, card.shape)));
        if (t.scalar_type() != scalarType(spec.dtype))
            throw Error("the captured tensor '" + name + "' is " + std::string(c10::toString(t.scalar_type())) + "; input '" + spec.name
                        + "' of card '" + card.key + "' is " + dtypeName(spec.dtype));
        out.push_back(t.contiguous().reshape(sizes).to(device, /*non_blocking=*/false, /*copy=*/true));
    }
    return out;
}

} // namespace kforge::worker
