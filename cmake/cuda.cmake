# Finds the CUDA toolkit and cuDNN for the CUDA backend (option CONVBENCH_CUDA = AUTO | ON | OFF)
# and says at configure time what will be built. Sets CONVBENCH_WITH_CUDA, and with it enables the
# CUDA language (this file is included from the top-level CMakeLists.txt, so at top level) and
# sets CONVBENCH_CUDA_VERSION / CONVBENCH_CUDNN_VERSION for lib/build_info.hpp.in.
#
# cuDNN is looked for in the toolkit and the system folders; point at another copy (for example
# PyTorch's wheel: site-packages/nvidia/cudnn) with -DCUDNN_INCLUDE_DIR=... -DCUDNN_LIBRARY=...
set(CONVBENCH_WITH_CUDA OFF)
set(CONVBENCH_CUDA_VERSION "")
set(CONVBENCH_CUDNN_VERSION "")
if(NOT CONVBENCH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/include)
  find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
               HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu)
  set(_cuda_missing "")
  if(NOT CUDAToolkit_FOUND)
    list(APPEND _cuda_missing "CUDA toolkit")
  endif()
  if(NOT CUDNN_INCLUDE_DIR OR NOT CUDNN_LIBRARY)
    list(APPEND _cuda_missing "cuDNN")
  endif()
  if(NOT EXISTS ${CMAKE_SOURCE_DIR}/lib/backends/cuda/cuda_backend.cpp)
    list(APPEND _cuda_missing "the CUDA backend sources (not written yet)")
  endif()
  if(_cuda_missing)
    if(CONVBENCH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "CONVBENCH_CUDA=ON but missing: ${_cuda_missing}")
    endif()
    message(STATUS "convbench: CUDA backend NOT built (missing: ${_cuda_missing})")
  else()
    set(CONVBENCH_WITH_CUDA ON)
  endif()
endif()

if(CONVBENCH_WITH_CUDA)
  # cuDNN's version from its header (CUDNN_VERSION is MAJOR*10000 + MINOR*100 + PATCHLEVEL in 9).
  file(STRINGS ${CUDNN_INCLUDE_DIR}/cudnn_version.h _cudnn_defines REGEX "^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ")
  foreach(_part MAJOR MINOR PATCHLEVEL)
    string(REGEX MATCH "CUDNN_${_part} +([0-9]+)" _match "${_cudnn_defines}")
    set(_cudnn_${_part} ${CMAKE_MATCH_1})
  endforeach()
  set(CONVBENCH_CUDA_VERSION ${CUDAToolkit_VERSION})
  set(CONVBENCH_CUDNN_VERSION "${_cudnn_MAJOR}.${_cudnn_MINOR}.${_cudnn_PATCHLEVEL}")

  # sm_80 (A100) and sm_90 (H100, H200), each as machine code plus PTX; the PTX of 90 lets newer
  # GPUs JIT-compile. Kept short: every architecture is another device compilation of kernels/.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to compile kernels/ for")
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND CUDAToolkit_NVCC_EXECUTABLE)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  endif()
  if(CCACHE_PROGRAM)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  endif()
  # One CUDA runtime per process: the shared libcudart that CUDA::cudart and cuDNN use, not
  # CMake's default static copy next to it (two runtimes would not share streams or memory).
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  # CMake 3.25 predates nvcc's C++20 support; CUDA sources inherit the project's C++20, so tell
  # CMake the flag (newer CMake versions define these themselves).
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  message(STATUS "convbench: CUDA backend built (CUDA ${CONVBENCH_CUDA_VERSION}, cuDNN ${CONVBENCH_CUDNN_VERSION} "
                 "at ${CUDNN_LIBRARY}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
endif()

# Adds the CUDA backend to the library `target`: lib/backends/cuda/*.cpp (host code, compiled as
# C++ with the project's warnings) and kernels/*.cu (nvcc, warnings as errors too).
function(convbench_add_cuda_backend target)
  file(GLOB _cuda_host CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/lib/backends/cuda/*.cpp)
  file(GLOB _cuda_kernels CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/*.cu)
  target_sources(${target} PRIVATE ${_cuda_host} ${_cuda_kernels})
  # Kernels file by file, whatever CMake's unity support for CUDA (CMakeLists.txt, CONVBENCH_UNITY).
  set_source_files_properties(${_cuda_kernels} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  # nvml_clock.cpp defines NvmlClock::Api (declared in its header) with members of types in its
  # anonymous namespace; included into a unity batch, GCC takes the file for a header and warns
  # (-Wsubobject-linkage). It is compiled on its own.
  set_source_files_properties(${CMAKE_SOURCE_DIR}/lib/backends/cuda/nvml_clock.cpp PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  # kernels/kernels.hpp is included as "kernels/..." from the backend and the kernels.
  # cuda_runtime_api.h, cudnn.h and nvtx3/ (header-only, in the toolkit) for the library and
  # for code that includes its CUDA headers (tests, the backend registry).
  target_include_directories(${target} PUBLIC ${CUDNN_INCLUDE_DIR})
  # dl: NVML is opened at run time (nvml_clock.cpp), so hosts without a driver still run.
  target_link_libraries(${target} PUBLIC CUDA::cudart ${CUDNN_LIBRARY} ${CMAKE_DL_LIBS})
  # cuBLAS for the linear op (lib/backends/cuda/cublas_linear.cpp), where the toolkit has it;
  # without it the linear op runs convbench's own kernels (kernels/linear.cu).
  if(TARGET CUDA::cublas)
    target_link_libraries(${target} PUBLIC CUDA::cublas)
    target_compile_definitions(${target} PUBLIC CONVBENCH_WITH_CUBLAS=1)
    message(STATUS "convbench: cuBLAS found: the CUDA backend's linear op uses it")
  else()
    message(STATUS "convbench: cuBLAS NOT found: the CUDA backend's linear op runs its own kernels")
  endif()
  string(REPLACE ";" "," _architectures "${CMAKE_CUDA_ARCHITECTURES}")  # a ';' would split the define
  target_compile_definitions(${target} PUBLIC CONVBENCH_WITH_CUDA=1
                             PRIVATE CONVBENCH_CUDA_ARCHITECTURES="${_architectures}")
  # -Wno-restrict: GCC 12's false positive on std::string concatenation, off for the C++ sources
  # too (CMakeLists.txt, CONVBENCH_WARNINGS); the kernels' launch checks build such messages.
  set(_host_warnings "-Wall,-Wextra")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(_host_warnings "${_host_warnings},-Wno-restrict")
  endif()
  if(CONVBENCH_WERROR)
    target_compile_options(${target} PRIVATE
                           "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_host_warnings},-Werror;--Werror=all-warnings>")
  else()
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_host_warnings}>")
  endif()
endfunction()
