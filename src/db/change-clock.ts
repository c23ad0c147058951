/**
 * A generation number that moves whenever the database may have changed, from this process or from
 * any other, so that reads can be answered from memory while it stands still (src/db/read-cache.ts).
 *
 * SQLite: our own connection counts the statements that changed rows (and every rollback), and
 * `PRAGMA data_version` tells about commits by any other connection, such as the CLI or a worker
 * process. That pragma is read once per event-loop turn: a request sees every commit made before
 * the turn it started in, which is what "at once" can mean between processes.
 *
 * PostgreSQL has no such cheap signal (other processes commit over other connections), so there is
 * no clock there and nothing is cached.
 */
export interface ChangeClock {
  /** The current generation, or null when changes cannot be detected and nothing may be cached. */
  now(): number | null;
}

export class SqliteChangeClock implements ChangeClock {
  private generation = 0;
  private version: number;
  private checked = false;
  private closed = false;
  private readonly uncheck = () => {
    this.checked = false;
  };

  constructor(private readonly dataVersion: () => number) {
    this.version = dataVersion();
  }

  /** Our own connection changed something (data_version only counts other connections). */
  changed(): void {
    this.generation++;
  }

  now(): number | null {
    if (this.closed) return null;
    if (!this.checked) {
      const version = this.dataVersion();
      if (version !== this.version) {
        this.version = version;
        this.generation++;
      }
      this.checked = true;
      setImmediate(this.uncheck);
    }
    return this.generation;
  }

  close(): void {
    this.closed = true;
  }
}
