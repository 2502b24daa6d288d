# The Windows zip (CPack ZIP; scripts/build-windows.sh builds it): wheelfit-<version>-win64.zip,
# one folder to unpack anywhere:
#   wheelfit.exe, wheelfit-farmgen.exe     the CLI and the local-index generator
#   plugins\wheelfit_cuda_backend.dll ...  the backend plugins (loaded from beside wheelfit.exe)
#   wheelfit.dll, lib\libwheelfit.dll.a    the C API and its MinGW import library
#   include\wheelfit\wheelfit.h, ...       the C API's and the plugin SDK's headers
#   README.md, COPYRIGHT.txt               the manual and the licence notice
# Everything is linked statically: nothing but Windows' own DLLs is needed.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION . COMPONENT cli)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION . RENAME COPYRIGHT.txt COMPONENT cli)
set(CPACK_GENERATOR ZIP)
set(CPACK_PACKAGE_NAME wheelfit)
set(CPACK_PACKAGE_VENDOR "The wheelfit developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_SYSTEM_NAME win64)
set(CPACK_PACKAGE_FILE_NAME "wheelfit-${PROJECT_VERSION}-win64")
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
set(CPACK_COMPONENTS_ALL cli runtime dev)
set(CPACK_STRIP_FILES ON)
include(CPack)
