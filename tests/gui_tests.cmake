# Tests for kforge_ui, included from tests/CMakeLists.txt when the GUI is built. Same helper as the core
# tests (offscreen platform, real worker where one is built); they link the UI library too.
find_package(Qt6 6.4 REQUIRED COMPONENTS Widgets Test)

kforge_add_test(tst_treelayout LIBS kforge_ui TIMEOUT 120)
kforge_add_test(tst_diff LIBS kforge_ui TIMEOUT 120)
kforge_add_test(tst_timeline LIBS kforge_ui TIMEOUT 120)
kforge_add_test(tst_gui LIBS kforge_ui TIMEOUT 300)
if(TARGET kforge-cli)
  target_compile_definitions(tst_gui PRIVATE KFORGE_CLI_PATH="$<TARGET_FILE:kforge-cli>")
  add_dependencies(tst_gui kforge-cli)
endif()
# Campaigns from the window: the plan against core's planner, a campaign through the real worker.
kforge_add_test(tst_guicampaign LIBS kforge_ui TIMEOUT 600)
# The timeline before and after a pack: the profile kforge-cli profile --pack writes, opened with its workload.
kforge_add_test(tst_guiprofile LIBS kforge_ui TIMEOUT 120)
# The LLM proposer in the window: Settings, keys, the OpenRouter sign-in against tests/oauth_server.py,
# and a search against tests/llm_server.py through the real worker.
kforge_add_test(tst_guillm LIBS kforge_ui TIMEOUT 400)
# The keychain's own path, against a Secret Service of the test's own (tests/with_keyring.sh), where D-Bus
# and GNOME Keyring are installed (packaging/install-deps.sh installs them).
find_program(KFORGE_DBUS_RUN_SESSION dbus-run-session)
find_program(KFORGE_GNOME_KEYRING gnome-keyring-daemon)
if(KFORGE_DBUS_RUN_SESSION AND KFORGE_GNOME_KEYRING)
  add_test(NAME tst_guillm_keychain COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/with_keyring.sh $<TARGET_FILE:tst_guillm>
           keychainStoresAndReadsBack settingsKeepTheChoiceAndNotTheKey signInExchangesTheCode)
  set_tests_properties(tst_guillm_keychain PROPERTIES TIMEOUT 120 ENVIRONMENT "QT_QPA_PLATFORM=offscreen;KFORGE_EXPECT_KEYCHAIN=1")
endif()

# The desktop entry and the AppStream metadata the package installs (packaging/cpack.cmake), where the
# validators are installed (desktop-file-utils, appstream).
find_program(KFORGE_DESKTOP_FILE_VALIDATE desktop-file-validate)
find_program(KFORGE_APPSTREAMCLI appstreamcli)
if(KFORGE_DESKTOP_FILE_VALIDATE)
  add_test(NAME desktop_entry COMMAND ${KFORGE_DESKTOP_FILE_VALIDATE} ${PROJECT_SOURCE_DIR}/resources/org.kforge.kforge.desktop)
endif()
if(KFORGE_APPSTREAMCLI)
  add_test(NAME appstream_metadata
           COMMAND ${KFORGE_APPSTREAMCLI} validate --no-net ${PROJECT_SOURCE_DIR}/resources/org.kforge.kforge.metainfo.xml)
endif()
