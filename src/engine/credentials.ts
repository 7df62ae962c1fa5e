// What an authentication failure stops. A refused token stops only what
// depends on that credential: a stream whose token the server refused stops its own windows; a
// project token proven wrong (refused on an operation that takes nothing else) stops that
// project's project-token streams, while the streams that can use the account token go on.
import { AuthError } from "../api/errors.ts";
import type { OperationDef } from "../catalogue/types.ts";
import type { EngineDeps } from "./types.ts";

/** One per project: hands out a controller per target, linked to the project token's fate. */
export class CredentialScope {
  /** Set once the project token is proven wrong. */
  #wrong: AuthError | null = null;
  /** Controllers of the targets that need the project token (aborted together when it is wrong). */
  readonly #needProjectToken: AbortController[] = [];

  constructor(
    private readonly deps: EngineDeps,
    private readonly pcode: number,
  ) {}

  /** A target's own controller; aborted too when the project token is proven wrong and the target needs it. */
  controllerFor(op: OperationDef): AbortController {
    const own = new AbortController();
    const onlyProjectToken = op.token === "project" && !op.altToken;
    if (!onlyProjectToken) return own;
    if (this.#wrong) own.abort(this.#wrong);
    this.#needProjectToken.push(own);
    own.signal.addEventListener(
      "abort",
      () => {
        const reason: unknown = own.signal.reason;
        // attempt > 0: the server refused it (not a token missing from the configuration).
        if (reason instanceof AuthError && reason.attempt > 0) this.#projectTokenWrong(reason);
      },
      { once: true },
    );
    return own;
  }

  #projectTokenWrong(e: AuthError): void {
    if (this.#wrong) return;
    this.#wrong = e;
    this.deps.logger.error(
      { pcode: this.pcode, stream: e.opId },
      `project ${this.pcode}: the server refused the project token (${e.opId}, ${e.status ? `HTTP ${e.status}` : "token error"}); ` +
        `its streams that need the project token are stopped. Check the token of ${this.pcode} in APM_PROJECTS; streams that take the account token go on`,
    );
    for (const c of this.#needProjectToken) if (!c.signal.aborted) c.abort(e);
  }
}
