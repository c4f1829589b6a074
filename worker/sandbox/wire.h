#pragma once
// The packets between the worker and kforge-cpu-runner, one per SOCK_SEQPACKET message on the control
// socket. Plain structs of fixed size (both ends are built from this header in one build), no torch,
// no Qt, no allocation, so the runner's signal handlers can send them too.
#include <cstddef>
#include <cstdint>

namespace kforge::sandbox::wire {

inline constexpr uint32_t kMagic = 0x6b665231; // "kfR1"
inline constexpr int kMaxTensors = 16;
inline constexpr int kMaxSymbols = 32;
inline constexpr int kMaxDims = 8;
inline constexpr int kSymbolName = 48;
inline constexpr int kTextBytes = 1024;

// The runner's fixed descriptors inside the jail (bwrap passes them through).
inline constexpr int kArenaFd = 3;
inline constexpr int kControlFd = 4;

enum class Type : uint32_t {
    Call = 1,      // worker -> runner: run kforge_entry once
    Quit = 2,      // worker -> runner: exit cleanly
    Ping = 3,      // worker -> runner: answer Result at once without calling the candidate (the worker
                   // times these to know the round trip's own cost)
    Ready = 10,    // runner -> worker: the candidate is loaded and confined; text: ""
    LoadError = 11,// runner -> worker: dlopen or dlsym failed; text says why; code 1: no entry point
    Result = 12,   // runner -> worker: rc and micros of one call
    Violation = 13,// runner -> worker: a forbidden system call or a limit; text says which; then it exits
    Fatal = 14,    // runner -> worker: a signal ended the candidate (text: its name, the address); then it dies of it
    Setup = 15,    // runner -> worker: the runner could not set itself up (text); then it exits
};

struct Tensor {
    uint64_t offset; // into the arena
    uint64_t bytes;  // extent in the arena the tensor may touch, from offset
    int32_t dtype;   // kf_dtype
    int32_t ndim;
    int64_t sizes[kMaxDims];
    int64_t strides[kMaxDims]; // in elements
};

struct Symbol {
    char name[kSymbolName]; // NUL-terminated
    int64_t value;
};

struct Request {
    uint32_t magic = kMagic;
    Type type = Type::Call;
    uint64_t seq = 0;
    int32_t nIn = 0;
    int32_t nOut = 0;
    int32_t nSym = 0;
    int32_t pad = 0;
    Tensor tensors[kMaxTensors]; // inputs first, then outputs
    Symbol symbols[kMaxSymbols];
};

struct Reply {
    uint32_t magic = kMagic;
    Type type = Type::Result;
    uint64_t seq = 0;
    int32_t rc = 0;       // kforge_entry's return value (Result); the signal (Fatal); the syscall (Violation)
    int32_t code = 0;     // Violation: 1 system call, 2 memory, 3 CPU time, 4 file size; LoadError: 1 no entry point
    double micros = -1;   // Result: the call as steady_clock saw it inside the jail
    char text[kTextBytes]; // NUL-terminated
};

} // namespace kforge::sandbox::wire
