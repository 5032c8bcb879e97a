# Turns data/engine-flags/<engine>-<version>.txt into C++ tables (engine_flags_data.cc).
#
# Each file lists one long option per line, with '#' comment lines recording where the list was
# extracted from. The tables are generated at configure time; editing a data file re-runs the
# configuration.

function(kvc_generate_engine_flags data_dir output)
  file(GLOB files CONFIGURE_DEPENDS "${data_dir}/*.txt")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${files})
  set(tables_vllm)
  set(tables_sglang)
  set(body "")
  set(index 0)
  # Newest release first: sort the file names in natural order, then reverse.
  list(SORT files COMPARE NATURAL ORDER DESCENDING)
  foreach(file ${files})
    get_filename_component(stem "${file}" NAME_WE)
    get_filename_component(fullname "${file}" NAME)
    string(REGEX REPLACE "\\.txt$" "" stem "${fullname}")
    string(REGEX MATCH "^(vllm|sglang)-(.+)$" matched "${stem}")
    if(NOT matched)
      message(FATAL_ERROR "${file}: engine flag files are named vllm-<version>.txt or sglang-<version>.txt")
    endif()
    set(engine "${CMAKE_MATCH_1}")
    set(version "${CMAKE_MATCH_2}")
    file(STRINGS "${file}" lines)
    set(flags)
    foreach(line ${lines})
      string(STRIP "${line}" line)
      if(line STREQUAL "" OR line MATCHES "^#")
        continue()
      endif()
      if(NOT line MATCHES "^--?[A-Za-z0-9]")
        message(FATAL_ERROR "${file}: \"${line}\" is not a long option")
      endif()
      list(APPEND flags "${line}")
    endforeach()
    list(REMOVE_DUPLICATES flags)
    list(SORT flags COMPARE STRING)
    list(LENGTH flags count)
    if(count EQUAL 0)
      message(FATAL_ERROR "${file}: no flags")
    endif()
    set(array "constexpr std::string_view kFlags${index}[] = {\n")
    foreach(flag ${flags})
      string(APPEND array "    \"${flag}\",\n")
    endforeach()
    string(APPEND array "};\n")
    string(APPEND body "${array}")
    if(engine STREQUAL "vllm")
      list(APPEND tables_vllm "{\"vllm\", \"${version}\", kFlags${index}, true, true}")
    else()
      list(APPEND tables_sglang "{\"sglang\", \"${version}\", kFlags${index}, false, false}")
    endif()
    math(EXPR index "${index} + 1")
  endforeach()
  if(NOT tables_vllm OR NOT tables_sglang)
    message(FATAL_ERROR "${data_dir} must hold at least one vllm-<version>.txt and one sglang-<version>.txt")
  endif()
  list(JOIN tables_vllm ",\n    " vllm_init)
  list(JOIN tables_sglang ",\n    " sglang_init)
  file(CONFIGURE OUTPUT "${output}" CONTENT [=[
// Generated from data/engine-flags by cmake/EngineFlags.cmake. Do not edit.
#include "engine_flags_data.h"

namespace kvc::policy::generated {
namespace {

@body@
const EngineCli kVllm[] = {
    @vllm_init@,
};
const EngineCli kSglang[] = {
    @sglang_init@,
};

}  // namespace

std::span<const EngineCli> engineClis(std::string_view engine) {
  if (engine == "sglang") {
    return kSglang;
  }
  return kVllm;
}

}  // namespace kvc::policy::generated
]=] @ONLY)
endfunction()
