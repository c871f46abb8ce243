# Renders one manual page: cmake -DSCDOC=... -DSOURCE=page.N.scd -DOUTPUT=page.N -DVERSION=...
# -P scdoc.cmake. The source's @PROJECT_VERSION@ becomes the version (only that: a page may
# contain other text between @ signs). scdoc takes the page's date from SOURCE_DATE_EPOCH when
# it is set, as in a package build, so the same source gives the same page.
file(READ "${SOURCE}" text)
string(REPLACE "@PROJECT_VERSION@" "${VERSION}" text "${text}")
set(input "${OUTPUT}.scd")
file(WRITE "${input}" "${text}")
execute_process(COMMAND "${SCDOC}" INPUT_FILE "${input}" OUTPUT_FILE "${OUTPUT}.tmp"
                ERROR_VARIABLE error RESULT_VARIABLE rc)
file(REMOVE "${input}")
if(NOT rc EQUAL 0 OR NOT error STREQUAL "")
  file(REMOVE "${OUTPUT}.tmp")
  message(FATAL_ERROR "scdoc cannot render ${SOURCE}: ${error}")
endif()
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
