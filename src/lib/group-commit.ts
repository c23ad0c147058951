/**
 * Writes items in batches without acknowledging any before it is written: the items that arrive
 * while the event loop is busy are written together (one statement, one transaction), and each
 * caller's promise settles with its batch. Cheap ingest that is still durable before the answer.
 * With a window, a batch also waits that long for more items while batches are small: at a steady
 * rate most turns of the event loop bring one item, and a batch of one costs a statement and a commit
 * of its own. Once batches come large (a flood, or many callers waiting together) they go at the next
 * turn again, so that the wait never bounds how fast waiting callers are answered.
 */
/** Batches smaller than this wait for the window (when there is one). */
const SMALL_BATCH = 16;

/**
 * A window for writes that viewers wait on (their reports, the counts of their rate limits): at 2,000
 * reports/s a batch of one was an insert and a commit per report on the event loop, ~65 µs of its
 * ~100 µs (docs/analytics.md).
 */
export const VIEWER_WINDOW_MS = 2;

export class GroupCommit<T, R> {
  private pending: Array<{ item: T; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  constructor(
    /** Writes a batch; answers each item's outcome, in order. */
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
    /** How long a batch waits for more items after its first (ms); 0: until the event loop's next turn. */
    private readonly windowMs = 0,
  ) {}

  /** The size of the last batch written. */
  private last = 0;

  private schedule(): void {
    this.scheduled = true;
    if (this.windowMs > 0 && this.last < SMALL_BATCH) setTimeout(() => void this.flush(), this.windowMs);
    else setImmediate(() => void this.flush());
  }

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) this.schedule();
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.maxBatch);
    this.last = batch.length;
    if (this.pending.length > 0 && !this.scheduled) this.schedule();
    if (batch.length === 0) return;
    try {
      const outcomes = await this.write(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(outcomes[i]));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}
