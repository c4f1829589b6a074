# kforge_embed_entries(OUT DELIMITER file...): C++ initializer lines {"name", R"DELIMITER(text)DELIMITER"},
# one per file, for a generated source that compiles text files into the engine. CMake re-runs when any
# of the files changes.
function(kforge_embed_entries out delimiter)
  set(entries "")
  foreach(path ${ARGN})
    file(READ ${path} text)
    string(FIND "${text}" ")${delimiter}\"" clash)
    if(NOT clash EQUAL -1)
      message(FATAL_ERROR "${path} contains the raw-string delimiter ')${delimiter}\"'")
    endif()
    get_filename_component(name ${path} NAME)
    string(APPEND entries "        {\"${name}\", R\"${delimiter}(${text})${delimiter}\"},\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  endforeach()
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()
