#include "runtime/cpu_kernel.h"

#include <cstring>
#include <dlfcn.h>

#include "protocol/cpu_abi.h"
#include "util/error.h"

namespace {

thread_local const std::vector<std::string> *tlsNames = nullptr;
thread_local const int64_t *tlsValues = nullptr;

} // namespace

// A kernel resolves kforge_symbol from the process. The runtime is loaded by Python with RTLD_LOCAL, so
// before loading a kernel it makes its own symbols global (CpuKernel's constructor).
extern "C" __attribute__((visibility("default"))) int64_t kforge_symbol(const char *name)
{
    if (!tlsNames || !name)
        return -1;
    for (size_t i = 0; i < tlsNames->size(); ++i)
        if ((*tlsNames)[i] == name)
            return tlsValues[i];
    return -1;
}

namespace kforge::runtime {

namespace {

void exportOwnSymbols()
{
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void *>(&kforge_symbol), &info) && info.dli_fname)
        if (void *self = ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
            ::dlclose(self); // the promotion to global stays; this only drops the extra reference
}

} // namespace

CpuKernel::CpuKernel(const std::string &sharedObject)
{
    exportOwnSymbols();
    ::dlerror();
    m_handle = ::dlopen(sharedObject.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m_handle) {
        const char *why = ::dlerror();
        throw Error("cannot load the CPU kernel " + sharedObject + ": " + (why ? why : "dlopen failed"));
    }
    m_entry = reinterpret_cast<Entry>(::dlsym(m_handle, kCpuEntryPoint));
    if (!m_entry) {
        ::dlclose(m_handle);
        m_handle = nullptr;
        throw Error("the CPU kernel " + sharedObject + " has no " + kCpuEntryPoint);
    }
}

CpuKernel::~CpuKernel()
{
    if (m_handle)
        ::dlclose(m_handle);
}

int CpuKernel::call(const KfTensor *inputs, int nInputs, KfTensor *outputs, int nOutputs, const std::vector<std::string> *names,
                    const int64_t *values) const
{
    const auto *savedNames = tlsNames;
    const auto *savedValues = tlsValues;
    tlsNames = names;
    tlsValues = values;
    const int rc = m_entry(inputs, nInputs, outputs, nOutputs);
    tlsNames = savedNames;
    tlsValues = savedValues;
    return rc;
}

} // namespace kforge::runtime
