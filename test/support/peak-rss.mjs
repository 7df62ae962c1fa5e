// Loaded into a child process (NODE_OPTIONS=--import): at exit, appends the process's peak
// resident set (getrusage's ru_maxrss, KiB) to TEST_PEAK_RSS_FILE, one line per process:
// `pid kib argv...`. The kernel's own figure, so it counts the heap, buffers and WebAssembly memory.
import { appendFileSync } from "node:fs";

const file = process.env.TEST_PEAK_RSS_FILE;
if (file)
  process.on("exit", () => {
    appendFileSync(file, `${process.pid} ${process.resourceUsage().maxRSS} ${process.argv.slice(1).join(" ")}\n`);
  });
