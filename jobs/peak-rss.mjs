// Loaded into a child process (`--import`, or NODE_OPTIONS=--import for its own children): at exit,
// appends the process's peak resident set (KiB) to PEAK_RSS_FILE, one line per process: `pid kib
// argv...`. How the memory tests and `npm run bench` read an engine's peak. The kernel's
// own figure, so it counts the heap, buffers and WebAssembly memory. On Linux it is VmHWM, the
// high-water mark of the program's own memory: getrusage's ru_maxrss also counts what the parent
// held when it forked the child (Linux carries it over the exec), so a child spawned by a large
// test worker reported the worker's size (measured: 311 MB for a child of 40 MB).
import { appendFileSync, readFileSync } from "node:fs";

/** The process's peak resident set in KiB: VmHWM where /proc shows it, else ru_maxrss. */
function peakKib() {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (hwm) return Number(hwm[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}

const file = process.env.PEAK_RSS_FILE;
if (file)
  process.on("exit", () => {
    appendFileSync(file, `${process.pid} ${peakKib()} ${process.argv.slice(1).join(" ")}\n`);
  });
