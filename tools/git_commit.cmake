# Writes OUT: the git commit of SOURCE_DIR's checkout, "-dirty" when its tracked files differ from
# that commit, or "unknown" outside a checkout; rewritten only when it changed. Run at every build
# (tools/CMakeLists.txt), so a binary rebuilt after a commit names the commit it was built from in
# --version and env.json, not the one CMake last configured at.
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR NOT commit)
  set(commit "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(changes)
    string(APPEND commit "-dirty")
  endif()
endif()
set(text "#pragma once\n// Generated at every build by tools/git_commit.cmake.\n#define CONTEND_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
