// The process's helper threads at a lower priority than its JavaScript thread. The threads a Node
// process starts with besides it are V8's platform workers (the collector's concurrent marking and
// parallel scavenges, the optimizing compiler) and a signal watcher. On a machine whose cores the
// database's backends (and, on a laptop, the API's server) share, the JavaScript thread is what a
// run waits on, and it queued for a core behind its own helpers: `perf sched` counted 1.9 s of an
// 8 s bench run in which it could run but did not (docs/benchmarks.md, twenty-third sitting). With
// the helpers niced, they take what the main thread leaves, and yield to it when both want a core:
// 7 of 8 alternated bench runs were faster, 7% at the median. They still run at once on an idle
// core, and V8 finishes on the main thread what they leave undone, so the heap's limits hold.
// Threads started later (libuv's pool, worker threads) inherit the priority of the thread that
// starts them, the main thread's. Linux only (a thread's priority is set by its id there); elsewhere,
// and where the system refuses, nothing changes.
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
