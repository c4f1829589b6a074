# Installation and the Debian package: `cpack -G DEB` in a full build folder (worker included) makes
# kforge_<version>_<arch>.deb with kforge, kforge-cli, kforge-worker and kforge-cpu-runner in one
# folder (the GUI and the CLI start the worker beside themselves, and the worker looks for the CPU
# sandbox's runner beside itself), the desktop entry, the icon, the AppStream metadata and the
# session file type. Included from the top-level CMakeLists.txt after every target exists.
include(GNUInstallDirs)

foreach(target kforge kforge-cli kforge-worker kforge-cpu-runner)
  if(TARGET ${target})
    install(TARGETS ${target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  else()
    message(STATUS "kforge packaging: ${target} is not built in this configuration and will not be installed")
  endif()
endforeach()

set(KFORGE_APP_ID org.kforge.kforge)
set(KFORGE_RESOURCES ${PROJECT_SOURCE_DIR}/resources)
if(TARGET kforge)
  install(FILES ${KFORGE_RESOURCES}/${KFORGE_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${KFORGE_RESOURCES}/${KFORGE_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  install(FILES ${KFORGE_RESOURCES}/kforge.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps
          RENAME ${KFORGE_APP_ID}.svg)
  install(FILES ${KFORGE_RESOURCES}/kforge.png DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/256x256/apps
          RENAME ${KFORGE_APP_ID}.png)
  install(FILES ${KFORGE_RESOURCES}/kforge-session.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages)
endif()
# The Python helpers (capture, torch.compile and model timing) where kforge-cli looks for them.
file(GLOB KFORGE_PYTHON_HELPERS ${PROJECT_SOURCE_DIR}/python/*.py)
install(FILES ${KFORGE_PYTHON_HELPERS} DESTINATION ${CMAKE_INSTALL_DATADIR}/kforge/python)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME kforge)
set(CPACK_PACKAGE_VENDOR "The kforge developers")
set(CPACK_PACKAGE_CONTACT "The kforge developers <maintainers@kforge.org>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "kernel search, verification and inspection for PyTorch workloads")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "kforge generates, verifies and optimizes GPU and CPU kernels for PyTorch operators with Monte Carlo "
  "tree search, and inspects the search: the family tree of attempts, code, diffs, compile logs, "
  "verification against float64 and timings.\n"
  "It holds the Qt inspector (kforge), the headless CLI (kforge-cli), the evaluation worker "
  "(kforge-worker) and the CPU sandbox runner (kforge-cpu-runner).")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://kforge.org")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # kforge_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The shared libraries (Qt 6, QScintilla, SQLite, libtorch, libseccomp, ...) come from dpkg-shlibdeps
# over the installed programs; what is run rather than linked is named here: bubblewrap jails CPU
# candidates, and the worker compiles them with the system C++ compiler.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap, g++")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "xvfb, openssh-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-client, nvidia-cuda-toolkit")

include(CPack)
