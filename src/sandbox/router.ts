// Routes derived from the catalogue: each operation's method + path template ({name} segments are
// parameters). Where two templates match (`.../avg` and `.../{oids}`), the one with more literal
// segments wins.
import type { OperationDef } from "../catalogue/types.ts";

type Segment = { readonly literal: string } | { readonly param: string };

interface Route {
  readonly op: OperationDef;
  readonly segments: readonly Segment[];
  readonly literals: number;
}

export type RouteMatch =
  | { readonly kind: "match"; readonly op: OperationDef; readonly params: Record<string, string> }
  | { readonly kind: "wrong-method" }
  | { readonly kind: "none" };

export function buildRoutes(ops: readonly OperationDef[]): Route[] {
  return ops.map((op) => {
    const segments = op.path
      .split("/")
      .filter(Boolean)
      .map((s): Segment => {
        const m = /^\{(\w+)\}$/.exec(s);
        return m ? { param: m[1]! } : { literal: s };
      });
    return { op, segments, literals: segments.filter((s) => "literal" in s).length };
  });
}

function matchSegments(route: Route, parts: readonly string[]): Record<string, string> | null {
  if (route.segments.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const seg = route.segments[i]!;
    const part = parts[i]!;
    if ("literal" in seg) {
      if (seg.literal !== part) return null;
    } else {
      try {
        params[seg.param] = decodeURIComponent(part);
      } catch {
        return null;
      }
    }
  }
  return params;
}

export function matchRoute(routes: readonly Route[], method: string, pathname: string): RouteMatch {
  const parts = pathname.split("/").filter(Boolean);
  let best: { route: Route; params: Record<string, string> } | null = null;
  let pathMatched = false;
  for (const route of routes) {
    const params = matchSegments(route, parts);
    if (!params) continue;
    pathMatched = true;
    if (route.op.method !== method) continue;
    if (!best || route.literals > best.route.literals) best = { route, params };
  }
  if (best) return { kind: "match", op: best.route.op, params: best.params };
  return pathMatched ? { kind: "wrong-method" } : { kind: "none" };
}
