# One library per layer, linking only downward.
#
# The order below is docs/architecture.md's: a layer may depend on any layer
# to its left and on none to its right. A layer is named by its folder; the
# three layers of what is trained sit under workloads/, and a layer's library
# is clustersim_<folder with '/' as '_'> (clustersim_workloads_model).
set(CLUSTERSIM_LAYERS sim config topology hardware collectives workloads/model exec
    workloads/schedules workloads/chakra timeline failures calibration scenario sweep cli
    CACHE INTERNAL "clustersim layers, bottom to top")

# clustersim_layer_target(<out-var> <layer>): the library target of a layer.
function(clustersim_layer_target out layer)
  string(REPLACE "/" "_" name "${layer}")
  set(${out} clustersim_${name} PARENT_SCOPE)
endfunction()

# Warnings are errors for our own code only (not for the GoogleTest/Benchmark
# headers, which come in as system includes).
add_library(clustersim_warnings INTERFACE)
target_compile_options(clustersim_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Wold-style-cast
  -Woverloaded-virtual -Wimplicit-fallthrough -Wnull-dereference -Werror
  # GCC 12 reports std::string concatenation at -O3 as overlapping memcpy
  # (GCC bug 105329, a false positive inside libstdc++).
  -Wno-restrict)
if(CLUSTERSIM_SANITIZE)
  # ASan's instrumentation defeats GCC 12's flow analysis: it reports
  # std::variant's string member as maybe-uninitialized (GCC bug 105593 and
  # kin). The warning stays on in normal builds.
  target_compile_options(clustersim_warnings INTERFACE -Wno-maybe-uninitialized)
endif()

# clustersim_add_layer(<layer> LAYERS <lower layers...> LIBS <external targets...>)
#
# Creates the layer's library (clustersim_layer_target) from every .cc in its folder (one
# folder = one layer; `main.cc` files are programs, not library code). A layer
# with no sources yet is an INTERFACE library, so that the layers above can
# already name it.
function(clustersim_add_layer layer)
  cmake_parse_arguments(ARG "" "" "LAYERS;LIBS" ${ARGN})
  list(FIND CLUSTERSIM_LAYERS ${layer} own_rank)
  if(own_rank EQUAL -1)
    message(FATAL_ERROR "clustersim_add_layer: '${layer}' is not one of: ${CLUSTERSIM_LAYERS}")
  endif()
  set(deps)
  foreach(dep IN LISTS ARG_LAYERS)
    list(FIND CLUSTERSIM_LAYERS ${dep} dep_rank)
    if(dep_rank EQUAL -1 OR NOT dep_rank LESS own_rank)
      message(FATAL_ERROR "layer '${layer}' may link only to layers below it "
                          "(${CLUSTERSIM_LAYERS}); '${dep}' is not below")
    endif()
    clustersim_layer_target(dep_target ${dep})
    list(APPEND deps ${dep_target})
  endforeach()

  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER sources EXCLUDE REGEX "/main\\.cc$")
  clustersim_layer_target(target ${layer})
  if(sources)
    add_library(${target} STATIC ${sources})
    # The static libraries end up inside the Python extension module too.
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ${CLUSTERSIM_PYTHON})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${deps} ${ARG_LIBS} PRIVATE clustersim_warnings)
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${deps} ${ARG_LIBS})
  endif()
endfunction()
