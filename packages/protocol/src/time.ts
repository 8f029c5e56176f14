/** Times as people read them in messages (the wire keeps Unix seconds). */

/** Unix seconds as ISO 8601 UTC to the second: `2026-11-26T10:00:00Z`. */
export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

/** A span of seconds in the two largest units: `29d 23h`, `4h 05m`, `12m 30s`, `45s`. */
export function spanText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const two = (n: number) => String(n).padStart(2, '0');
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${two(m)}m`;
  if (m > 0) return `${m}m ${two(s % 60)}s`;
  return `${s}s`;
}
