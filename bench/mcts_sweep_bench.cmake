# kforge-mcts-sweep-bench (bench/mcts_sweep_bench.cpp): MCTS replayed against an exhaustive sweep of
# each template family's tuning space, measured through the real worker.
add_executable(kforge-mcts-sweep-bench ${PROJECT_SOURCE_DIR}/bench/mcts_sweep_bench.cpp)
target_link_libraries(kforge-mcts-sweep-bench PRIVATE kforge_core)
target_compile_options(kforge-mcts-sweep-bench PRIVATE ${KFORGE_WARNINGS})
target_compile_definitions(kforge-mcts-sweep-bench PRIVATE KFORGE_WORKER_PATH="$<TARGET_FILE:kforge-worker>")
add_dependencies(kforge-mcts-sweep-bench kforge-worker)
