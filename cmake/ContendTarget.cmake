# contend_warnings(TARGET): the project's warning set, applied to our own targets only; errors
# where developers build (CONTEND_WERROR, on in the presets and so in CI), warnings elsewhere: a
# packager's or a user's compiler and build type (gcc 12's -O3 -Wrestrict false positives) must
# not stop the build.
option(CONTEND_WERROR "Treat compiler warnings in contend's own code as errors (the presets turn it on)" OFF)
function(contend_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion $<$<BOOL:${CONTEND_WERROR}>:-Werror>)
  # In a unity batch GCC 12 inlines more at -O2 and then reports std::vector's own deallocation
  # as freeing a pointer with an offset (fabric_flows.cpp's vectors, in one batch of eight and
  # in no other, nor alone). The file-by-file presets (debug, asan) keep the warning, and asan
  # catches a real bad free.
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-free-nonheap-object)
  endif()
endfunction()

# contend_library(NAME SOURCES...): library contend_NAME with alias contend::NAME, public headers
# under include/, warnings on.
function(contend_library name)
  add_library(contend_${name} STATIC ${ARGN})
  add_library(contend::${name} ALIAS contend_${name})
  target_include_directories(contend_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_compile_features(contend_${name} PUBLIC cxx_std_20)
  contend_warnings(contend_${name})
endfunction()
