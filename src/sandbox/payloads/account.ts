// Account-token operations: projects, members, groups (shapes of test/fixtures/api-samples).
import { type HandlerContext, HttpError } from "../context.ts";
import { isoNoZone } from "../grid.ts";
import { mix, rngOf } from "../rng.ts";
import type { ProjectWorld } from "../world.ts";

const PEOPLE = [
  ["Hong Gildong", "honggildong"],
  ["Kim Minji", "minji.kim"],
  ["Lee Jun", "jun.lee"],
  ["Park Sora", "sora.park"],
  ["Choi Woo", "woo.choi"],
  ["Jung Hana", "hana.jung"],
] as const;

/** The project list shows tokens masked: first and last character, stars between. */
export function maskToken(token: string): string {
  return `${token[0]}${"*".repeat(Math.max(1, token.length - 2))}${token[token.length - 1]}`;
}

function membersOf(w: ProjectWorld) {
  const rng = rngOf(w.seed, w.pcode, "members");
  const n = 2 + Math.floor(rng() * 4);
  return PEOPLE.slice(0, n).map(([name, user], i) => ({
    email: `${user}@sandbox.example`,
    name,
    desc: i === 0 ? "project owner" : "",
    sms: `010${String(mix(w.seed, user) % 10_000_000).padStart(7, "0")}`.replace(/\d{4}$/, "XXXX"),
  }));
}

/** Two groups: all projects, and the first project alone. Keys look masked but are accepted in paths. */
function groupsOf(ctx: HandlerContext) {
  const { seed, worlds } = ctx.state;
  return [
    { groupName: "SANDBOX ALL", groupKey: `grp****${mix(seed, "g0").toString(36)}`, description: "All sandbox projects", members: worlds },
    {
      groupName: "SANDBOX FRONT",
      groupKey: `grp****${mix(seed, "g1").toString(36)}`,
      description: "Front office",
      members: worlds.slice(0, 1),
    },
  ];
}

function groupOf(ctx: HandlerContext) {
  const group = groupsOf(ctx).find((g) => g.groupKey === ctx.params.groupKey);
  if (!group) throw new HttpError(404, "[F] group not found");
  return group;
}

export function projects(ctx: HandlerContext): unknown {
  const data = ctx.state.worlds.map((w) => ({
    projectCode: w.pcode,
    projectName: w.name,
    createTime: isoNoZone(w.createTime),
    status: "subscribe",
    productType: "APM",
    platform: "JAVA",
    apiToken: maskToken(w.token),
  }));
  return { data, accountEmail: ctx.state.accountEmail, total: data.length };
}

export function projectMembers(ctx: HandlerContext): unknown {
  const w = ctx.state.worlds.find((p) => String(p.pcode) === ctx.params.projectCode);
  if (!w) throw new HttpError(404, "[F] project not found");
  const data = membersOf(w);
  return { data, total: data.length };
}

export function groups(ctx: HandlerContext): unknown {
  const data = groupsOf(ctx).map(({ groupName, groupKey, description }) => ({ groupName, groupKey, description }));
  return { data, total: data.length };
}

export function groupMembers(ctx: HandlerContext): unknown {
  const seen = new Map<string, ReturnType<typeof membersOf>[number]>();
  for (const w of groupOf(ctx).members) for (const m of membersOf(w)) if (!seen.has(m.email)) seen.set(m.email, m);
  const data = [...seen.values()];
  return { data, total: data.length };
}

/** Meta information only: capitalised status, no `total` (docs sample). */
export function groupProjects(ctx: HandlerContext): unknown {
  return {
    data: groupOf(ctx).members.map((w) => ({
      projectCode: w.pcode,
      name: w.name,
      status: "Subscribe",
      productType: "APM",
      platform: "JAVA",
      gatewayName: "SANDBOX",
    })),
  };
}
