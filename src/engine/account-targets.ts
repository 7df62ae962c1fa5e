// The account's streams that fan out over a list just written (the catalogue's `parent`): their
// targets, one per askable key; and the listed projects this run has no token for.

import { perProject } from "../catalogue/account.ts";
import type { OperationDef } from "../catalogue/types.ts";
import { dbStep } from "./db-step.ts";
import { accountTarget, readParentKeys } from "./fan-out.ts";
import type { EngineDeps, Target } from "./types.ts";

/** One target per askable key of each child's parent list (each list read once). */
export async function childTargets(deps: EngineDeps, ops: readonly OperationDef[]): Promise<Target[]> {
  const keysOf = new Map<string, string[]>();
  const children: Target[] = [];
  for (const op of ops.filter((o) => o.stream!.parent)) {
    const parent = op.stream!.parent!;
    let keys = keysOf.get(parent.stream);
    if (!keys) {
      const listed = await dbStep(deps, `the keys of ${parent.stream}`, () => readParentKeys(deps.database.sql, parent));
      if (listed.skipped.length > 0 && parent.skip)
        deps.logger.info(`${listed.skipped.length} key(s) of ${parent.stream} are ${parent.skip.why}: their ${op.id} is skipped`);
      keys = listed.keys;
      keysOf.set(parent.stream, keys);
    }
    deps.progress?.planned(op.id, keys.length);
    children.push(...keys.map((k) => accountTarget(op, k)));
  }
  return children;
}

/** The projects of the account's list that have no token configured (logged). */
export async function projectsWithoutToken(deps: EngineDeps): Promise<number[]> {
  // The account's project list, as the catalogue declares it (the parent of per-project streams).
  const listed = (await readParentKeys(deps.database.sql, perProject)).keys.map(Number);
  const skipped = listed.filter((p) => !deps.config.api.projects.some((c) => c.pcode === p));
  if (skipped.length > 0)
    deps.logger.info(
      { pcodes: skipped },
      `projects without a token in APM_PROJECTS (their monitoring data is skipped): ${skipped.join(", ")}`,
    );
  return skipped;
}
