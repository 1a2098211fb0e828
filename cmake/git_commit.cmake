# Run by the target convbench_git_commit at every build (cmake -P): writes OUT, the commit the
# sources are at now ("-dirty" when tracked files differ from it; outside a git checkout, as in
# the copy a GPU machine gets, $CONVBENCH_COMMIT when set, else "unknown"), and leaves OUT
# untouched when that has not changed, so a new commit recompiles the one file that includes it.
# Written at configure time alone, a binary rebuilt after later commits would report the commit
# of its last configure (bench-vs-torch's first results did).
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit AND NOT "$ENV{CONVBENCH_COMMIT}" STREQUAL "")
  set(commit "$ENV{CONVBENCH_COMMIT}")  # scripts/gpu-check.sh on a copy without .git
elseif(NOT commit)
  set(commit "unknown")
elseif(dirty)
  string(APPEND commit "-dirty")
endif()
set(text "// Generated at build time by cmake/git_commit.cmake: the commit this binary was built from.
#pragma once

namespace convbench::build_info {
inline constexpr const char* git_commit = \"${commit}\";
}  // namespace convbench::build_info
")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
