# Helpers that keep every layer's target shaped the same way (after abseil's absl_cc_library).
#
#   kvc_library(NAME policy SOURCES a.cc b.cc DEPS kvc::api)
#     -> target kvc_policy, alias kvc::policy, public headers in src/policy/include,
#        plus kvc_policy_check_headers, which compiles every public header on its own.
#   kvc_test(NAME policy_flag_spelling SOURCES flag_spelling_test.cc DEPS kvc::policy LABELS unit)
#     -> a GoogleTest executable whose tests ctest discovers one by one.

set(KVC_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
    -Wunused -Woverloaded-virtual -Wimplicit-fallthrough)
if(KVC_WERROR)
  list(APPEND KVC_WARNINGS -Werror)
endif()

function(kvc_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target kvc_${ARG_NAME})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(kvc::${ARG_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}/include")
  target_compile_options(${target} PRIVATE ${KVC_WARNINGS})
  target_link_libraries(${target} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  kvc_check_headers(${target} "${CMAKE_CURRENT_SOURCE_DIR}/include")
endfunction()

# Compile each public header alone, so that every header is self-contained (Seastar's
# CheckHeaders). Built as part of `all`, so a header that forgets an include fails the build.
function(kvc_check_headers target include_dir)
  file(GLOB_RECURSE headers RELATIVE "${include_dir}" CONFIGURE_DEPENDS "${include_dir}/*.h")
  if(NOT headers)
    return()
  endif()
  set(sources)
  foreach(header ${headers})
    string(MAKE_C_IDENTIFIER "${header}" id)
    set(source "${CMAKE_CURRENT_BINARY_DIR}/check_headers/${id}.cc")
    file(CONFIGURE OUTPUT "${source}" CONTENT "#include \"${header}\"\n")
    list(APPEND sources "${source}")
  endforeach()
  add_library(${target}_check_headers OBJECT ${sources})
  target_compile_options(${target}_check_headers PRIVATE ${KVC_WARNINGS})
  target_link_libraries(${target}_check_headers PRIVATE ${target})
endfunction()

function(kvc_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;LABELS;ENVIRONMENT" ${ARGN})
  set(target test_${ARG_NAME})
  add_executable(${target} ${ARG_SOURCES})
  target_compile_options(${target} PRIVATE ${KVC_WARNINGS})
  target_link_libraries(${target} PRIVATE ${ARG_DEPS} GTest::gmock GTest::gtest_main)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  gtest_discover_tests(${target}
    TEST_PREFIX "${ARG_NAME}."
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "${ARG_ENVIRONMENT}" TIMEOUT 120
    DISCOVERY_TIMEOUT 60)
endfunction()

include(GoogleTest)
