# Fails if a layer includes a header from a layer above it.
#
#   cmake -DROOT=<source root> "-DLAYERS=sim;topology;...;cli" -P check_layering.cmake
#
# LAYERS is bottom to top (CLUSTERSIM_LAYERS); a layer is a folder path such
# as sim or workloads/model. Every .h/.cc under ROOT/<layer>/ is scanned for
# #include "<other layer>/..." and each upward include is reported as
# <layer>/<file>:<line>.
if(NOT ROOT OR NOT LAYERS)
  message(FATAL_ERROR "usage: cmake -DROOT=... -DLAYERS=... -P check_layering.cmake")
endif()

set(violations 0)
set(scanned 0)
list(LENGTH LAYERS layer_count)
foreach(layer IN LISTS LAYERS)
  list(FIND LAYERS ${layer} own_rank)
  file(GLOB_RECURSE sources RELATIVE ${ROOT} ${ROOT}/${layer}/*.h ${ROOT}/${layer}/*.cc)
  foreach(source IN LISTS sources)
    math(EXPR scanned "${scanned} + 1")
    file(STRINGS ${ROOT}/${source} lines)
    set(line_number 0)
    foreach(line IN LISTS lines)
      math(EXPR line_number "${line_number} + 1")
      if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([a-z_]+/[^\"]+)\"")
        set(header "${CMAKE_MATCH_1}")
        # The layer whose folder holds the header: the longest layer path it
        # starts with (workloads/model/x.h is in layer workloads/model).
        set(target_layer "")
        set(target_rank -1)
        foreach(candidate IN LISTS LAYERS)
          string(LENGTH "${candidate}/" prefix_length)
          string(SUBSTRING "${header}" 0 ${prefix_length} prefix)
          string(LENGTH "${target_layer}" chosen_length)
          if(prefix STREQUAL "${candidate}/" AND prefix_length GREATER chosen_length)
            set(target_layer ${candidate})
            list(FIND LAYERS ${candidate} target_rank)
          endif()
        endforeach()
        if(target_rank GREATER own_rank)
          message(SEND_ERROR "${source}:${line_number}: layer '${layer}' includes \"${header}\" "
                             "from layer '${target_layer}', which is above it")
          math(EXPR violations "${violations} + 1")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "${violations} upward include(s); layers, bottom to top: ${LAYERS}")
endif()
if(scanned EQUAL 0)
  message(FATAL_ERROR "no sources found under ${ROOT}: nothing was checked")
endif()
message(STATUS "layering ok: ${scanned} files in ${layer_count} layers include only downward")
