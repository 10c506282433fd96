// The child process used by cross-process tests: writes keys into a suite on command.
// TODO(store): commands.
