# contend_warnings(TARGET): the project's warning set, applied to our own targets only.
function(contend_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Werror)
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
