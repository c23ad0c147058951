/**
 * A generation number that moves whenever the database may have changed, from this process or from
 * any other, so that reads can be answered from memory while it stands still (src/db/read-cache.ts).
 *
 * SQLite: our own connection counts the statements that changed rows, so this process's own writes
 * are seen by the very next read; `PRAGMA data_version` tells about commits by any other connection,
 * such as the CLI or a worker process. That pragma is read again when a millisecond has passed since
 * the last reading (reading it for every request costs more than the cached read it guards): a
 * request sees every commit another process made at least a millisecond before it started.
 *
 * PostgreSQL: our own pool counts the statements that may have changed rows and every COMMIT; triggers
 * on every table notify about commits from any connection (src/db/pg-change-triggers.ts), heard by a
 * LISTENing connection of this process (src/db/pg-connection.ts). A request sees another process's
 * commit once its notification arrived, normally well under a millisecond after the commit.
 */
export interface ChangeClock {
  /** The current generation, or null when changes cannot be detected and nothing may be cached. */
  now(): number | null;
}

export class SqliteChangeClock implements ChangeClock {
  private generation = 0;
  private version: number;
  private checkedAt: number;
  private closed = false;

  constructor(
    private readonly dataVersion: () => number,
    private readonly maxAgeMs = 1,
  ) {
    this.version = dataVersion();
    this.checkedAt = performance.now();
  }

  /** Our own connection changed something (data_version only counts other connections). */
  changed(): void {
    this.generation++;
  }

  now(): number | null {
    if (this.closed) return null;
    const at = performance.now();
    if (at - this.checkedAt >= this.maxAgeMs) {
      this.checkedAt = at;
      const version = this.dataVersion();
      if (version !== this.version) {
        this.version = version;
        this.generation++;
      }
    }
    return this.generation;
  }

  close(): void {
    this.closed = true;
  }
}

export class PgChangeClock implements ChangeClock {
  private generation = 0;
  private heard = false;

  /**
   * Something may have changed: our own pool ran a statement that may have changed rows (or the
   * COMMIT of one), or a notification says a connection committed a change to our schema.
   */
  changed(): void {
    this.generation++;
  }

  /**
   * Whether notifications are being heard. Without them another process's commit would go unseen, so
   * nothing is cached; the clock moves on both edges, since what was read before may be stale now.
   */
  listening(on: boolean): void {
    this.heard = on;
    this.generation++;
  }

  now(): number | null {
    return this.heard ? this.generation : null;
  }
}
