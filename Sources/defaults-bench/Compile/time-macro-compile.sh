#!/bin/sh
# Times a debug compile of one @ObservableDefaults class with N persisted Int properties, for each N given
# (default 50 100 200 400), using the package's built macro plugin. Prints one tab-separated line per N:
#   compile<TAB>N<TAB>seconds
# which `defaults-bench --compile-times FILE` reads into its "Compile time" group.
#
#   swift build --build-tests                          # builds the plugin and the library's module
#   sh Sources/defaults-bench/Compile/time-macro-compile.sh [N …] > /tmp/compile-times.tsv
#   swift run -c release defaults-bench --only 8 --compile-times /tmp/compile-times.tsv
#
# It compiles to an object file (`-c`), not `-typecheck`: the definite-initialization pass, the part that
# grows with the property count, runs on SIL, after type checking.
# Environment: BUILD (default .build/debug); PLUGIN (default $BUILD/ObservableDefaultsMacros-tool); VARIANT=observable times a plain @Observable class instead,
# the compiler's own cost for the same number of init-accessor properties.
set -eu
BUILD=${BUILD:-.build/debug}
VARIANT=${VARIANT:-defaults}
PLUGIN=${PLUGIN:-$BUILD/ObservableDefaultsMacros-tool}
[ -x "$PLUGIN" ] || { echo "no plugin at $PLUGIN: run swift build first" >&2; exit 1; }
[ $# -gt 0 ] || set -- 50 100 200 400
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for n in "$@"; do
    file="$WORK/Class$n.swift"
    {
        if [ "$VARIANT" = observable ]; then
            echo "import Observation"
            echo "@Observable"
        else
            echo "import ObservableDefaults"
            echo "@ObservableDefaults"
        fi
        echo "final class Settings$n {"
        i=0
        while [ $i -lt "$n" ]; do
            echo "    var p$i = $i"
            i=$((i + 1))
        done
        echo "}"
    } > "$file"
    start=$(date +%s.%N)
    swiftc -swift-version 6 -Onone -g -parse-as-library -module-name CompileTime$n -c "$file" \
        -o "$WORK/Class$n.o" -I "$BUILD/Modules" -load-plugin-executable "$PLUGIN#ObservableDefaultsMacros" >&2
    end=$(date +%s.%N)
    printf 'compile\t%s\t%s\n' "$n" "$(echo "$end - $start" | bc)"
done
