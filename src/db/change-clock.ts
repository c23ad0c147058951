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
 *
 * That is not soon enough for processes that take turns serving one client (API_PROCESSES): a write
 * answered by one and a read sent at once to another saw the value before the write, on SQLite 8-15
 * times in 300 with the millisecond above, on PostgreSQL with the notification still on its way
 * (test/api-processes.test.ts). There SQLite reads `data_version` at every cached read, and on
 * PostgreSQL each process rings a bell after its commits, a SQLite file it and the others share, whose
 * `data_version` each looks at before a cached read (src/db/change-bell.ts; `strictChanges`).
 */
import type { ChangeBell } from './change-bell.ts';

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
  private rung: number;
  private bellDown = false;

  /** `bell`: the processes of this machine that take turns serving one client (see above). */
  constructor(private readonly bell?: ChangeBell) {
    this.rung = bell?.heard() ?? 0;
  }

  /**
   * Our own pool ran a statement that may have changed rows, or the COMMIT of one; `committed`: other
   * connections can see it already, so the bell rings (a write inside a transaction waits for its COMMIT).
   */
  changed(committed: boolean): void {
    this.generation++;
    if (!this.bell || !committed) return;
    // The write itself succeeded: a bell that cannot ring (busy past its timeout, a full disk) must
    // not fail it. The siblings could then miss it, so nothing is cached until a ring gets through.
    try {
      this.bell.ring();
      this.bellFailed(false);
    } catch (err) {
      this.bellFailed(true, err);
    }
  }

  private bellFailed(failed: boolean, err?: unknown): void {
    if (failed === this.bellDown) return;
    this.bellDown = failed;
    process.stderr.write(
      failed
        ? `reelbase: the change bell failed (${err instanceof Error ? err.message : String(err)}); reads are not cached until it rings again\n`
        : 'reelbase: the change bell rings again; reads are cached\n',
    );
  }

  /** A notification says a connection committed a change to our schema. */
  notified(): void {
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
    if (!this.heard || this.bellDown) return null;
    if (this.bell) {
      let rung: number;
      try {
        rung = this.bell.heard();
      } catch {
        return null;
      }
      if (rung !== this.rung) {
        this.rung = rung;
        this.generation++;
      }
    }
    return this.generation;
  }

  close(): void {
    this.bell?.close();
  }
}
