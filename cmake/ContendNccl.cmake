# NCCL for the nccl transport: sets CONTEND_FOUND_NCCL (0/1), CONTEND_HAVE_NCCL, CONTEND_NCCL_WHERE
# (for the configure message) and, when found, the imported target contend::nccl.
# Where it looks: CONTEND_NCCL_ROOT alone when set (the nvidia-nccl pip package's folder, or any
# install: include/nccl.h and lib/libnccl.so*), else the CUDA toolkit, then the system. The pip
# package ships only the versioned libnccl.so.2, no libnccl.so link, so both names are looked for.
set(CONTEND_FOUND_NCCL 0)
set(CONTEND_NCCL_WHERE "")
# find_* cache their answers: forget them when the root changes, or a new root would be ignored.
if(NOT "${CONTEND_NCCL_ROOT}" STREQUAL "${CONTEND_NCCL_ROOT_SEARCHED}")
  unset(CONTEND_NCCL_INCLUDE CACHE)
  unset(CONTEND_NCCL_LIBRARY CACHE)
  set(CONTEND_NCCL_ROOT_SEARCHED "${CONTEND_NCCL_ROOT}" CACHE INTERNAL "CONTEND_NCCL_ROOT of the last NCCL search")
endif()
set(_contend_nccl_names nccl libnccl.so.2)
if(CONTEND_NCCL_ROOT)
  find_path(CONTEND_NCCL_INCLUDE nccl.h PATHS ${CONTEND_NCCL_ROOT}/include NO_DEFAULT_PATH)
  find_library(CONTEND_NCCL_LIBRARY NAMES ${_contend_nccl_names} PATHS ${CONTEND_NCCL_ROOT}/lib ${CONTEND_NCCL_ROOT}/lib64
               NO_DEFAULT_PATH)
  if(NOT CONTEND_NCCL_INCLUDE OR NOT CONTEND_NCCL_LIBRARY)
    message(FATAL_ERROR "CONTEND_NCCL_ROOT=${CONTEND_NCCL_ROOT} has no include/nccl.h with lib/libnccl.so or "
                        "lib/libnccl.so.2 (found header: ${CONTEND_NCCL_INCLUDE}, library: ${CONTEND_NCCL_LIBRARY})")
  endif()
else()
  find_path(CONTEND_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include)
  find_library(CONTEND_NCCL_LIBRARY NAMES ${_contend_nccl_names}
               HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu)
endif()
if(CONTEND_NCCL_INCLUDE AND CONTEND_NCCL_LIBRARY)
  set(CONTEND_FOUND_NCCL 1)
  set(CONTEND_HAVE_NCCL 1)
  set(CONTEND_NCCL_WHERE ": ${CONTEND_NCCL_LIBRARY}")
  # Imported, so that CMake puts its folder in the binaries' RPATH (the pip package's folder is on
  # no loader path) and links it by its file name, versioned or not.
  add_library(contend_nccl SHARED IMPORTED GLOBAL)
  set_target_properties(contend_nccl PROPERTIES IMPORTED_LOCATION "${CONTEND_NCCL_LIBRARY}"
                                                INTERFACE_INCLUDE_DIRECTORIES "${CONTEND_NCCL_INCLUDE}")
  add_library(contend::nccl ALIAS contend_nccl)
endif()
