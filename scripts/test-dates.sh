#!/usr/bin/env bash
# The integration tier with the clock set to other dates: each run builds its demo data ending on that day and
# serves "now" from it (libfaketime, Debian's package `faketime`), so a test that leans on the day it runs shows up.
# Usage: scripts/test-dates.sh ['YYYY-MM-DD HH:MM:SS' …]   (default: the spread below; times are UTC)
set -uo pipefail
cd "$(dirname "$0")/.."
command -v faketime >/dev/null || { echo "faketime is not installed (Debian: apt-get install faketime)" >&2; exit 2; }

if [ "$#" -gt 0 ]; then
  dates=("$@")
else
  # A year's spread: months' last days (31 Dec, 31 Jan, 30 Jun), 29 February, New York's clock change in spring
  # (14 March 2027) and autumn (7 November 2027) with the days around them, and a run that crosses midnight UTC.
  dates=(
    '2026-12-31 12:00:00'
    '2027-01-31 06:00:00'
    '2027-03-13 15:00:00'
    '2027-03-14 12:00:00'
    '2027-03-15 03:00:00'
    '2027-06-30 23:57:00'
    '2027-11-07 12:00:00'
    '2027-11-08 18:00:00'
    '2028-02-29 12:00:00'
  )
fi

# Node's timers run on the monotonic clock, which stays real; only the wall clock moves.
export FAKETIME_DONT_FAKE_MONOTONIC=1
failed=()
for date in "${dates[@]}"; do
  echo "=== integration tier at ${date} UTC"
  if ! TZ=UTC faketime -f "@${date}" npx jest --selectProjects integration --maxWorkers 2; then failed+=("${date}"); fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'failed at: %s\n' "${failed[@]}"
  exit 1
fi
echo "passed at all ${#dates[@]} dates"
