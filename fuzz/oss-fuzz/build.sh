#!/bin/bash -eu
# OSS-Fuzz build script (also run locally by scripts/oss-fuzz-build-test): builds every
# cargo-fuzz target of fuzz/ with the sanitizer OSS-Fuzz asks for and puts into $OUT,
# for each target, the binary, a seed corpus zip and (for `parse`) a dictionary.
#
# Environment (set by OSS-Fuzz; scripts/oss-fuzz-build-test sets the same):
#   SRC                 where the project is checked out ($SRC/relax-semantics)
#   OUT                 where binaries, seed corpora and dictionaries go
#   CARGO_BUILD_TARGET  the target triple (x86_64-unknown-linux-gnu)
#   SANITIZER           address (the only one project.yaml lists)
#   PROJECT_DIR         optional: the checkout, if not $SRC/relax-semantics
PROJECT_DIR="${PROJECT_DIR:-$SRC/relax-semantics}"
SANITIZER="${SANITIZER:-address}"
cd "$PROJECT_DIR"

# Shared libraries beyond the C runtime go to $OUT/lib (the runner image is not the
# builder image), and the binaries look for them there.
export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-Wl,-rpath,\$ORIGIN/lib"

cargo fuzz build --fuzz-dir fuzz -O --debug-assertions --sanitizer "$SANITIZER"

TARGETS=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^fuzz$')
BIN_DIR="target/$CARGO_BUILD_TARGET/release"
mkdir -p "$OUT/lib"
for t in $TARGETS; do
    cp "$BIN_DIR/$t" "$OUT/$t"
done
# Every shared library a target links besides glibc's and the compiler runtime's (the
# targets do not call the prover, so libz3 is not among them).
for t in $TARGETS; do
    for lib in $(ldd "$OUT/$t" | awk '/=> \// { print $3 }' |
            grep -vE '/(libc|libm|libgcc_s|libpthread|libdl|librt|ld-linux[^/]*)\.so'); do
        # (once copied, the next target's rpath already finds it in $OUT/lib)
        [ "$(dirname "$lib")" = "$OUT/lib" ] || cp -L "$lib" "$OUT/lib/"
    done
done

# Seeds, built from corpus/: its .rx files. `parse` reads them as text; the other
# targets hand their bytes to the generator (any bytes make a valid program, and these
# make varied ones). A libFuzzer corpus kept locally (fuzz/corpus/<target>, not in git)
# is added when present, e.g. after merging corpora from several machines.
SEEDS=$(mktemp -d)
find corpus -name '*.rx' -print0 | xargs -0 -I{} sh -c 'cp "$1" "$2/$(echo "$1" | tr / _)"' _ {} "$SEEDS"
for t in $TARGETS; do
    rm -f "$OUT/${t}_seed_corpus.zip"
    (cd "$SEEDS" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
    if [ "$t" != parse ] && [ -d "fuzz/corpus/$t" ]; then
        (cd "fuzz/corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
    fi
done
rm -rf "$SEEDS"

# The dictionary: Python keywords, TVMScript constructs, dtypes, every operator and
# TIR intrinsic (fuzz/tests/oss_fuzz.rs keeps it in step with the operator table).
cp fuzz/oss-fuzz/parse.dict "$OUT/parse.dict"
