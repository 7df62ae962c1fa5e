// The process's helper threads at a lower priority than its JavaScript thread, in a process that
// writes into a Postgres server (db/driver/connect.ts, when it opens one). The threads a Node
// process starts with besides it are V8's platform workers (the collector's concurrent marking and
// parallel scavenges, the optimizing compiler) and a signal watcher. The database's backends share
// the machine's cores with this process (on one machine, or a laptop with the API's server too),
// and the JavaScript thread, which a run waits on, queued for a core: `perf sched` counted 1.9 s
// of an 8 s bench run in which it could run but did not (docs/benchmarks.md, twenty-third
// sitting). With the helpers niced they take what the main thread leaves and yield to it when both
// want a core: 7 of 8 alternated engine runs were faster, 7% at the median. They still run at once
// on an idle core, and V8 finishes on the main thread what they leave undone, so the heap's limits
// hold; the peaks grew a little (memory-bounded.test.ts 224-229 MiB against 216-217). Not on the
// embedded database: PGlite runs on the JavaScript thread itself, with no backends to yield to,
// and its peaks are the closest to their bound (bench:memory's first embedded sync: 380-427 MiB in
// three runs, one of them with the helpers niced). Threads started later (libuv's pool, worker threads) inherit the
// priority of the thread that starts them. Linux only (a thread's priority is set by its id
// there); elsewhere, and where the system refuses, nothing changes.
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** How much lower (in nice steps) the helpers run than the main thread. */
export const HELPER_NICE_STEP = 10;

/** The highest nice value (the lowest priority). */
const NICE_MAX = 19;

/** Lowers the priority of this process's other threads below the main thread's; says how many it lowered. */
export function helpersYieldToMain(): number {
  if (process.platform !== "linux") return 0;
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return 0;
  }
  // getpriority of id 0 is the calling thread's on Linux: the main thread's, where the CLI starts.
  const nice = Math.min(NICE_MAX, getPriority() + HELPER_NICE_STEP);
  let lowered = 0;
  for (const tid of tids) {
    if (Number(tid) === process.pid) continue;
    try {
      setPriority(Number(tid), nice);
      lowered += 1;
    } catch {
      // A thread that has ended meanwhile: nothing to lower.
    }
  }
  return lowered;
}
