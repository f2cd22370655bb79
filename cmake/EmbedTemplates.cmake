# Embeds the CUDA templates into the library as strings, so a deployed binary needs no
# source tree. Each file becomes one entry {"bandjit/<name>", text} of bandjit::embedded_templates().
function(bandjit_embed_templates)
  cmake_parse_arguments(E "" "OUTPUT;DIR" "FILES" ${ARGN})
  set(inputs)
  foreach(f ${E_FILES})
    list(APPEND inputs ${E_DIR}/${f})
  endforeach()
  add_custom_command(
    OUTPUT ${E_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${E_OUTPUT} -DDIR=${E_DIR} "-DFILES=${E_FILES}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_templates_script.cmake
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/cmake/embed_templates_script.cmake
    COMMENT "Embedding CUDA templates"
    VERBATIM)
endfunction()
