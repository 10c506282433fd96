// Runs when the test binary is loaded, before any test in any test target: points the library's suites
// directory at a fresh temporary directory (and the managed and system layers' directories into it) (the variable wins over XDG_CONFIG_HOME and HOME) and its cloud
// state directory (local copies) at a `state` folder inside it, and the temporary directory (TMPDIR) at
// another fresh directory, clears a cloud address the developer may
// have exported (tests must never reach a real cluster by accident), and removes both directories when
// the process exits. Swift Testing has no process-wide set-up hook; a constructor is
// the one place that runs before every test whatever the filter or order.
#define _XOPEN_SOURCE 700
#include "TestEnvironment.h"
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char directory[4096];
static char state_directory[4200];
static char temporary_directory[4200];
static char layers_directory[4200];
static char managed_directory[4300];
static char system_directory[4300];
static int temporary_created = 0;
static int created = 0;

const char *od_test_suites_directory(void) { return created ? directory : NULL; }

static int remove_entry(const char *path, const struct stat *info, int flag, struct FTW *walk) {
    (void)info; (void)flag; (void)walk;
    return remove(path);
}

static void remove_directory(void) {
    if (created) nftw(directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (temporary_created) nftw(temporary_directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

__attribute__((constructor)) static void install_test_environment(void) {
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] != '/') base = "/tmp";
    snprintf(directory, sizeof directory, "%s/observable-defaults-tests-XXXXXX", base);
    if (mkdtemp(directory) == NULL) {
        fprintf(stderr, "TestEnvironment: cannot create a temporary suites directory under %s\n", base);
        abort();  // never fall back to the user's ~/.config
    }
    created = 1;
    setenv("OBSERVABLE_DEFAULTS_DIRECTORY", directory, 1);
    unsetenv("OBSERVABLE_DEFAULTS_STANDARD_SUITE");
    snprintf(state_directory, sizeof state_directory, "%s/state", directory);
    setenv("OBSERVABLE_DEFAULTS_STATE_DIRECTORY", state_directory, 1);
    // The layers that live under /etc by default (managed files, $XDG_CONFIG_DIRS) are placed in the suites
    // directory too, so no test ever reads an administrator's files; child processes inherit the variables.
    snprintf(layers_directory, sizeof layers_directory, "%s/layers", directory);
    snprintf(managed_directory, sizeof managed_directory, "%s/managed", layers_directory);
    snprintf(system_directory, sizeof system_directory, "%s/xdg", layers_directory);
    if (mkdir(layers_directory, 0700) != 0 || mkdir(managed_directory, 0700) != 0 || mkdir(system_directory, 0700) != 0) {
        fprintf(stderr, "TestEnvironment: cannot create the layer directories under %s\n", directory);
        abort();  // never fall back to /etc
    }
    setenv("OBSERVABLE_DEFAULTS_MANAGED_DIRECTORY", managed_directory, 1);
    setenv("XDG_CONFIG_DIRS", system_directory, 1);
    unsetenv("OBSERVABLE_DEFAULTS_CLOUD");
    unsetenv("OBSERVABLE_DEFAULTS_DEV_MODE");
    unsetenv("XCODE_RUNNING_FOR_PREVIEWS");
    // Everything temporary goes into a directory of its own, removed at exit whatever a test does: the tests' own
    // directories (NSTemporaryDirectory() reads TMPDIR), the etcd members' data, and what child processes
    // leave (the Swift driver of every swiftc, swift and docc run leaves a TemporaryDirectory.* behind).
    // Others may pass through it (not list it), as through /tmp: tests run agents as another user on
    // directories they make there.
    snprintf(temporary_directory, sizeof temporary_directory, "%s/observable-defaults-tests-tmp-XXXXXX", base);
    if (mkdtemp(temporary_directory) != NULL && chmod(temporary_directory, 0711) == 0) {
        temporary_created = 1;
        setenv("TMPDIR", temporary_directory, 1);
    }
    atexit(remove_directory);
}
