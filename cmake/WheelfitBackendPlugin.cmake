# wheelfit_add_backend_plugin(): builds a wheelfit backend plugin. Installed with the wheelfit CMake
# package (lib/cmake/wheelfit/) and used in-tree by wheelfit_backend_plugin() (core/CMakeLists.txt).
include_guard(GLOBAL)

# wheelfit_add_backend_plugin(<target> SOURCES <src>... [POLICY <file.json>] [LIBS <lib>...]
#                             [OUTPUT_DIRECTORY <dir>])
#
# A CMake MODULE, lib<target>.so (the loader takes the backend's name from its descriptor, never
# from the file name): C++20, hidden visibility (inline functions too), linked with --no-undefined
# (a missing symbol is a link error, not a load failure) and a version script exporting
# wheelfit_backend_entry and nothing else; it links wheelfit::plugin_sdk and LIBS (PRIVATE).
# POLICY: the backend's policy data (format 2), compiled in as `std::string_view
# <id>_policy_json()` in the global namespace, where <id> is <target> with each character outside
# [A-Za-z0-9_] made '_' (string(MAKE_C_IDENTIFIER)); its text is a NUL-terminated static array,
# so `.data()` can be the descriptor's policy_json. Declare it in your source:
# `std::string_view <id>_policy_json();`. Rebuilt when the file changes; a file that is not a JSON
# object fails the build. OUTPUT_DIRECTORY: where the .so is written (default: the current
# binary folder). Linux: an ELF lib<target>.so; Windows (MinGW-w64): <target>.dll, linked
# statically (no libstdc++ DLL), exporting what the entry point's declaration marks dllexport.
function(wheelfit_add_backend_plugin target)
  cmake_parse_arguments(ARG "" "POLICY;OUTPUT_DIRECTORY" "SOURCES;LIBS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "wheelfit_add_backend_plugin(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "wheelfit_add_backend_plugin(${target}): SOURCES is required")
  endif()
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT (WIN32 AND MINGW))
    message(FATAL_ERROR "wheelfit_add_backend_plugin(${target}): wheelfit plugins are ELF shared libraries "
                        "(Linux) or MinGW-w64 DLLs (Windows); this is ${CMAKE_SYSTEM_NAME}")
  endif()
  set(_here "${CMAKE_CURRENT_FUNCTION_LIST_DIR}")
  add_library(${target} MODULE ${ARG_SOURCES})

  if(ARG_POLICY)
    get_filename_component(_policy "${ARG_POLICY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    string(MAKE_C_IDENTIFIER "${target}" _id)
    set(_embedded "${CMAKE_CURRENT_BINARY_DIR}/${target}_policy_json.cpp")
    add_custom_command(
      OUTPUT "${_embedded}"
      COMMAND "${CMAKE_COMMAND}" "-DINPUT=${_policy}" "-DOUTPUT=${_embedded}" "-DFUNCTION=${_id}_policy_json"
              -P "${_here}/wheelfit_embed_text.cmake"
      DEPENDS "${_policy}" "${_here}/wheelfit_embed_text.cmake"
      COMMENT "Embedding ${ARG_POLICY} into ${target}"
      VERBATIM)
    target_sources(${target} PRIVATE "${_embedded}")
  endif()

  target_link_libraries(${target} PRIVATE wheelfit::plugin_sdk ${ARG_LIBS})
  if(WIN32)
    # PE: no version script (GNU ld ignores it there); exports are the dllexport-marked entry.
    target_link_options(${target} PRIVATE LINKER:--no-undefined -static -static-libgcc -static-libstdc++)
    set_target_properties(${target} PROPERTIES PREFIX "")
  else()
    target_link_options(${target} PRIVATE LINKER:--no-undefined "LINKER:--version-script=${_here}/wheelfit_backend_plugin.map")
  endif()
  set_target_properties(${target} PROPERTIES
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS "${_here}/wheelfit_backend_plugin.map")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}"
                                               RUNTIME_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIRECTORY}")
  endif()
endfunction()
