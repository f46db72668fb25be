#!/bin/sh
# Writes the sample firmware files of this folder again with the current bitflash.
# Run from anywhere; a test (SampleFilesTests) checks that the committed files are what this writes.
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
swift build --product bitflash-lab
.build/debug/bitflash-lab sim samples Samples/firmware
