// The engine's garbage collections during a bench run, from Node's `gc` performance entries: how
// many scavenges and full collections ran, and their pauses on the main thread. Printed beside the
// CPU a row, so that a run which spends its time collecting shows it: under the CLI's heap limit V8
// once ran 86 full collections in an 8-day run (docs/benchmarks.md, fourteenth sitting).
import { constants, type PerformanceEntry, PerformanceObserver } from "node:perf_hooks";

export interface GcCounts {
  scavenges: number;
  scavengeMs: number;
  fullCollections: number;
  fullMs: number;
}

/** Counts collections from now until `stop()`. */
export function watchGc(): { stop(): GcCounts } {
  const counts: GcCounts = { scavenges: 0, scavengeMs: 0, fullCollections: 0, fullMs: 0 };
  const add = (list: PerformanceEntry[]) => {
    for (const e of list) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        counts.scavenges += 1;
        counts.scavengeMs += e.duration;
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        counts.fullCollections += 1;
        counts.fullMs += e.duration;
      }
    }
  };
  const observer = new PerformanceObserver((list) => add(list.getEntries()));
  observer.observe({ entryTypes: ["gc"] });
  return {
    stop: () => {
      add(observer.takeRecords());
      observer.disconnect();
      return counts;
    },
  };
}
