# Toolchain file: Windows x86_64 with Debian's MinGW-w64 g++ 12, the posix thread model (the
# win32 model has no std::thread / std::mutex in GCC 12; Debian's plain x86_64-w64-mingw32-g++
# alternative points at it by default, so the -posix names are given here). scripts/build-windows.sh
# passes WHEELFIT_OPENSSL_ROOT, the cross-built OpenSSL (scripts/build-openssl-mingw.sh).
# docs/decisions/0031-windows-build.md.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_VERSION 10.0)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_AR x86_64-w64-mingw32-gcc-ar-posix CACHE FILEPATH "")
set(CMAKE_RANLIB x86_64-w64-mingw32-gcc-ranlib-posix CACHE FILEPATH "")
# Only the MinGW sysroot and the OpenSSL sysroot: never /usr/include or /usr/lib (glibc's headers
# and Linux libraries). The header-only dependencies come in through cmake/WindowsDeps.cmake.
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 ${WHEELFIT_OPENSSL_ROOT})
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES WHEELFIT_OPENSSL_ROOT)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
