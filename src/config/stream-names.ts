// Names the configuration and the flags may use for streams and operations, checked against the
// catalogue with "did you mean" suggestions. The selection itself is engine/targets.ts.
import { OPERATIONS } from "../catalogue/index.ts";
import { requestInputs } from "../catalogue/inputs.ts";
import type { OperationDef } from "../catalogue/types.ts";
import { didYouMean } from "./suggest.ts";

const STREAMS = OPERATIONS.filter((op) => op.stream);
const STREAM_IDS = STREAMS.map((op) => op.id);
/** Every proper prefix of a stream id (`stat`, `series.apdex`): a prefix selects the streams under it. */
const PREFIXES = [...new Set(STREAM_IDS.flatMap((id) => id.split(".").map((_, i, parts) => parts.slice(0, i).join("."))))].filter(Boolean);

/** Why `name` (an id, a prefix, or `prefix.*`) selects no stream; null when it does. */
export function streamNameProblem(name: string): string | null {
  const id = name.replace(/\.\*$/, "");
  if (STREAM_IDS.includes(id) || PREFIXES.includes(id)) return null;
  const op = OPERATIONS.find((o) => o.id === id);
  if (op) {
    const what = op.inSpec ? "a client-only operation (an average over a chosen agent list)" : "a docs-only operation";
    return `${name} is ${what}: it has no table and is not synced (\`apm-sync streams\` lists it apart)`;
  }
  return `unknown stream ${JSON.stringify(name)}${didYouMean(id, STREAM_IDS)} (see \`apm-sync streams\`)`;
}

/** Why `id` cannot take a setting that only windowed streams have (grains); null when it can. */
export function windowedStreamProblem(id: string): string | null {
  const op = STREAMS.find((o) => o.id === id);
  if (op && op.windowLimitMs !== null) return null;
  if (op) return `${id} is not fetched in time windows: it has no grain`;
  return unknownStream(
    id,
    STREAMS.filter((o) => o.windowLimitMs !== null),
  );
}

/** Why `id` cannot take an `overrides` entry; null when it can. */
export function overridableProblem(id: string): string | null {
  const overridable = OPERATIONS.filter((o) => o.overridable);
  if (overridable.some((o) => o.id === id)) return null;
  const list = overridable.map((o) => o.id).join(", ");
  if (OPERATIONS.some((o) => o.id === id)) return `${id} has a documented method and path; overrides apply only to ${list}`;
  return `unknown operation ${JSON.stringify(id)}${didYouMean(
    id,
    overridable.map((o) => o.id),
  )} (overrides apply to ${list})`;
}

/** The inputs stream `id` needs, or why it takes none. */
export function streamInputs(id: string): { names: string[] } | { problem: string } {
  const op = STREAMS.find((o) => o.id === id);
  const names = op ? requestInputs(op) : [];
  if (names.length > 0) return { names };
  if (op) return { problem: `${id} needs no inputs (only streams with filters or agent lists do)` };
  return {
    problem: unknownStream(
      id,
      STREAMS.filter((o) => requestInputs(o).length > 0),
    ),
  };
}

function unknownStream(id: string, candidates: readonly OperationDef[]): string {
  return `unknown stream ${JSON.stringify(id)}${didYouMean(
    id,
    candidates.map((o) => o.id),
  )}`;
}
