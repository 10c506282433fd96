#ifndef TEST_ENVIRONMENT_H
#define TEST_ENVIRONMENT_H

/// The private suites directory every test process uses: created, and exported as
/// OBSERVABLE_DEFAULTS_DIRECTORY, when the test binary is loaded (before any test runs), so no test can
/// open a suite in the user's ~/.config. Its `state` folder is exported as OBSERVABLE_DEFAULTS_STATE_DIRECTORY
/// (cloud local copies). NULL when it could not be created.
const char *od_test_suites_directory(void);

#endif
