# NVRTC compiles CUDA C++ to a cubin without a GPU, so the CUDA compile path builds everywhere the
# toolkit is installed. Without the toolkit the worker still builds, and says so in its capabilities.
set(KFORGE_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit root (for NVRTC and cuda.h)")
find_path(KFORGE_NVRTC_INCLUDE nvrtc.h HINTS ${KFORGE_CUDA_ROOT}/include ${KFORGE_CUDA_ROOT}/targets/x86_64-linux/include)
find_library(KFORGE_NVRTC_LIBRARY nvrtc HINTS ${KFORGE_CUDA_ROOT}/lib64 ${KFORGE_CUDA_ROOT}/targets/x86_64-linux/lib)
if(KFORGE_NVRTC_INCLUDE AND KFORGE_NVRTC_LIBRARY)
  set(KFORGE_HAVE_NVRTC ON)
  message(STATUS "kforge: NVRTC found: ${KFORGE_NVRTC_LIBRARY}")
else()
  set(KFORGE_HAVE_NVRTC OFF)
  message(STATUS "kforge: NVRTC not found under ${KFORGE_CUDA_ROOT}; the cuda backend's compile path is left out")
endif()
