// Account-level lists: projects, members, groups, group projects (spec "Project, group and member
// operations"). Envelopes: data + total; group projects has no total. The records' fields are
// declared with their columns in catalogue/dictionary/account.ts.
import { z } from "zod";
import { projectColumns } from "../catalogue/dictionary/account.ts";
import { shapeOf } from "../kernel/declare.ts";
import { opt, recordSchema } from "../kernel/record.ts";
import { objectEnvelope, optCount, recordsArray } from "./envelope.ts";

const str = z.string();

export const projectRecord = recordSchema(
  {
    ...shapeOf(projectColumns),
    // Masked in the output ("5****R"), and a credential in any case: validated, never stored (no column).
    apiToken: opt(str),
  },
  { drop: ["apiToken"] },
);

export const projectsEnvelope = objectEnvelope(z.looseObject({ data: recordsArray, accountEmail: opt(str), total: optCount }));

/** Members of a project or a group: data + total. */
export const listEnvelope = objectEnvelope(z.looseObject({ data: recordsArray, total: optCount }));
