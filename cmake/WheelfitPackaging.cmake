# Debian packages (CPack, DEB generator; scripts/package.sh builds them):
#   wheelfit          the CLI, wheelfit-farmgen, the backend plugins, bash completion   (component cli)
#   libwheelfit0      the C API, libwheelfit.so.0 (SONAME-versioned)                     (component runtime)
#   libwheelfit-dev   headers, static libraries, the CMake package, wheelfit.pc         (component dev)
# Depends are computed from the shared libraries by dpkg-shlibdeps; libwheelfit0 ships a shlibs
# file. The backends are plugins installed by `wheelfit`, which the C API loads too: libwheelfit0
# depends on it.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME wheelfit)
set(CPACK_PACKAGE_VENDOR "The wheelfit developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "The wheelfit developers <wheelfit@comfy-forge.invalid>")
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://comfy-forge.github.io/cuda-wheels/")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL cli runtime dev)
set(_deb_version "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME wheelfit)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_CLI_DESCRIPTION "which prebuilt GPU wheel will run on this machine
wheelfit answers, for one exact machine, which prebuilt CUDA (or ROCm, or any
backend plugin's) wheel will actually run there: it judges every candidate of a
PEP 503 wheel index on the GPU architecture, the CUDA line, the torch version,
the CPython ABI, the CPU architecture, the OS and the glibc floor, and writes
hash-pinned direct-URL dependencies into a pixi.toml. When nothing fits it says
which demand failed, for every candidate. It also downloads and verifies the
picks and publishes a static mirror for a fleet of machines.
.
This package holds the wheelfit command, wheelfit-farmgen (a synthetic local
index to try it offline), the CUDA and ROCm backend plugins and bash
completion.")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libwheelfit0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "wheelfit (= ${_deb_version})")
# ldconfig through a dpkg trigger, as lintian wants (CPack's postinst/postrm call it too).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "which prebuilt GPU wheel will run on this machine - C library
wheelfit judges the wheels of a PEP 503 index against one machine (GPU
architecture, CUDA line, torch, CPython ABI, CPU, OS, glibc) and pins the
answer. This package holds its stable C API, JSON in and JSON out
(libwheelfit.so.0). The backend plugins it loads come with the wheelfit
package.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libwheelfit-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# The static libraries need these to link; the headers include Boost's.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libwheelfit0 (= ${_deb_version}), libboost1.81-dev, libboost-json1.81-dev, \
libtomlplusplus-dev, libfmt-dev, libssl-dev, zlib1g-dev, libkrb5-dev, pkg-config")
set(CPACK_DEBIAN_DEV_DESCRIPTION "which prebuilt GPU wheel will run on this machine - development files
wheelfit judges the wheels of a PEP 503 index against one machine and pins the
answer. This package holds what building against it needs: the headers of the
C API (pkg-config wheelfit, or the CMake target wheelfit::capi), the C++
library (wheelfit::wheelfit, static) and the backend plugin SDK
(wheelfit::plugin_sdk, wheelfit_add_backend_plugin()).")

# Each package's /usr/share/doc/<package>: the copyright file and a Debian changelog (gzip -9n,
# as lintian wants it).
find_program(WHEELFIT_GZIP gzip)
foreach(_component cli runtime dev)
  string(TOUPPER ${_component} _upper)
  set(_package ${CPACK_DEBIAN_${_upper}_PACKAGE_NAME})
  set(_doc ${PROJECT_BINARY_DIR}/packaging/${_package})
  file(MAKE_DIRECTORY ${_doc})
  configure_file(${PROJECT_SOURCE_DIR}/packaging/changelog.Debian.in ${_doc}/changelog.Debian @ONLY)
  if(WHEELFIT_GZIP)
    execute_process(COMMAND ${WHEELFIT_GZIP} -9nf ${_doc}/changelog.Debian)
    install(FILES ${_doc}/changelog.Debian.gz DESTINATION share/doc/${_package} COMPONENT ${_component})
  endif()
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION share/doc/${_package} COMPONENT ${_component})
endforeach()

include(CPack)
