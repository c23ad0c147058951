/** Exponential backoff with jitter: ~1 s, 2 s, 4 s … capped at one hour (about a day over 30 tries). */
export function backoffMs(attempt: number, baseMs = 1000, capMs = 60 * 60 * 1000, random = Math.random): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}
