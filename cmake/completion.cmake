# Run by `cmake --install` (and CPack's staging install), cmake -P: writes the bash and zsh
# completion scripts made by the installed program's build (`convbench completion bash|zsh`,
# app/cmd_completion.cpp) from its own command line, so that they list exactly the subcommands
# and options of the binary installed beside them, however old the build folder is.
#   CONVBENCH  the built program
#   BASH_DIR   where bash-completion looks (BASH_DIR/convbench)
#   ZSH_DIR    where zsh looks (ZSH_DIR/_convbench)
foreach(shell bash zsh)
  if(shell STREQUAL "bash")
    set(out ${BASH_DIR}/convbench)
  else()
    set(out ${ZSH_DIR}/_convbench)
  endif()
  get_filename_component(dir ${out} DIRECTORY)
  file(MAKE_DIRECTORY ${dir})
  message(STATUS "Installing: ${out}")
  execute_process(COMMAND ${CONVBENCH} completion ${shell} OUTPUT_FILE ${out}.tmp RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    file(REMOVE ${out}.tmp)
    message(FATAL_ERROR "`${CONVBENCH} completion ${shell}` failed (${rc}): ${err}")
  endif()
  file(RENAME ${out}.tmp ${out})
endforeach()
