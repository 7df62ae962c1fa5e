// The stream lock as the tests take it: asked for once. The engine passes its database step's
// retries (src/engine/db-step.ts retryTake); a test of those passes its own.
import type { TakeRetry } from "../../src/db/driver/withAdvisoryLock.ts";
import { withDbRetry } from "../../src/db/driver/withDbRetry.ts";

export const takeOnce: TakeRetry = (take) => take();

/** Asked for again while the database is away, for up to 10 s, as the engine does (db-step.ts retryTake). */
export const takeRetrying: TakeRetry = (take) => withDbRetry(take, { budgetMs: 10_000 });
