const WINDOW_MS = 10 * 60_000;
const MAX_FAILURES = 10;

/**
 * Wrong access codes per visitor and player, kept in memory for ten minutes: past ten, the form is
 * refused (429) until the window has passed, so that a code cannot be guessed at speed. Per process;
 * behind several API processes the limit is per process.
 */
export class CodeAttempts {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  private current(key: string) {
    const entry = this.failures.get(key);
    if (entry && this.now() - entry.since >= WINDOW_MS) {
      this.failures.delete(key);
      return undefined;
    }
    return entry;
  }

  blocked(key: string): boolean {
    return (this.current(key)?.count ?? 0) >= MAX_FAILURES;
  }

  retryAfterSeconds(key: string): number {
    const entry = this.current(key);
    return entry ? Math.max(1, Math.ceil((entry.since + WINDOW_MS - this.now()) / 1000)) : 0;
  }

  failed(key: string): void {
    const entry = this.current(key);
    if (entry) entry.count++;
    else {
      // Bounded: an attacker rotating addresses cannot grow this without limit.
      if (this.failures.size >= 10_000) this.failures.clear();
      this.failures.set(key, { count: 1, since: this.now() });
    }
  }

  forget(key: string): void {
    this.failures.delete(key);
  }
}
