// Operations documented by the hosted service but not part of our spec. They exist so that every
// sample in ../shared/api-samples has an operation; they are not synced.
import type { OperationDef } from "./types.ts";

export const extraOperations: OperationDef[] = [];
