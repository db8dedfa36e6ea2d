# One library per module folder: sources are every src/*.cpp (globbed, so a
# new file needs no CMake edit) plus SOURCES (e.g. sources of subfolders of
# src/), public headers under include/ctmc/<module>/ (installed). Internal
# headers live beside the sources in src/ and are not installed: the module's
# sources include them by name, tests through a PRIVATE include folder.
function(ctmc_add_module name)
  cmake_parse_arguments(M "" "" "DEPS;SOURCES" ${ARGN})
  file(GLOB _src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  list(APPEND _src ${M_SOURCES})
  if(NOT _src)  # a module with no sources yet: headers only
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                                 $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${name} INTERFACE ${M_DEPS})
  else()
    add_library(${name} STATIC ${_src})
    target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(${name} PUBLIC ${M_DEPS})
    target_compile_options(${name} PRIVATE -Wall -Wextra)
    # Position-independent: the Python module (python/) is a shared object
    # that links these static libraries, and so may a user's own shared
    # library built against the installed package. Executables keep the
    # compiler's default.
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON OUTPUT_NAME ctmc_snn_${name})
  endif()
  # The CMake package (README "Using the libraries from CMake"): the library as
  # ctmc_snn::<name>, its public headers under include/ctmc/<name>/.
  add_library(ctmc_snn::${name} ALIAS ${name})
  install(TARGETS ${name} EXPORT ctmc_snnTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# One doctest binary per module (every tests/<module>/*.cpp, so the suite
# links once) and one CTest test per test file (*_test.cpp): test `<module>.<stem>` runs
# the binary with doctest's --source-file filter, so `ctest -R gth` or
# `ctest -L unit` runs single files and a failure names its file.
# Labels: LABEL (default unit) for every file of the suite, except the files
# listed in SLOW (stems without _test), which are labelled `slow` only, so
# `ctest -L unit` stays quick. A filter that matches no test case fails
# (doctest reports "test cases: 0"): a renamed file cannot pass silently.
function(ctmc_add_test_suite module)
  cmake_parse_arguments(T "" "LABEL" "DEPS;SLOW" ${ARGN})
  file(GLOB _src CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${module}/*.cpp)
  if(NOT _src)
    return()
  endif()
  add_executable(test_${module} ${_src} ${CMAKE_CURRENT_SOURCE_DIR}/doctest_main.cpp)
  target_link_libraries(test_${module} PRIVATE ${T_DEPS} doctest::doctest)
  target_compile_definitions(test_${module} PRIVATE
    CTMC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CTMC_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures"
    CTMC_CLI_PATH="$<TARGET_FILE:ctmc-snn>")
  if(NOT T_LABEL)
    set(T_LABEL unit)
  endif()
  foreach(_file IN LISTS _src)
    get_filename_component(_name ${_file} NAME)
    # Helpers linked into the suite (no test cases of their own) are not tests.
    if(NOT _name MATCHES "_test\\.cpp$")
      continue()
    endif()
    string(REGEX REPLACE "_test\\.cpp$" "" _stem ${_name})
    set(_labels ${T_LABEL})
    if(_stem IN_LIST T_SLOW)
      set(_labels slow)
    endif()
    add_test(NAME ${module}.${_stem} COMMAND test_${module} "--source-file=*/tests/${module}/${_name}")
    # Passive OpenMP waiting: tests run side by side under ctest -j, and
    # spinning threads would steal each other's cores.
    set_tests_properties(${module}.${_stem} PROPERTIES LABELS "${_labels}" TIMEOUT 1200
      FAIL_REGULAR_EXPRESSION "test cases: +0 [|]"
      ENVIRONMENT "OMP_WAIT_POLICY=passive")
  endforeach()
  foreach(_slow IN LISTS T_SLOW)
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${module}/${_slow}_test.cpp)
      message(FATAL_ERROR "ctmc-snn: SLOW names ${module}/${_slow}_test.cpp, which does not exist")
    endif()
  endforeach()
endfunction()
