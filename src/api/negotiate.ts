// Token negotiation for the operations whose token the spec leaves open (range, series): the first
// request of an (operation, project) tries the tokens in order; what worked is remembered for the
// rest of the run and what was refused is never sent again. Concurrent windows of the same
// (operation, project) wait for the first one's answer, so refused requests stay bounded by
// operations x projects, not by windows.
import type { TokenKind } from "../catalogue/types.ts";

interface Entry {
  chosen: TokenKind | null;
  readonly refused: Set<TokenKind>;
  /** Settles when the request probing a token answers (success or not). */
  probing: Promise<void> | null;
}

export type Choice = { readonly kind: TokenKind; readonly probe: (() => void) | null } | { readonly waitFor: Promise<void> } | null;

export class TokenNegotiation {
  readonly #entries = new Map<string, Entry>();

  #entry(key: string): Entry {
    let e = this.#entries.get(key);
    if (!e) {
      e = { chosen: null, refused: new Set(), probing: null };
      this.#entries.set(key, e);
    }
    return e;
  }

  /**
   * The token to send now: the remembered one; or the first not yet refused, as a probe (call
   * `probe()` when its answer is in); or a promise to wait for while another request probes;
   * null when every candidate was refused.
   */
  choose(key: string, candidates: readonly TokenKind[]): Choice {
    const e = this.#entry(key);
    if (e.chosen) return { kind: e.chosen, probe: null };
    if (e.probing) return { waitFor: e.probing };
    const kind = candidates.find((k) => !e.refused.has(k));
    if (!kind) return null;
    // A single candidate needs no probe: nothing to choose between.
    if (candidates.length === 1) return { kind, probe: null };
    let done!: () => void;
    e.probing = new Promise<void>((resolve) => {
      done = resolve;
    });
    return {
      kind,
      probe: () => {
        e.probing = null;
        done();
      },
    };
  }

  /** The token worked; returns true the first time it is chosen for this key. */
  accepted(key: string, kind: TokenKind): boolean {
    const e = this.#entry(key);
    const first = e.chosen !== kind;
    e.chosen = kind;
    return first;
  }

  refused(key: string, kind: TokenKind): void {
    const e = this.#entry(key);
    e.refused.add(kind);
    if (e.chosen === kind) e.chosen = null;
  }

  refusedKinds(key: string): TokenKind[] {
    return [...(this.#entries.get(key)?.refused ?? [])];
  }

  /** The token that worked for this key, if any did yet. */
  chosen(key: string): TokenKind | null {
    return this.#entries.get(key)?.chosen ?? null;
  }
}
