# The library is one static target per layer (lib/<layer>/), each linked to the layers below it,
# so that an include crossing a layer the wrong way fails to build instead of passing silently.
#
# Every layer gets an include view, build/layer-views/<layer>/, that holds one symbolic link,
# <layer> -> lib/<layer>. A target sees its own view and, through PUBLIC linking, the views of
# the layers it depends on, and nothing else: `#include "report/summary_tables.hpp"` from lib/measure/
# finds no such file, because measure does not depend on report. (A quoted include is looked up
# next to the including file first, lib/measure/report/..., which does not exist either.)
#
# The order, bottom to top (lib/README.md "Layout of the code" says what each holds):
#   util (general utilities: every layer may use them) < graph;
#   graph < ops (op definitions) < spec < variants;  ops < transforms (folding) < variants;
#   ops < runtime < analysis;
#   runtime < backends (with kernels/)
#   analysis + spec < results < measure;  results < report;  results < explain
#   results + variants < sweep (plans, shards, merges, Slurm)
#   report + results < history (the results history, SQLite)
#   explain + report + measure + backends + sweep < pipeline;  pipeline + history < app (the convbench command)

function(convbench_layer_view name source_dir)
  set(view ${CMAKE_BINARY_DIR}/layer-views/${name})
  file(MAKE_DIRECTORY ${view})
  file(CREATE_LINK ${source_dir} ${view}/${name} SYMBOLIC)
  set(convbench_view_${name} ${view} PARENT_SCOPE)
endfunction()

# convbench_layer(NAME [DEPENDS lower layers...] [LINK third-party targets...])
function(convbench_layer name)
  cmake_parse_arguments(L "" "" "DEPENDS;LINK" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/lib/${name}/*.cpp)
  add_library(convbench_${name} STATIC ${sources})
  convbench_layer_view(${name} ${CMAKE_SOURCE_DIR}/lib/${name})
  target_include_directories(convbench_${name} PUBLIC ${convbench_view_${name}})
  # C++ only: nvcc takes its warning flags in another form (cmake/cuda.cmake).
  target_compile_options(convbench_${name} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${CONVBENCH_WARNINGS}>")
  foreach(dep IN LISTS L_DEPENDS)
    target_link_libraries(convbench_${name} PUBLIC convbench_${dep})
  endforeach()
  target_link_libraries(convbench_${name} PUBLIC ${L_LINK})
endfunction()
