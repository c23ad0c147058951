/**
 * Writes items in batches without acknowledging any before it is written: the items that arrive
 * while the event loop is busy are written together (one statement, one transaction), and each
 * caller's promise settles with its batch. Cheap ingest that is still durable before the answer.
 */
export class GroupCommit<T, R> {
  private pending: Array<{ item: T; resolve: (r: R) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;

  constructor(
    /** Writes a batch; answers each item's outcome, in order. */
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending.splice(0, this.maxBatch);
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => void this.flush());
    }
    if (batch.length === 0) return;
    try {
      const outcomes = await this.write(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(outcomes[i]));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}
