// The stream lock as the tests take it: asked for once. The engine passes its database step's
// retries (src/engine/db-step.ts retryTake); a test of those passes its own.
import type { TakeRetry } from "../../src/db/driver/withAdvisoryLock.ts";
import { withDbRetry } from "../../src/db/driver/withDbRetry.ts";

export const takeOnce: TakeRetry = (take) => take();

/**
 * Asked for again while the database is away, for up to 10 s, as the engine does. A lock session
 * from the free list whose connection a test ended meets that error with its first query, and
 * reconnects on the next one.
 */
export const takeRetrying: TakeRetry = (take) => withDbRetry(take, { budgetMs: 10_000 });
