# Whether the real backend (CUDA, NCCL, Boost.Asio) is built: included from the top-level
# CMakeLists.txt, because CUDA must be enabled in the directory above every target that links
# CUDA code (CMake's enable_language). It is built whenever a CUDA compiler, the CUDA
# toolkit and NCCL are found; otherwise configure says why in ONE message and everything
# else builds and tests without it. Sets KVSIM_REAL_BACKEND_BUILT.
option(KVSIM_REAL_BACKEND "Build the CUDA/NCCL real backend where CUDA and NCCL are found" ON)
set(KVSIM_REAL_BACKEND_BUILT OFF)

if(NOT KVSIM_REAL_BACKEND)
  message(STATUS "kvsim: real backend skipped (KVSIM_REAL_BACKEND=OFF)")
  return()
endif()
if(KVSIM_SANITIZE)
  # nvcc-compiled objects and the ASan runtime do not mix (CUDA's own allocations and the
  # driver trip ASan), and the GPU tests skip on CI anyway: the default preset builds it.
  # ThreadSanitizer (KVSIM_TSAN, the tsan preset) is allowed: it instruments only the C++
  # host code, and its preset builds only the real backend's CPU tests.
  message(STATUS "kvsim: real backend skipped under KVSIM_SANITIZE (nvcc and AddressSanitizer "
                 "do not mix; the default preset builds it)")
  return()
endif()

find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  message(STATUS "kvsim: real backend skipped: no CUDA toolkit found (set CUDAToolkit_ROOT)")
  return()
endif()

find_path(KVSIM_NCCL_INCLUDE_DIR nccl.h
          HINTS ENV NCCL_HOME ENV NCCL_ROOT ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
find_library(KVSIM_NCCL_LIBRARY nccl
             HINTS ENV NCCL_HOME ENV NCCL_ROOT ${CUDAToolkit_LIBRARY_DIR}
                   ${CUDAToolkit_LIBRARY_ROOT}
             PATH_SUFFIXES lib lib64)
if(NOT KVSIM_NCCL_INCLUDE_DIR OR NOT KVSIM_NCCL_LIBRARY)
  message(STATUS "kvsim: real backend skipped: CUDA ${CUDAToolkit_VERSION} found, NCCL not "
                 "(nccl.h: ${KVSIM_NCCL_INCLUDE_DIR}, libnccl: ${KVSIM_NCCL_LIBRARY}; set NCCL_HOME)")
  return()
endif()

# One architecture keeps nvcc's share of CI small: sm_90 (H100/H200) machine code plus its
# PTX, which newer GPUs compile at load time. Override with -DCMAKE_CUDA_ARCHITECTURES=...
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER)
  set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
endif()
# nvcc need not be on PATH: the toolkit found above knows where its own is.
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "kvsim: real backend skipped: CUDA toolkit ${CUDAToolkit_VERSION} found, but "
                 "no working nvcc for it (set CMAKE_CUDA_COMPILER)")
  return()
endif()
enable_language(CUDA)

file(STRINGS ${KVSIM_NCCL_INCLUDE_DIR}/nccl.h _kvsim_nccl_version REGEX
     "^#define NCCL_(MAJOR|MINOR|PATCH) [0-9]+")
string(REGEX REPLACE "[^0-9;]" "" _kvsim_nccl_version "${_kvsim_nccl_version}")
string(REPLACE ";" "." _kvsim_nccl_version "${_kvsim_nccl_version}")
add_library(kvsim::nccl UNKNOWN IMPORTED GLOBAL)
set_target_properties(kvsim::nccl PROPERTIES
  IMPORTED_LOCATION ${KVSIM_NCCL_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${KVSIM_NCCL_INCLUDE_DIR})
set(KVSIM_REAL_BACKEND_BUILT ON)
message(STATUS "kvsim: real backend: CUDA ${CUDAToolkit_VERSION} (sm_${CMAKE_CUDA_ARCHITECTURES}), "
               "NCCL ${_kvsim_nccl_version} (${KVSIM_NCCL_LIBRARY})")
