# Tests for kforge_ui, included from tests/CMakeLists.txt when the GUI is built. Same conventions as
# the core tests: one tst_<area>.cpp each, QtTest, offscreen platform so they run without a display.
find_package(Qt6 6.4 REQUIRED COMPONENTS Widgets Test)

function(kforge_add_gui_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "" ${ARGN})
  add_executable(${name} ${name}.cpp)
  target_link_libraries(${name} PRIVATE Qt6::Test kforge_ui)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(${name} PRIVATE ${KFORGE_WARNINGS})
  target_compile_definitions(${name} PRIVATE KFORGE_TEST_KERNELS="${CMAKE_CURRENT_SOURCE_DIR}/kernels")
  # The live-search test drives the real worker; without one it skips and says so.
  if(TARGET kforge-worker)
    target_compile_definitions(${name} PRIVATE KFORGE_WORKER_PATH="$<TARGET_FILE:kforge-worker>")
    add_dependencies(${name} kforge-worker)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;KFORGE_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/kernel-cache")
endfunction()

kforge_add_gui_test(tst_treelayout)
kforge_add_gui_test(tst_gui TIMEOUT 300)
