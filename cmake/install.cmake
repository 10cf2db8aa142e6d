# What `cmake --install` puts beside the programs (each directory's own
# CMakeLists installs its binaries): man pages, bash completions, the
# ready-made and example policies, and the reference docs. Included from the
# top CMakeLists.txt after every add_subdirectory. Configure with
# -DCMAKE_INSTALL_PREFIX=/usr for the system's own paths (and the .deb).
include(GNUInstallDirs)

# Man pages, written by hand in man(7) macros (docs/man/), installed
# compressed as Debian wants them (gzip -9n: no name or time, reproducible).
set(RAMPART_MAN_PAGES rulec.1 rampart-policy.5 rampartd.8 rampartctl.8)
set(RAMPART_MAN_GZ "")
foreach(page ${RAMPART_MAN_PAGES})
  set(src ${CMAKE_SOURCE_DIR}/docs/man/${page})
  set(gz ${CMAKE_BINARY_DIR}/man/${page}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND gzip -9n -c ${src} > ${gz}
    DEPENDS ${src}
    COMMENT "Compressing man page ${page}")
  list(APPEND RAMPART_MAN_GZ ${gz})
  string(REGEX REPLACE ".*\\.([1-8])$" "\\1" section ${page})
  install(FILES ${gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
add_custom_target(rampart_man ALL DEPENDS ${RAMPART_MAN_GZ})

# bash-completion loads share/bash-completion/completions/<command> on demand.
install(FILES
  ${CMAKE_SOURCE_DIR}/completions/rampartd
  ${CMAKE_SOURCE_DIR}/completions/rampartctl
  ${CMAKE_SOURCE_DIR}/completions/rulec
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# Policies to start from (policies/, with their prefix lists) and the demo
# and scenario policies of examples/policies/.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/policies/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/rampart/policies)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/policies/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/rampart/examples/policies)

# Reference docs (operations.md comes with the systemd unit that points to it).
install(FILES
  ${CMAKE_SOURCE_DIR}/README.md
  ${CMAKE_SOURCE_DIR}/docs/policy.md
  ${CMAKE_SOURCE_DIR}/docs/policy.schema.json
  ${CMAKE_SOURCE_DIR}/docs/security.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
