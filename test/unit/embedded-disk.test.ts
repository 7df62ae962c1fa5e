// The embedded database's disk floor (src/db/driver/embedded-disk.ts): how it is set, what it
// says, and how the rest of the tool reads its error. The floor met on a real, filling disk:
// test/integration/embedded-disk-floor.test.ts.
import { tmpdir } from "node:os";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { DEFAULT_DISK_FLOOR, DiskFloorError, diskFloor, freeBytes, LOOK_EVERY_MS } from "../../src/db/driver/embedded-disk.ts";
import { isDiskFull, isTransientDbError } from "../../src/db/driver/transient.ts";
import { ADVICE, describeError, splitAdvice } from "../../src/engine/describe-error.ts";

describe("APM_DISK_FLOOR", () => {
  it("defaults to 128 MiB, takes bytes, 0 turns it off; a negative or fractional value is refused", () => {
    expect(loadConfig({ env: {} }).diskFloorBytes).toBe(DEFAULT_DISK_FLOOR);
    expect(DEFAULT_DISK_FLOOR).toBe(128 * 1024 * 1024);
    expect(loadConfig({ env: { APM_DISK_FLOOR: "1048576" } }).diskFloorBytes).toBe(1048576);
    expect(loadConfig({ env: { APM_DISK_FLOOR: "0" } }).diskFloorBytes).toBe(0);
    for (const bad of ["-1", "1.5", "lots"]) expect(() => loadConfig({ env: { APM_DISK_FLOOR: bad } })).toThrow(/APM_DISK_FLOOR/);
  });
});

describe("diskFloor", () => {
  const dir = tmpdir();

  it("passes while the disk has the floor free; below it, says how much is free, the floor, and what to do", () => {
    const free = freeBytes(dir);
    expect(free).toBeGreaterThan(0);
    expect(() => diskFloor(dir, Math.floor(free / 2))()).not.toThrow();
    expect(() => diskFloor(dir, 0)()).not.toThrow();
    const e = (() => {
      try {
        diskFloor(dir, free * 4)();
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(DiskFloorError);
    const message = (e as Error).message;
    expect(message).toContain(`the disk holding the embedded database (${dir}) has `);
    expect(message).toMatch(new RegExp(` has \\d+ MiB free, under the ${Math.ceil((free * 4) / 2 ** 20)} MiB it keeps free `));
    expect(message).toContain("APM_DISK_FLOOR");
    expect(message).toContain("then run the command again; what was committed is kept");
  });
  it("looks at the disk at most every LOOK_EVERY_MS: between two looks the last one answers, the next look sees the disk as it is", () => {
    let clock = 1_000_000;
    let disk = 200;
    const looks: number[] = [];
    const check = diskFloor("/data", 100, {
      now: () => clock,
      free: (d) => {
        expect(d).toBe("/data");
        looks.push(clock);
        return disk;
      },
    });
    check();
    disk = 50; // filled, between two looks
    clock += LOOK_EVERY_MS - 1;
    for (let i = 0; i < 1000; i++) check(); // a thousand statements: one look served them all
    expect(looks).toEqual([1_000_000]);
    clock += 1;
    expect(() => check()).toThrow(DiskFloorError);
    expect(looks).toEqual([1_000_000, 1_000_000 + LOOK_EVERY_MS]);
    expect(() => check()).toThrow(/has 0 MiB free, under the 1 MiB/); // the last look answers, and still refuses
    expect(looks).toHaveLength(2);
    disk = 300; // space freed: the next look lets statements through again
    clock += LOOK_EVERY_MS;
    expect(() => check()).not.toThrow();
    expect(looks).toHaveLength(3);
  });

  it("a floor of 0 never looks at the disk", () => {
    const check = diskFloor("/data", 0, {
      free: () => {
        throw new Error("looked");
      },
    });
    expect(() => check()).not.toThrow();
  });
});

describe("a full disk, as the tool reads it", () => {
  const driverError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it("the embedded floor and a server's 53100 are a full disk, not a lost connection", () => {
    expect(isDiskFull(new DiskFloorError("/x", 0, 1))).toBe(true);
    const server = driverError("53100", 'could not extend file "base/5/16384": No space left on device');
    expect(isDiskFull(server)).toBe(true);
    expect(isTransientDbError(server)).toBe(false);
    expect(isDiskFull(driverError("ECONNRESET", "read ECONNRESET"))).toBe(false);
  });

  it("a server's full disk is told what to do", () => {
    const line = describeError(driverError("53100", 'could not extend file "base/5/16384": No space left on device'));
    expect(line).toBe(`could not extend file "base/5/16384": No space left on device (53100) (${ADVICE.diskFull})`);
    expect(splitAdvice(line).advice).toBe(ADVICE.diskFull);
  });

  it("inside a failed drizzle statement (a migration) too, the statement named and its parameters never shown", () => {
    const failed = new DrizzleQueryError('insert into "apm"."t" values ($1)', ["s3cr3t"], driverError("53100", "No space left on device"));
    const line = describeError(failed);
    expect(line).toBe(`No space left on device (53100) in \`insert into "apm"."t" values ($1)\` (${ADVICE.diskFull})`);
    expect(line).not.toContain("s3cr3t");
    expect(splitAdvice(line).advice).toBe(ADVICE.diskFull);
  });
});
