#pragma once
// The host's memory as the kernel reports it, for checks made before a large allocation.
#include <cstdint>

namespace kforge {

// MemAvailable of /proc/meminfo in bytes (what can be allocated without swapping); 0 when unknown.
int64_t availableHostMemory();

} // namespace kforge
