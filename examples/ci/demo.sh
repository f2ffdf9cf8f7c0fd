#!/usr/bin/env sh
# The release gate end to end, offline: a baseline run, a candidate with two
# flaky cases, a candidate with a critical regression; gate each against the
# baseline. Run from the repository root: sh examples/ci/demo.sh [OUT_DIR]
# (--allow-code: the example suite's multi-step cases run its own Python tools,
# examples/support/env/orders.py; never give it for a pull request's suite.)
set -u
out=${1:-runs/gate-demo}
rm -rf "$out" && mkdir -p "$out"

toolproof run examples/support -m scripted:examples/support/script.yaml \
  --repeats 3 --quiet --no-cache --allow-code -o "$out/base" > /dev/null
toolproof run examples/support -m scripted:examples/ci/candidate-flaky.yaml \
  --repeats 3 --quiet --no-cache --allow-code -o "$out/flaky" > /dev/null
toolproof run examples/support -m scripted:examples/ci/candidate-regressed.yaml \
  --repeats 3 --quiet --no-cache --allow-code -o "$out/regressed" > /dev/null

for candidate in flaky regressed; do
  toolproof gate "$out/$candidate" --baseline "$out/base" --require-significance --allow-code \
    --markdown "$out/$candidate.md" --junit "$out/$candidate.xml" \
    --json "$out/$candidate.json" > "$out/$candidate.txt"
  echo "gate $candidate: exit code $?  (report: $out/$candidate.md)"
done
