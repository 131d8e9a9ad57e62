# collsim_layer(<name> SOURCES ... DEPS ... PRIVATE_DEPS ...)
# One static library per layer, named collsim_<name> with the ALIAS collsim::<name>.
function(collsim_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(COLLSIM_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(collsim_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(collsim_${name} STATIC ${ARG_SOURCES})
  add_library(collsim::${name} ALIAS collsim_${name})
  target_include_directories(collsim_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_compile_features(collsim_${name} PUBLIC cxx_std_20)
  target_link_libraries(collsim_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  collsim_set_warnings(collsim_${name})
endfunction()
