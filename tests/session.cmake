# tests/session.cmake: the engine's session (engine/session.h): checks, hooks, re-arming.
dbtr_add_test_file(SOURCE test_session.c LABELS cpu LIBS dbtr_core)
