// A transaction kept open on a connection of its own, holding the locks its statements took, until
// released: what a long BI query or another writer does to apm-sync's tables.
import postgres from "postgres";

export interface Held {
  /** Ends the transaction (its locks go) and the connection. */
  release(): Promise<void>;
}

/** Runs `statements` (each one round trip) in a transaction of their own and keeps it open. */
export async function holdInTransaction(url: string, statements: readonly string[]): Promise<Held> {
  const holder = postgres(url, { max: 1, onnotice: () => {} });
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let taken!: () => void;
  const held = new Promise<void>((r) => {
    taken = r;
  });
  const done = holder.begin(async (tx) => {
    for (const statement of statements) await tx.unsafe(statement);
    taken();
    await gate;
  });
  // A statement that fails ends the transaction before `held`: reported here, not left waiting.
  await Promise.race([held, done]).catch(async (e: unknown) => {
    await holder.end();
    throw e;
  });
  return {
    release: async () => {
      release();
      await done;
      await holder.end();
    },
  };
}
