# Initial CMake cache for TVM 0.27 with SanitizerCoverage, loaded with `cmake -C` by
# build_tvm_sancov.sh (through scikit-build-core's SKBUILD_CMAKE_ARGS).
#
# Every object TVM's own CMake build compiles (libtvm_compiler, libtvm_runtime and the third-party
# sources compiled into them) gets one 8-bit counter per edge plus a pc table. LLVM is Debian's
# prebuilt shared libLLVM and is not instrumented, so the counters measure TVM code only.
# The counters' init callbacks come from libseedzer_sancov.so (sancov_callbacks.c), linked into
# every shared library with an rpath to where the image installs it.

if(DEFINED ENV{SEEDZER_SANCOV_LIBDIR})
  set(_seedzer_sancov_libdir "$ENV{SEEDZER_SANCOV_LIBDIR}")
else()
  set(_seedzer_sancov_libdir "/opt/seedzer-sancov/lib")
endif()
if(DEFINED ENV{LLVM_CONFIG})
  set(_seedzer_llvm_config "$ENV{LLVM_CONFIG}")
else()
  set(_seedzer_llvm_config "llvm-config-16")
endif()

set(_seedzer_sancov "-fsanitize-coverage=inline-8bit-counters,pc-table")
set(CMAKE_C_FLAGS "${_seedzer_sancov}" CACHE STRING "SanitizerCoverage for TVM's C objects")
set(CMAKE_CXX_FLAGS "${_seedzer_sancov}" CACHE STRING "SanitizerCoverage for TVM's C++ objects")
set(CMAKE_SHARED_LINKER_FLAGS
    "-L${_seedzer_sancov_libdir} -Wl,--no-as-needed -lseedzer_sancov -Wl,--as-needed -Wl,-rpath,${_seedzer_sancov_libdir}"
    CACHE STRING "Link the sancov callbacks into every TVM shared library")
set(CMAKE_MODULE_LINKER_FLAGS "${CMAKE_SHARED_LINKER_FLAGS}" CACHE STRING "Same for modules")
set(CMAKE_BUILD_TYPE "Release" CACHE STRING "Optimized like the PyPI wheel")

# CPU only, LLVM from Debian (shared libLLVM-16); everything the PyPI wheel adds for GPUs is off.
set(USE_LLVM "${_seedzer_llvm_config}" CACHE STRING "llvm-config of the LLVM to link")
set(USE_CUDA OFF CACHE STRING "")
set(USE_NCCL OFF CACHE STRING "")
set(USE_NVTX OFF CACHE STRING "")
set(USE_CUTLASS OFF CACHE STRING "")
set(USE_OPENCL OFF CACHE STRING "")
set(USE_VULKAN OFF CACHE STRING "")
set(USE_METAL OFF CACHE STRING "")
set(USE_ROCM OFF CACHE STRING "")
set(BUILD_TESTING OFF CACHE BOOL "")
