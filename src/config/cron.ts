// APM_SCHEDULE: five cron fields in the grammar graphile-worker's crontab reads (a number, a range
// a-b, *, */n; comma lists of those), checked field by field when the configuration is read. A value
// out of its field's range or a step of 0 used to load and leave a worker that never ran a sync.
import { z } from "zod";

interface Field {
  readonly name: string;
  readonly min: number;
  readonly max: number;
}

const FIELDS: readonly Field[] = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  // 7 is Sunday too (read as 0).
  { name: "day of week", min: 0, max: 6 },
];

/** Days each month can have (February: in a leap year). */
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const FORM =
  'five fields (minute hour day-of-month month day-of-week, UTC), each a number, a range a-b, * or */n, or a comma list of those, e.g. "*/10 * * * *"';

/** The values `text` selects in `field`, or what is wrong with it. */
function fieldValues(text: string, field: Field): Set<number> | string {
  const values = new Set<number>();
  const span = field.max - field.min + 1;
  const top = field.name === "day of week" ? 7 : field.max;
  for (const part of text.split(",")) {
    const every = /^\*(?:\/(\d+))?$/.exec(part);
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (every) {
      const step = every[1] === undefined ? 1 : Number(every[1]);
      if (step < 1 || step > span) return `${field.name}: the step of "${part}" must be from 1 to ${span}`;
      for (let v = field.min; v <= field.max; v += step) values.add(v);
    } else if (range) {
      const [from, to] = [Number(range[1]), Number(range[2] ?? range[1])];
      const outside = [from, to].find((v) => v < field.min || v > top);
      if (outside !== undefined) return `${field.name}: ${outside} is outside ${field.min}-${top}`;
      if (range[2] !== undefined && to <= from) return `${field.name}: the range "${part}" must go upwards`;
      for (let v = from; v <= to; v++) values.add(v === 7 && top === 7 ? 0 : v);
    } else return `${field.name}: "${part}" is not a number, a range a-b, * or */n`;
  }
  return values;
}

/** What is wrong with the cron expression `text`, or null. */
export function cronProblem(text: string): string | null {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== FIELDS.length) return `expected a cron expression of ${FORM}`;
  const sets: Set<number>[] = [];
  for (const [i, field] of FIELDS.entries()) {
    const values = fieldValues(parts[i]!, field);
    if (typeof values === "string") return values;
    sets.push(values);
  }
  const [, , days, months, weekdays] = sets as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  // With both days restricted, cron fires on either; with only the day of month, it must exist.
  const anyDay = days.size === 31 || weekdays.size < 7;
  if (!anyDay && ![...months].some((m) => [...days].some((d) => d <= MONTH_DAYS[m - 1]!)))
    return "never fires: no month it names has a day it names";
  return null;
}

export const cron = z
  .string()
  .transform((v) => v.trim())
  .superRefine((v, ctx) => {
    const problem = cronProblem(v);
    if (problem) ctx.addIssue({ code: "custom", message: `${problem}; got ${JSON.stringify(v)}` });
  });
