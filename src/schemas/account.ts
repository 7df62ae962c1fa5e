// Account-level lists: projects, members, groups, group projects (spec "Project, group and member
// operations"). Envelopes: data + total; group projects has no total.
import { z } from "zod";
import { objectEnvelope, optCount, recordsArray } from "./envelope.ts";
import { anyTime, isoUtc, lower, pcode } from "./primitives.ts";
import { opt, recordSchema } from "./record.ts";

const str = z.string();

export const projectShape = {
  projectCode: pcode,
  projectName: opt(str),
  // "2018-10-19T07:17:03.774" (no zone, read as UTC); old docs use a space instead of the T.
  createTime: opt(isoUtc),
  // Status may be capitalised ("Subscribe"); normalised to lower case.
  status: opt(lower),
  productType: opt(str),
  platform: opt(str),
  // Masked in the output ("5****R"), and a credential in any case: validated, never stored.
  apiToken: opt(str),
  // In the docs' schema but absent from its example.
  groupName: opt(str),
  lastUpdatedTime: opt(anyTime),
  gatewayName: opt(str),
};
export const projectRecord = recordSchema(projectShape, { drop: ["apiToken"] });

export const projectsEnvelope = objectEnvelope(z.looseObject({ data: recordsArray, accountEmail: opt(str), total: optCount }));

export const memberShape = { email: str, name: opt(str), desc: opt(str), sms: opt(str) };
export const memberRecord = recordSchema(memberShape);

/** Members of a project or a group: data + total. */
export const listEnvelope = objectEnvelope(z.looseObject({ data: recordsArray, total: optCount }));

export const groupShape = { groupKey: str, groupName: opt(str), description: opt(str) };
export const groupRecord = recordSchema(groupShape);

export const groupProjectShape = {
  projectCode: pcode,
  name: opt(str),
  status: opt(lower),
  productType: opt(str),
  platform: opt(str),
  gatewayName: opt(str),
};
export const groupProjectRecord = recordSchema(groupProjectShape);
