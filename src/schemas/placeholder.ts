import { z } from "zod";

/** Temporary schema used until an operation's real schema is written. */
export const anyJson = z.unknown();
export const anyRecord = z.record(z.string(), z.unknown());
