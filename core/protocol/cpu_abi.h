#pragma once
// The fixed entry point of a CPU candidate. The worker puts this preamble in front of the candidate's
// source, so a candidate is just the kernel and `kforge_entry`.
namespace kforge {

inline constexpr const char *kCpuEntryPoint = "kforge_entry";

inline constexpr const char *kCpuAbiPreamble = R"abi(// kforge CPU candidate ABI v1 (prepended by the worker)
#include <cstdint>
#include <cstddef>
enum kf_dtype { KF_F32 = 0, KF_F16 = 1, KF_BF16 = 2, KF_F64 = 3, KF_I64 = 4, KF_I32 = 5, KF_BOOL = 6 };
struct kf_tensor {
    void *data;
    int32_t dtype;
    int32_t ndim;
    int64_t sizes[8];
    int64_t strides[8]; // in elements
};
// Returns 0 on success; any other value means the candidate refused these arguments.
extern "C" int kforge_entry(const kf_tensor *inputs, int n_inputs, kf_tensor *outputs, int n_outputs);
// Provided by the worker: the extent of a shape symbol of the card for this call (e.g. "groups"),
// or -1 when the card has no such symbol. For scalars that are not tensor sizes.
extern "C" int64_t kforge_symbol(const char *name);
#line 1 "candidate.cpp"
)abi";

} // namespace kforge
