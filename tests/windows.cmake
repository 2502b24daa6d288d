# The tests of the Windows build (MinGW-w64), run under wine through ctest's emulator
# (<build>/wine-run.sh; README, "Windows"). One executable, wheelfit_tests.exe, from the test
# files that apply on Windows: the folders listed whole below, and single files of others. A
# folder or file that is not listed holds Linux-only tests (fork, FIFOs, modes, /proc, GSS-API)
# or still awaits its port; tests/windows/ holds the tests of Windows-only code. Every listed
# folder gets a ctest entry win.<folder> (label "windows"), as the Linux build's <folder>.unit.
# Servers the tests talk to (HTTPS origins, proxies, the Kerberos rig) stay Linux processes.
set(WHEELFIT_TEST_OPT -O0 -g0)

add_library(wheelfit_catch_main OBJECT support/catch_main.cpp)
target_compile_options(wheelfit_catch_main PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_catch_main PUBLIC Catch2::Catch2 wheelfit::transports wheelfit::policies PRIVATE wheelfit_options)
target_compile_definitions(wheelfit_catch_main PRIVATE WHEELFIT_SHARED_FIXTURES="${WHEELFIT_SHARED_FIXTURES}")

add_library(wheelfit_test_support STATIC support/test_support.cpp support/cli_support.cpp)
target_include_directories(wheelfit_test_support PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(wheelfit_test_support PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_test_support PUBLIC wheelfit::util wheelfit::farmgen Catch2::Catch2 PRIVATE ZLIB::ZLIB wheelfit_options)
target_compile_definitions(wheelfit_test_support PUBLIC
  WHEELFIT_SHARED_FIXTURES="${WHEELFIT_SHARED_FIXTURES}"
  WHEELFIT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  WHEELFIT_BINARY_DIR="${PROJECT_BINARY_DIR}")
add_library(wheelfit_test_backends STATIC support/backend_support.cpp)
target_include_directories(wheelfit_test_backends PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_options(wheelfit_test_backends PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_test_backends PUBLIC wheelfit::registry wheelfit::policies wheelfit_cuda_backend
                      wheelfit_rocm_backend PRIVATE wheelfit_options)
add_library(wheelfit_test_resolve_support STATIC support/resolve_support.cpp)
target_compile_options(wheelfit_test_resolve_support PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_test_resolve_support PUBLIC wheelfit_test_support wheelfit_test_backends wheelfit::resolve
                      PRIVATE wheelfit_options)

# Whole folders that apply on Windows.
set(WHEELFIT_WINDOWS_TEST_FOLDERS model policy policies config resolve output windows)
# Single files of other folders (tests/<folder>/<file>.cpp) that apply.
set(WHEELFIT_WINDOWS_TEST_FILES transports/http/test_net_policy.cpp transports/http/test_netrc.cpp
    transports/http/test_system_proxy.cpp)

set(_sources)
set(_folders ${WHEELFIT_WINDOWS_TEST_FOLDERS})
foreach(_folder IN LISTS WHEELFIT_WINDOWS_TEST_FOLDERS)
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${_folder}/*.cpp)
  set(_tests_${_folder} ${_srcs})
  list(APPEND _sources ${_srcs})
endforeach()
foreach(_file IN LISTS WHEELFIT_WINDOWS_TEST_FILES)
  get_filename_component(_folder ${_file} DIRECTORY)
  list(APPEND _tests_${_folder} ${CMAKE_CURRENT_SOURCE_DIR}/${_file})
  list(APPEND _sources ${CMAKE_CURRENT_SOURCE_DIR}/${_file})
  list(APPEND _folders ${_folder})
endforeach()
list(REMOVE_DUPLICATES _folders)

# Unity groups per folder, ten files at most, as the Linux build's (tests/CMakeLists.txt).
foreach(_folder IN LISTS _folders)
  set(_index 0)
  foreach(_src IN LISTS _tests_${_folder})
    math(EXPR _group "${_index} / 10")
    string(MAKE_C_IDENTIFIER "${_folder}" _id)
    set_source_files_properties(${_src} PROPERTIES UNITY_GROUP win_${_id}_${_group})
    math(EXPR _index "${_index} + 1")
  endforeach()
endforeach()
add_executable(wheelfit_tests ${_sources} $<TARGET_OBJECTS:wheelfit_catch_main>)
set_target_properties(wheelfit_tests PROPERTIES UNITY_BUILD_MODE GROUP)
target_compile_options(wheelfit_tests PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_tests PRIVATE wheelfit_test_resolve_support wheelfit_test_backends wheelfit::wheelfit
                      wheelfit::output wheelfit::policies wheelfit::transports wheelfit::transport_file
                      wheelfit_test_support tomlplusplus::tomlplusplus Boost::json Catch2::Catch2 wheelfit_options)
add_dependencies(wheelfit_tests wheelfit wheelfit-farmgen)

# The http transport against Linux servers (decision 0034): tests/windows/net/net_rig.py starts an
# https origin with a private CA, Basic and open CONNECT proxies and the Kerberos rig (KDC + squid),
# then runs these cases under wine. Not part of win.windows (the servers are missing there).
target_sources(wheelfit_tests PRIVATE windows/net/test_net_win.cpp)
find_program(WHEELFIT_PYTHON3 python3)
if(WHEELFIT_PYTHON3 AND CMAKE_CROSSCOMPILING_EMULATOR)
  add_test(NAME win.net COMMAND ${WHEELFIT_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/windows/net/net_rig.py --
           ${CMAKE_CROSSCOMPILING_EMULATOR} $<TARGET_FILE:wheelfit_tests> "[windows][net]")
  # RUN_SERIAL: it sets the prefix's system proxy (loopback included) while it runs.
  set_tests_properties(win.net PROPERTIES LABELS "windows;integration" TIMEOUT 600 RUN_SERIAL TRUE)
endif()

foreach(_folder IN LISTS _folders)
  set(_unit "")
  foreach(_src IN LISTS _tests_${_folder})
    get_filename_component(_stem ${_src} NAME_WE)
    list(APPEND _unit "[#${_stem}]~[fixtures]~[posix]")
  endforeach()
  if(NOT _unit)
    continue()
  endif()
  string(JOIN "," _unit ${_unit})
  string(REPLACE "/" "." _label ${_folder})
  add_test(NAME win.${_label} COMMAND wheelfit_tests "-#" "${_unit}")
  set_tests_properties(win.${_label} PROPERTIES LABELS "windows;unit" TIMEOUT 600)
endforeach()

# The zip (scripts/build-windows.sh packs it before running the tests): its contents, its imports,
# and wheelfit.exe unpacked and run from its own folder (tests/windows/check_zip.sh).
add_test(NAME win.package COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/windows/check_zip.sh
         ${PROJECT_BINARY_DIR}/dist/wheelfit-${PROJECT_VERSION}-win64.zip ${CMAKE_OBJDUMP} ${CMAKE_CROSSCOMPILING_EMULATOR})
set_tests_properties(win.package PROPERTIES LABELS "windows;package" TIMEOUT 300)
