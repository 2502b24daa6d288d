# The tests of the Windows build (MinGW-w64), run under wine through ctest's emulator
# (<build>/wine-run.sh; README, "Windows"). One executable, wheelfit_tests.exe, from the test
# files that apply on Windows: the folders listed whole below, and single files of others. A
# folder or file that is not listed holds Linux-only tests (fork, FIFOs, modes, /proc, GSS-API)
# or still awaits its port; tests/windows/ holds the tests of Windows-only code. Every listed
# folder gets a ctest entry win.<folder> (label "windows"), as the Linux build's <folder>.unit.
# Servers the tests talk to (HTTPS origins, proxies, the Kerberos rig) stay Linux processes.
set(WHEELFIT_TEST_OPT -O0 -g0)

add_subdirectory(registry/plugins)  # the registry tests' plugins, as DLLs

include(${CMAKE_CURRENT_SOURCE_DIR}/support/support.cmake)

# Whole folders that apply on Windows.
set(WHEELFIT_WINDOWS_TEST_FOLDERS model semantics policies config resolve output windows)
# Single files of other folders (tests/<folder>/<file>.cpp) that apply.
set(WHEELFIT_WINDOWS_TEST_FILES
  # the file layer (winfiles; util/test_subprocess.cpp is the process port's)
  util/test_atomic_file.cpp util/test_read_file.cpp util/test_secrets.cpp util/test_user_folders.cpp
  util/test_text.cpp util/test_safe_text.cpp util/test_log.cpp
  inspect/test_source.cpp)
# Downloads and the cache (decision 0036): the cache's tests, and deliver's that need no HTTP test
# server (test_download*.cpp's server is a POSIX socket one; test_download_paths.cpp also plants
# FIFOs and symlinks); tests/windows/test_deliver_win.cpp has the Windows-only ones.
list(APPEND WHEELFIT_WINDOWS_TEST_FOLDERS transports/cache)
list(APPEND WHEELFIT_WINDOWS_TEST_FILES deliver/test_checksum.cpp deliver/test_download_file.cpp util/test_utc_time.cpp)
# Plugins (decision 0035): the loader and the registry.
list(APPEND WHEELFIT_WINDOWS_TEST_FILES registry/test_plugin_loader.cpp registry/test_registry.cpp)
# Processes and detection (decision 0033): the machine facts, the interpreter, CUDA's parsers.
list(APPEND WHEELFIT_WINDOWS_TEST_FOLDERS machine)
list(APPEND WHEELFIT_WINDOWS_TEST_FILES util/test_subprocess.cpp util/test_command_line.cpp
     backends/cuda/test_cuda_parse.cpp backends/cuda/test_cuda_labels.cpp backends/cuda/test_cuda_arch_list.cpp)
# The http transport (decision 0034): the proxy rules, the netrc parser.
list(APPEND WHEELFIT_WINDOWS_TEST_FILES transports/http/test_net_policy.cpp transports/http/test_netrc.cpp
     transports/http/test_system_proxy.cpp)

# The lock readers (wheelfit check; decision 0042) and the TOML guard: test_read.cpp plants a FIFO.
list(APPEND WHEELFIT_WINDOWS_TEST_FILES locks/test_requirements.cpp locks/test_round_trip.cpp locks/test_toml_locks.cpp
     util/test_toml_depth.cpp)

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
    if(_folder STREQUAL "windows")
      # tests/windows/ is written by several hands, each file with helpers of its own under the
      # same names (utf8, kTimeout): one batch a file.
      set(_group ${_index})
    endif()
    string(MAKE_C_IDENTIFIER "${_folder}" _id)
    set_source_files_properties(${_src} PROPERTIES UNITY_GROUP win_${_id}_${_group})
    math(EXPR _index "${_index} + 1")
  endforeach()
endforeach()
# tests/windows/ are compiled file by file: each is an area's own (files, downloads, plugins, ...).
file(GLOB _windows_only CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/windows/*.cpp)
set_source_files_properties(${_windows_only} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
add_executable(wheelfit_tests ${_sources} $<TARGET_OBJECTS:wheelfit_catch_main>)
set_target_properties(wheelfit_tests PROPERTIES UNITY_BUILD_MODE GROUP)
target_compile_options(wheelfit_tests PRIVATE ${WHEELFIT_TEST_OPT})
target_link_libraries(wheelfit_tests PRIVATE wheelfit_test_resolve_support wheelfit_test_backends wheelfit::wheelfit
                      wheelfit::output wheelfit::policies wheelfit::transports wheelfit::transport_file
                      wheelfit_test_support tomlplusplus::tomlplusplus Boost::json Catch2::Catch2 wheelfit_options)
add_dependencies(wheelfit_tests wheelfit wheelfit-farmgen ${WHEELFIT_TEST_PLUGINS})
target_compile_definitions(wheelfit_tests PRIVATE WHEELFIT_TEST_PLUGIN_DIR="${WHEELFIT_TEST_PLUGIN_DIR}")

# The process and detection tests' helpers: the child program the subprocess tests start (also a
# fake python.exe), and the fake NVML and CUDA driver DLLs built from the Linux fakes' sources.
# The probes run in wheelfit-probe.exe, found beside the tests' folder (<build>/).
add_executable(wheelfit_test_child windows/helpers/test_child_win.cpp)
target_link_options(wheelfit_test_child PRIVATE -municode -static)
foreach(_lib nvml cuda)
  add_library(wheelfit_fake_${_lib} SHARED backends/cuda/fakes/fake_${_lib}.cpp)
  target_link_options(wheelfit_fake_${_lib} PRIVATE -static)
  target_link_libraries(wheelfit_fake_${_lib} PRIVATE wheelfit_options)
  set_target_properties(wheelfit_fake_${_lib} PROPERTIES PREFIX "" OUTPUT_NAME fake_${_lib})
endforeach()
add_dependencies(wheelfit_tests wheelfit_test_child wheelfit_fake_nvml wheelfit_fake_cuda wheelfit-probe)
target_compile_definitions(wheelfit_tests PRIVATE
  WHEELFIT_TEST_CHILD="$<TARGET_FILE:wheelfit_test_child>" WHEELFIT_PROBE_EXE="$<TARGET_FILE:wheelfit-probe>"
  WHEELFIT_FAKE_NVML="$<TARGET_FILE:wheelfit_fake_nvml>" WHEELFIT_FAKE_CUDA="$<TARGET_FILE:wheelfit_fake_cuda>")

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

# The plugin tests' links (wine cannot make one; it reports a unix symlink as a reparse point):
# <build>/tests/plugin-links/fake -> the fake plugin's folder, .../cases -> all the cases.
set(_links ${WHEELFIT_TEST_PLUGIN_DIR}/../plugin-links)
add_test(NAME win.plugins.links COMMAND sh -c "mkdir -p '${_links}' && ln -sfn '${WHEELFIT_TEST_PLUGIN_DIR}/fake' '${_links}/fake' && ln -sfn '${WHEELFIT_TEST_PLUGIN_DIR}' '${_links}/cases'")
set_tests_properties(win.plugins.links PROPERTIES FIXTURES_SETUP win_plugin_links LABELS "windows")
foreach(_t IN ITEMS win.windows win.registry)
  if(TEST ${_t})
    set_tests_properties(${_t} PROPERTIES FIXTURES_REQUIRED win_plugin_links)
  endif()
endforeach()

# What wheelfit.dll and the plugin DLLs export: their API and nothing else (no libstdc++, Boost or
# OpenSSL symbol out of the static link).
find_program(WHEELFIT_MINGW_OBJDUMP NAMES x86_64-w64-mingw32-objdump)
if(WHEELFIT_MINGW_OBJDUMP)
  add_test(NAME win.exports.capi COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/windows/check_exports.sh ${WHEELFIT_MINGW_OBJDUMP}
           "^wheelfit_(version|resolve_json|explain_json|detect_json|doctor_json|free)$" $<TARGET_FILE:wheelfit_c>)
  add_test(NAME win.exports.plugins COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/windows/check_exports.sh ${WHEELFIT_MINGW_OBJDUMP}
           "^wheelfit_backend_entry$" $<TARGET_FILE:wheelfit_backend_cuda> $<TARGET_FILE:wheelfit_backend_rocm>
           $<TARGET_FILE:wheelfit_test_plugin_fake>)
  set_tests_properties(win.exports.capi win.exports.plugins PROPERTIES LABELS "windows")
endif()

# A C program built with MinGW against wheelfit.dll's import library, beside the DLL in <build>/lib
# (where Windows looks first), resolving a local index made by wheelfit-farmgen.
enable_language(C)
add_executable(wheelfit_capi_c windows/capi_resolve.c)
target_link_libraries(wheelfit_capi_c PRIVATE wheelfit_c)
set_target_properties(wheelfit_capi_c PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
add_dependencies(wheelfit_tests wheelfit_capi_c)
add_test(NAME win.capi.c COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/windows/run_capi_c.sh ${CMAKE_CROSSCOMPILING_EMULATOR}
         $<TARGET_FILE:wheelfit-farmgen> $<TARGET_FILE:wheelfit_capi_c> ${PROJECT_BINARY_DIR}/tests/capi-c)
set_tests_properties(win.capi.c PROPERTIES LABELS "windows;capi" TIMEOUT 300)
