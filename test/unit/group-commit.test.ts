// The engine's group commit (src/engine/group-commit.ts): what is submitted while a transaction is
// under way goes in the next one together; a transaction of several that fails for a reason of its
// windows' is tried again item by item; one the database failed is not.
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/engine/group-commit.ts";

class Refused extends Error {}

/** A commit that records its batches, fails a batch holding "bad", and waits for `gate` when set. */
function recorder() {
  const batches: string[][] = [];
  let gate: Promise<void> | null = null;
  let open = () => {};
  const commit = async (items: readonly string[]) => {
    batches.push([...items]);
    if (gate) await gate;
    if (items.includes("bad")) throw new Refused(`refused in ${items.join(",")}`);
    if (items.includes("down")) throw new Error("database unavailable");
    return items.map((i) => i.toUpperCase());
  };
  const hold = () => {
    gate = new Promise((resolve) => {
      open = () => {
        gate = null;
        resolve();
      };
    });
  };
  return { batches, commit, hold, release: () => open() };
}

describe("GroupCommit", () => {
  it("writes what arrives during a transaction in the next one, together, each getting its own result", async () => {
    const r = recorder();
    const group = new GroupCommit(r.commit, (e) => e instanceof Refused);
    r.hold();
    const a = group.submit("a");
    const rest = ["b", "c", "d"].map((i) => group.submit(i));
    r.release();
    expect(await Promise.all([a, ...rest])).toEqual(["A", "B", "C", "D"]);
    expect(r.batches).toEqual([["a"], ["b", "c", "d"]]);
    // Idle again: the next item starts a transaction at once, alone.
    expect(await group.submit("e")).toBe("E");
    expect(r.batches.at(-1)).toEqual(["e"]);
  });

  it("tries a failed transaction of several item by item, so only the item at fault fails", async () => {
    const r = recorder();
    const group = new GroupCommit(r.commit, (e) => e instanceof Refused);
    r.hold();
    const first = group.submit("a");
    const later = ["b", "bad", "c"].map((i) =>
      group.submit(i).then(
        (v) => ({ v }),
        (e: Error) => ({ e: e.message }),
      ),
    );
    r.release();
    await first;
    expect(await Promise.all(later)).toEqual([{ v: "B" }, { e: "refused in bad" }, { v: "C" }]);
    expect(r.batches).toEqual([["a"], ["b", "bad", "c"], ["b"], ["bad"], ["c"]]);
  });

  it("fails every item of a transaction the database failed, without trying each alone", async () => {
    const r = recorder();
    const group = new GroupCommit(r.commit, (e) => e instanceof Refused);
    r.hold();
    const first = group.submit("a");
    const later = ["b", "down"].map((i) => group.submit(i).catch((e: Error) => e.message));
    r.release();
    await first;
    expect(await Promise.all(later)).toEqual(["database unavailable", "database unavailable"]);
    expect(r.batches).toEqual([["a"], ["b", "down"]]);
  });
});
