// Rate governor shared by all calls of one base URL: bounded concurrency, a token bucket for
// requests per second, and AIMD on 429 (the hosted service answers 429 under ~20 parallel calls,
// docs/api-notes.md "Errors and rate limits").

export interface GovernorOptions {
  readonly concurrency: number;
  /** Configured (and maximum) requests per second. */
  readonly requestsPerSecond: number;
  /** Floor of the rate after repeated 429s; default 0.5 rps (or the configured rate if lower). */
  readonly minRequestsPerSecond?: number;
  /** Successes in a row before the rate grows again by one step (configured / 10). Default 10. */
  readonly recoverAfter?: number;
  /** Clock in ms (monotonic is fine). */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export type Outcome = "ok" | "rate-limited" | "failed";

/** One admitted request. Release it exactly once, with how it went. */
export interface Permit {
  /** Clock value when the request was admitted. */
  readonly issuedAt: number;
  release(outcome: Outcome): void;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RateGovernor {
  readonly #configured: number;
  readonly #min: number;
  readonly #step: number;
  readonly #recoverAfter: number;
  readonly #concurrency: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  #rate: number;
  // Bucket of capacity 1: requests are spaced evenly, never a burst after an idle spell.
  #tokens = 1;
  #refilledAt: number;
  #active = 0;
  readonly #waiters: (() => void)[] = [];
  #tokenQueue: Promise<unknown> = Promise.resolve();
  #streak = 0;
  #admitted = 0;
  #admittedAtDecrease = 0;

  constructor(opts: GovernorOptions) {
    this.#configured = opts.requestsPerSecond;
    this.#min = Math.min(opts.minRequestsPerSecond ?? 0.5, opts.requestsPerSecond);
    this.#step = Math.max(this.#min, opts.requestsPerSecond / 10);
    this.#recoverAfter = opts.recoverAfter ?? 10;
    this.#concurrency = opts.concurrency;
    this.#now = opts.now ?? (() => performance.now());
    this.#sleep = opts.sleep ?? realSleep;
    this.#rate = opts.requestsPerSecond;
    this.#refilledAt = this.#now();
  }

  /** Current allowed requests per second. */
  get rate(): number {
    return this.#rate;
  }

  /** Requests admitted and not yet released. */
  get active(): number {
    return this.#active;
  }

  /** Waits for a concurrency slot, then for a token (first come, first served). */
  async acquire(): Promise<Permit> {
    await this.#takeSlot();
    const turn = this.#tokenQueue.then(() => this.#takeToken());
    this.#tokenQueue = turn.catch(() => undefined);
    try {
      await turn;
    } catch (e) {
      this.#freeSlot();
      throw e;
    }
    const issuedAt = this.#now();
    const seq = ++this.#admitted;
    let released = false;
    return {
      issuedAt,
      release: (outcome) => {
        if (released) return;
        released = true;
        this.#freeSlot();
        if (outcome === "rate-limited") this.#onRateLimited(seq);
        else if (outcome === "ok") this.#onSuccess();
      },
    };
  }

  #takeSlot(): Promise<void> {
    if (this.#active < this.#concurrency) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #freeSlot(): void {
    const next = this.#waiters.shift();
    // Hand the slot straight to the next waiter: `active` stays the same.
    if (next) next();
    else this.#active--;
  }

  async #takeToken(): Promise<void> {
    for (;;) {
      const now = this.#now();
      this.#tokens = Math.min(1, this.#tokens + ((now - this.#refilledAt) * this.#rate) / 1000);
      this.#refilledAt = now;
      if (this.#tokens >= 1 - 1e-9) {
        this.#tokens -= 1;
        return;
      }
      await this.#sleep(Math.ceil(((1 - this.#tokens) * 1000) / this.#rate));
    }
  }

  // Multiplicative decrease, once per congestion episode: 429s of requests admitted before the
  // last decrease were sent at the old rate and must not halve it again.
  #onRateLimited(seq: number): void {
    this.#streak = 0;
    if (seq <= this.#admittedAtDecrease) return;
    this.#rate = Math.max(this.#min, this.#rate / 2);
    this.#admittedAtDecrease = this.#admitted;
  }

  // Additive increase after a streak of successes, never above the configured rate.
  #onSuccess(): void {
    if (this.#rate >= this.#configured) return;
    if (++this.#streak < this.#recoverAfter) return;
    this.#streak = 0;
    this.#rate = Math.min(this.#configured, this.#rate + this.#step);
  }
}
