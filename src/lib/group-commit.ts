/**
 * Writes items in batches without acknowledging any before it is written: the items that arrive
 * while the event loop is busy are written together (one statement, one transaction), and each
 * caller's promise settles with its batch. Cheap ingest that is still durable before the answer.
 * With a window, a batch also waits that long for more items while batches are small: at a steady
 * rate most turns of the event loop bring one item, and a batch of one costs a statement and a commit
 * of its own. Once batches come large (a flood, or many callers waiting together) they go at the next
 * turn again, so that the wait never bounds how fast waiting callers are answered, until a batch of
 * one says items come one a turn again.
 */
/** A batch at least this large stops the window (when there is one) until a batch of one. */
const SMALL_BATCH = 16;

/**
 * A window for writes that requests wait on: viewers' reports, and the counts of the rate limits kept
 * in the database (a report's, sign-in's, the gate's, an access code's: each waits up to this much
 * more for each). At 2,000
 * reports/s a batch of one was an insert and a commit per report on the event loop, ~65 µs of its
 * ~100 µs (docs/analytics.md).
 */
export const VIEWER_WINDOW_MS = 2;

export class GroupCommit<T, R> {
  private pending: Array<{ item: T; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  /** Cancels the timer (or immediate) set to write what is pending; null when none is set. */
  private cancel: (() => void) | null = null;
  /**
   * Whether a batch waits for the window: from a batch of one (items come one a turn) until a large
   * one (they come faster than the window needs); batches in between leave it as it is.
   */
  private waiting = true;

  constructor(
    /** Writes a batch; answers each item's outcome, in order. */
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
    /** How long a batch waits for more items after its first (ms); 0: until the event loop's next turn. */
    private readonly windowMs = 0,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else if (!this.cancel) this.schedule();
    });
  }

  private schedule(): void {
    if (this.windowMs > 0 && this.waiting) {
      const timer = setTimeout(() => void this.flush(), this.windowMs);
      this.cancel = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(() => void this.flush());
      this.cancel = () => clearImmediate(immediate);
    }
  }

  private async flush(): Promise<void> {
    this.cancel?.();
    this.cancel = null;
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    if (batch.length >= SMALL_BATCH) this.waiting = false;
    else if (batch.length === 1) this.waiting = true;
    try {
      const outcomes = await this.write(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(outcomes[i]));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}
