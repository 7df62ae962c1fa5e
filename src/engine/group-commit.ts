// Group commit: the items (a target's fetched windows, a run's notes of windows in flight)
// submitted while the previous commit of them is under way wait for it, then are committed
// together in one transaction: one COMMIT (a WAL flush), and for windows one BEGIN and lock
// confirmation, for a few instead of one each, with no wait added (an item that finds no commit
// under way starts one at once). A transaction of windows holds at most the windows in flight
// (APM_WINDOW_CONCURRENCY), each still whole or absent after a crash. When a transaction of several
// fails for a reason of its own items' (a value the database refuses), each is committed again
// alone, so that only the item at fault fails.

interface Waiting<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupCommit<T, R> {
  #queue: Waiting<T, R>[] = [];
  #busy = false;

  /**
   * `commit` writes its items in one transaction and returns their results in order; `alone`
   * says whether a failure of several items should be tried again item by item (not when the
   * database is away or the lock is lost: each would only fail the same way, one after the other).
   */
  constructor(
    private readonly commit: (items: readonly T[]) => Promise<R[]>,
    private readonly alone: (error: unknown) => boolean,
  ) {}

  /** Writes `item` with the items waiting beside it; resolves once its transaction committed. */
  submit(item: T): Promise<R> {
    const done = new Promise<R>((resolve, reject) => this.#queue.push({ item, resolve, reject }));
    if (!this.#busy) void this.#drain();
    return done;
  }

  async #drain(): Promise<void> {
    this.#busy = true;
    try {
      while (this.#queue.length > 0) await this.#write(this.#queue.splice(0));
    } finally {
      this.#busy = false;
    }
  }

  async #write(batch: readonly Waiting<T, R>[]): Promise<void> {
    let results: R[];
    try {
      results = await this.commit(batch.map((w) => w.item));
    } catch (e) {
      if (batch.length === 1 || !this.alone(e)) for (const w of batch) w.reject(e);
      else for (const w of batch) await this.#write([w]);
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(results[i]!);
  }
}
