# kforge-gui-bench (bench/gui_bench.cpp): the inspector on a 10,000-node session, a plain program.
# Included from ui/CMakeLists.txt; figures in bench/RESULTS-gui.md.
add_executable(kforge-gui-bench ${PROJECT_SOURCE_DIR}/bench/gui_bench.cpp)
target_link_libraries(kforge-gui-bench PRIVATE kforge_ui)
target_compile_options(kforge-gui-bench PRIVATE ${KFORGE_WARNINGS})
