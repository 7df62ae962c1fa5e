// What jobs/peak-rss.mjs writes to PEAK_RSS_FILE, read back: a line per process that exited with
// the preload, `pid kib argv...`. The one reader of that file (the memory tests, `npm run bench`).
import { readFileSync } from "node:fs";

export interface PeakLine {
  readonly pid: number;
  /** Its peak resident set, KiB (VmHWM on Linux). */
  readonly kib: number;
  readonly argv: readonly string[];
}

const DIGITS = /^\d+$/;

/** The lines of `file`, in the order the processes exited; throws on a line that is not one. */
export function readPeaks(file: string): PeakLine[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [pid, kib, ...argv] = line.split(" ");
      // Digits only: Number("") is 0, and a line cut after its pid would read as a peak of 0 KiB,
      // under any bound.
      if (!DIGITS.test(pid ?? "") || !DIGITS.test(kib ?? "")) throw new Error(`${file}: not a peak line: ${line}`);
      return { pid: Number(pid), kib: Number(kib), argv };
    });
}
