// Node's warnings go through the command's logger while it runs (src/util/process-warnings.ts),
// and Node's own printing comes back after the last command ends.
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/util/logger.ts";
import { routeProcessWarnings } from "../../src/util/process-warnings.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "info", format: "json", destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
  return { logger, lines };
}

/** Emits a warning and waits until the process has delivered it (warnings are emitted on the next tick). */
async function warn(message: string, code: string): Promise<void> {
  const delivered = once(process, "warning");
  process.emitWarning(message, { type: "DeprecationWarning", code });
  await delivered;
}

describe("routeProcessWarnings", () => {
  const before = process.listeners("warning");
  afterEach(() => {
    expect(process.listeners("warning")).toEqual(before);
  });

  it("logs a warning as a warn record with its name and code, and gives Node's printing back after", async () => {
    const { logger, lines } = capture();
    const unroute = routeProcessWarnings(logger);
    // Node's own listener (which prints "(node:PID) ..." to stderr) is set aside meanwhile.
    for (const l of before) expect(process.listeners("warning")).not.toContain(l);
    await warn("a dependency did something old", "DEP0999");
    unroute();
    unroute();
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, warning: "DeprecationWarning", code: "DEP0999", msg: "a dependency did something old" }),
    ]);
  });

  it("gives the newest of two commands in one process the warnings, then the other, then Node", async () => {
    const first = capture();
    const second = capture();
    const endFirst = routeProcessWarnings(first.logger);
    const endSecond = routeProcessWarnings(second.logger);
    await warn("one", "DEP0001");
    endSecond();
    await warn("two", "DEP0002");
    endFirst();
    expect(second.lines.map((l) => l.msg)).toEqual(["one"]);
    expect(first.lines.map((l) => l.msg)).toEqual(["two"]);
  });
});
