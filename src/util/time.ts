// Times given by people (flags, config): ISO date or date-time, UTC unless a zone is given.

const ZONE = /(?:[zZ]|[+-]\d\d:?\d\d)$/;

/** `2026-01-01`, `2026-01-01T10:00`, `2026-01-01 10:00:00` (UTC), or with a zone; null otherwise. */
export function parseUtcTime(text: string): number | null {
  const t = text.trim();
  if (!/^\d{4}-\d\d-\d\d/.test(t)) return null;
  const iso = ZONE.test(t) ? t : t.length === 10 ? `${t}T00:00:00Z` : `${t.replace(" ", "T")}Z`;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}
