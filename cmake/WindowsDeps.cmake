# The dependencies of a Windows (MinGW-w64) build, which a cross build cannot find_package():
# Debian's Boost, fmt, toml++ and Catch2 are Linux packages, but their headers serve MinGW as they
# are (../shared/docs/WINDOWS-PORT.md, section 3). They are reached through a folder of links
# (<build>/deps-include: boost, fmt, toml++, catch2), never through /usr/include, which would
# bring glibc's headers. Boost.JSON is compiled from its src.hpp (wheelfit_boost_json), fmt is
# header-only (FMT_HEADER_ONLY), toml++ header-only (its default). zlib is Debian's
# libz-mingw-w64-dev, static; OpenSSL the cross-built static sysroot (WHEELFIT_OPENSSL_ROOT).
# Everything links statically: wheelfit.exe, wheelfit.dll and the plugins need no DLL beyond
# Windows' own. docs/decisions/0031-windows-build.md.
include_guard(GLOBAL)

set(_deps_include "${PROJECT_BINARY_DIR}/deps-include")
file(MAKE_DIRECTORY "${_deps_include}")
foreach(_dir boost fmt toml++ catch2)
  if(NOT EXISTS "${_deps_include}/${_dir}")
    if(NOT IS_DIRECTORY "/usr/include/${_dir}")
      message(FATAL_ERROR "/usr/include/${_dir} is missing: scripts/install-deps.sh --windows installs it")
    endif()
    file(CREATE_LINK "/usr/include/${_dir}" "${_deps_include}/${_dir}" SYMBOLIC)
  endif()
endforeach()

# Windows 10 APIs, no <windows.h> min/max macros, the lean header set (every file, so a unity
# batch sees the same <windows.h> whichever file includes it first).
add_compile_definitions(_WIN32_WINNT=0x0A00 WINVER=0x0A00 NTDDI_VERSION=0x0A000000 WIN32_LEAN_AND_MEAN NOMINMAX
                        UNICODE _UNICODE)
# No libstdc++-6.dll, libgcc_s_seh-1.dll or libwinpthread-1.dll beside the binaries.
add_link_options(-static -static-libgcc -static-libstdc++)

add_library(wheelfit_dep_headers INTERFACE)
target_include_directories(wheelfit_dep_headers SYSTEM INTERFACE "${_deps_include}")

add_library(Boost::headers INTERFACE IMPORTED GLOBAL)
# Asio's sockets need Winsock and, for its acceptors (AcceptEx, GetAcceptExSockaddrs), mswsock.
set_target_properties(Boost::headers PROPERTIES INTERFACE_LINK_LIBRARIES "wheelfit_dep_headers;ws2_32;mswsock"
                      INTERFACE_COMPILE_DEFINITIONS "BOOST_ALL_NO_LIB")
# Boost.JSON's implementation, compiled once.
file(WRITE "${PROJECT_BINARY_DIR}/boost_json_src.cpp.in" "#include <boost/json/src.hpp>\n")
configure_file("${PROJECT_BINARY_DIR}/boost_json_src.cpp.in" "${PROJECT_BINARY_DIR}/boost_json_src.cpp" COPYONLY)
add_library(wheelfit_boost_json STATIC "${PROJECT_BINARY_DIR}/boost_json_src.cpp")
target_link_libraries(wheelfit_boost_json PUBLIC Boost::headers)
set_target_properties(wheelfit_boost_json PROPERTIES UNITY_BUILD OFF)
add_library(Boost::json ALIAS wheelfit_boost_json)

add_library(fmt::fmt INTERFACE IMPORTED GLOBAL)
set_target_properties(fmt::fmt PROPERTIES INTERFACE_LINK_LIBRARIES wheelfit_dep_headers
                      INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED GLOBAL)
set_target_properties(tomlplusplus::tomlplusplus PROPERTIES INTERFACE_LINK_LIBRARIES wheelfit_dep_headers
                      INTERFACE_COMPILE_DEFINITIONS "TOML_HEADER_ONLY=1;TOML_SHARED_LIB=0")
add_library(Catch2::Catch2 INTERFACE IMPORTED GLOBAL)
set_target_properties(Catch2::Catch2 PROPERTIES INTERFACE_LINK_LIBRARIES wheelfit_dep_headers)

set(ZLIB_USE_STATIC_LIBS ON)
find_package(ZLIB REQUIRED)
set(OPENSSL_USE_STATIC_LIBS ON)
if(WHEELFIT_OPENSSL_ROOT)
  set(OPENSSL_ROOT_DIR "${WHEELFIT_OPENSSL_ROOT}")
endif()
find_package(OpenSSL 3 REQUIRED)
# A static OpenSSL needs Windows' socket and crypto libraries, which FindOpenSSL does not add.
set_property(TARGET OpenSSL::Crypto APPEND PROPERTY INTERFACE_LINK_LIBRARIES ws2_32 crypt32 bcrypt)
set_property(TARGET OpenSSL::SSL APPEND PROPERTY INTERFACE_LINK_LIBRARIES ws2_32 crypt32 bcrypt)
find_package(Threads REQUIRED)

# Tests run through wine (ctest's CMAKE_CROSSCOMPILING_EMULATOR), in a prefix of the build's own:
# <build>/wine-run.sh (cmake/wine-run.sh.in) creates it on first use and keeps a wineserver for the run.
find_program(WHEELFIT_WINE wine)
if(WHEELFIT_WINE AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  set(WHEELFIT_WINEPREFIX "${PROJECT_BINARY_DIR}/wine-prefix")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/wine-run.sh.in" "${PROJECT_BINARY_DIR}/wine-run.sh" @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${PROJECT_BINARY_DIR}/wine-run.sh")
endif()
