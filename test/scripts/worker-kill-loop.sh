#!/bin/sh
# Issue 31 point 4: the killed-worker test repeated many times. Each iteration is a fresh database,
# a queued 1-day statistics backfill, three workers and one kill -9 (the points in turn: between
# the leaves of a split window, inside a write transaction, during the recovery of the dead one's
# job, after some requests), then every stored sum compared with the sandbox truth exactly.
# Prints one line per iteration and "worker kills: E exact, I inexact of N"; exits non-zero if any
# iteration was inexact.
#   DATABASE_URL=postgres://... test/scripts/worker-kill-loop.sh [ITERATIONS]   (default 40)
set -eu
cd "$(dirname "$0")/../.."
n="${1:-40}"
# About 40-70 s an iteration (three kills, one of them two) on 2 cores.
WORKER_KILL_ITERATIONS="$n" exec npx vitest run --project integration test/integration/worker-kill.test.ts
