#!/usr/bin/env bash
# The integration tier at other dates: each run builds its demo data ending on that day and its tests and service
# read the clock from that instant on (TEST_NOW, test/integration/support/clock.ts), so a test that leans on the
# day it runs shows up.
# Usage: scripts/test-dates.sh [YYYY-MM-DDTHH:MM:SSZ …]   (default: the spread below)
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
  instants=("$@")
else
  # A year's spread: months' last days (31 December, 31 January, 30 June), 29 February, New York's clock change in
  # spring (14 March 2027) and autumn (7 November 2027) with the days around them, and a run that crosses midnight.
  instants=(
    2026-12-31T12:00:00Z
    2027-01-31T06:00:00Z
    2027-03-13T15:00:00Z
    2027-03-14T12:00:00Z
    2027-03-15T03:00:00Z
    2027-06-30T23:57:00Z
    2027-11-07T12:00:00Z
    2027-11-08T18:00:00Z
    2028-02-29T12:00:00Z
  )
fi

failed=()
for instant in "${instants[@]}"; do
  echo "=== integration tier at ${instant}"
  if ! TEST_NOW="${instant}" npx jest --selectProjects integration --maxWorkers 2; then failed+=("${instant}"); fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'failed at: %s\n' "${failed[@]}"
  exit 1
fi
echo "passed at all ${#instants[@]} instants"
