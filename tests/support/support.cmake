# The test support libraries, the same on Linux and Windows (tests/CMakeLists.txt,
# tests/windows.cmake): the Catch2 main, files and processes (test_support, cli_support), the
# in-memory transport (memory_transport), the shipped backends in-process, the resolver's
# builders. Needs WHEELFIT_TEST_OPT and ZLIB.
add_library(wheelfit_catch_main OBJECT support/catch_main.cpp)
target_compile_options(wheelfit_catch_main PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_catch_main PUBLIC Catch2::Catch2 wheelfit::transports wheelfit::policies PRIVATE wheelfit_options)
target_compile_definitions(wheelfit_catch_main PRIVATE WHEELFIT_SHARED_FIXTURES="${WHEELFIT_SHARED_FIXTURES}")

add_library(wheelfit_test_support STATIC support/test_support.cpp support/cli_support.cpp support/memory_transport.cpp)
target_include_directories(wheelfit_test_support PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(wheelfit_test_support PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_test_support PUBLIC wheelfit::util wheelfit::net wheelfit::farmgen Catch2::Catch2 PRIVATE ZLIB::ZLIB wheelfit_options)
target_compile_definitions(wheelfit_test_support PUBLIC
  WHEELFIT_SHARED_FIXTURES="${WHEELFIT_SHARED_FIXTURES}"
  WHEELFIT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  WHEELFIT_BINARY_DIR="${PROJECT_BINARY_DIR}")

# The shipped backends in-process (their descriptors, policies and rules), for tests that judge.
add_library(wheelfit_test_backends STATIC support/backend_support.cpp)
target_include_directories(wheelfit_test_backends PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(wheelfit_test_backends PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_test_backends PUBLIC wheelfit::registry wheelfit::policies wheelfit_cuda_backend
                      wheelfit_rocm_backend PRIVATE wheelfit_options)

# Builders for resolver tests (machines, workspaces, in-memory index snapshots).
add_library(wheelfit_test_resolve_support STATIC support/resolve_support.cpp)
target_compile_options(wheelfit_test_resolve_support PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_test_resolve_support PUBLIC wheelfit_test_support wheelfit_test_backends wheelfit::resolve
                      PRIVATE wheelfit_options)
