// The stream lock as the tests take it: asked for once. The engine passes its database step's
// retries (src/engine/db-step.ts retryTake); a test of those passes its own.
import type { TakeRetry } from "../../src/db/driver/withAdvisoryLock.ts";

export const takeOnce: TakeRetry = (take) => take();
