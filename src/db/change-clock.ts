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
import { isDatabaseBusy } from '../lib/errors.ts';
import type { ChangeBell, Ring } from './change-bell.ts';
import { tablesChanged, type ChangeCounts } from './sqlite-change-counts.ts';
import { ownRows, ownScope, WriteReach, type Reach } from './write-reach.ts';
import type { RowsTouched } from './write-scope.ts';

/**
 * Our own writes name the tables they changed (src/db/write-reach.ts), so that a cached read is
 * dropped only by a change to a table it read: a CTA written does not cost every organization's
 * cached tokens. A write whose statement says whose rows of its table it changed
 * (src/db/write-scope.ts) moves that table for that organization only, so that one organization's
 * CTA written does not cost another's cached CTAs either. A change of unknown reach (another
 * process's commit, a statement whose table cannot be told) moves every table at once.
 */
export class Generations {
  private everything = 0;
  private readonly byTable = new Map<string, TableCount>();
  /** Moves on every change, whatever it reached. */
  total = 0;

  /**
   * `tables` may have changed (null: any table); `scoped`: those of them whose changed rows are all of
   * one organization, with that organization; `rows`: which of that organization's existing rows of
   * such a table the change can have touched (src/db/write-scope.ts; not told: 'some').
   */
  moved(tables: readonly string[] | null, scoped?: ReadonlyMap<string, number> | null, rows?: ReadonlyMap<string, RowsTouched> | null): void {
    this.total++;
    if (tables === null) {
      this.everything++;
      return;
    }
    for (const table of tables) {
      let count = this.byTable.get(table);
      if (!count) this.byTable.set(table, (count = { all: 0, shared: 0, byOrganization: new Map(), rows: new RowChanges() }));
      count.all++;
      const organization = scoped?.get(table);
      if (organization === undefined) {
        count.shared++;
        count.rows.unknown++;
        continue;
      }
      count.byOrganization.set(organization, (count.byOrganization.get(organization) ?? 0) + 1);
      count.rows.moved(organization, rows?.get(table) ?? 'some');
    }
  }

  /** `table` changed: of `organization`'s rows when told (and which of them), else all of it. */
  movedTable(table: string, organization: number | null = null, rows: RowsTouched = 'some'): void {
    if (organization === null) this.moved([table]);
    else this.moved([table], new Map([[table, organization]]), new Map([[table, rows]]));
  }

  /** A number that moves whenever one of `tables` may have changed (null: any table). */
  of(tables: ReadonlySet<string> | null): number {
    if (tables === null) return this.total;
    let sum = this.everything;
    for (const table of tables) sum += this.byTable.get(table)?.all ?? 0;
    return sum;
  }

  /** A number that moves whenever one of `tables` may have changed rows of `organizations` (one or several, without repeats). */
  ofOrganization(tables: ReadonlySet<string> | null, organizations: number | readonly number[]): number {
    if (tables === null) return this.total;
    let sum = this.everything;
    for (const table of tables) {
      const count = this.byTable.get(table);
      if (!count) continue;
      sum += count.shared;
      if (typeof organizations === 'number') sum += count.byOrganization.get(organizations) ?? 0;
      else for (const organization of organizations) sum += count.byOrganization.get(organization) ?? 0;
    }
    return sum;
  }

  /**
   * `ofOrganization` for a value that read one existing row of `row.table` (by its id) and any rows of
   * the other tables: changes of that table that added rows or touched only its other rows leave it.
   */
  ofRow(tables: ReadonlySet<string> | null, organization: number, row: RowRead): number {
    if (tables === null) return this.total;
    let sum = this.everything;
    for (const table of tables) {
      const count = this.byTable.get(table);
      if (!count) continue;
      if (table === row.table) sum += count.rows.of(organization, row.id);
      else sum += count.shared + (count.byOrganization.get(organization) ?? 0);
    }
    return sum;
  }

  /** The count of changes of one table (those of unknown reach included). */
  ofTable(table: string): number {
    return this.everything + (this.byTable.get(table)?.all ?? 0);
  }

  /** The count of changes of `table` that can have touched its existing row `id`, of any organization. */
  ofTableRow(table: string, id: number): number {
    return this.everything + (this.byTable.get(table)?.rows.ofAny(id) ?? 0);
  }
}

/** One existing row of a table, read by its id. */
export interface RowRead {
  table: string;
  id: number;
}

const MAX_ROWS_FOLLOWED = 10_000;

/**
 * A table's changes as they bear on single rows read by id: those of one row, those of an
 * organization's rows not told which, and those of anyone's (`unknown`). Inserts are in none of them:
 * a plain insert changes no row that exists, and a missing row is never cached (src/db/read-cache.ts).
 */
class RowChanges {
  unknown = 0;
  /** An organization's changes of rows not told which. */
  private readonly someByOrganization = new Map<number, number>();
  /** Those of every organization, summed. */
  private someTotal = 0;
  private readonly byRow = new Map<number, number>();
  /** byRow's counts, summed. */
  private rowsTotal = 0;

  moved(organization: number, rows: RowsTouched): void {
    if (rows === 'none') return;
    if (rows === 'some') {
      this.someTotal++;
      this.someByOrganization.set(organization, (this.someByOrganization.get(organization) ?? 0) + 1);
      return;
    }
    // Rows written one by one are followed up to a bound; past it their counts go into `unknown`, by
    // more than any of them had, so that every sum that held one of them moves.
    if (this.byRow.size >= MAX_ROWS_FOLLOWED && !this.byRow.has(rows)) {
      this.unknown += this.rowsTotal + 1;
      this.byRow.clear();
      this.rowsTotal = 0;
    }
    this.rowsTotal++;
    this.byRow.set(rows, (this.byRow.get(rows) ?? 0) + 1);
  }

  /** Moves whenever the organization's row `id` may have changed. */
  of(organization: number, id: number): number {
    return this.unknown + (this.someByOrganization.get(organization) ?? 0) + (this.byRow.get(id) ?? 0);
  }

  /** Moves whenever row `id` may have changed, whoever's it is. */
  ofAny(id: number): number {
    return this.unknown + this.someTotal + (this.byRow.get(id) ?? 0);
  }
}

interface TableCount {
  /** Every change of the table. */
  all: number;
  /** Those that may have changed any organization's rows. */
  shared: number;
  /** Those that changed only one organization's rows, by organization. */
  byOrganization: Map<number, number>;
  /** The same changes, as they bear on rows read by id. */
  rows: RowChanges;
}

export interface ChangeClock {
  /** The current generation (`generations.total`), or null when changes cannot be detected and nothing may be cached. */
  now(): number | null;
  readonly generations: Generations;
  /** Which tables our own statements reach, learnt from the schema after the migrations. */
  readonly reach: WriteReach;
  /** Learns `reach` by `read` (the schema's catalog), after the migrations. */
  learnReach(read: () => Promise<Reach>): Promise<void>;
}

export class SqliteChangeClock implements ChangeClock {
  readonly generations = new Generations();
  readonly reach = new WriteReach();
  private version: number;
  private checkedAt: number;
  private closed = false;
  /** The schema's version when `reach` was read, and how to read it again. */
  private reachVersion: number | null = null;
  private readReach: (() => Promise<Reach>) | null = null;
  private relearning = false;
  /** After a failed read of the reach: when a write may try again. */
  private retryAt = 0;

  /** The change counts as of `version`, with our own writes since (null: not read, or not to be trusted). */
  private counted: ChangeCounts | null = null;
  /** Our own connection changed rows since `counted` was read: its counts are behind. */
  private ownSinceCounted = false;

  /**
   * `schemaVersion`: PRAGMA schema_version, which any connection's DDL moves. `counts`: each table's
   * count of changed rows (src/db/sqlite-change-counts.ts), which tells what another connection's
   * commit changed; without them (or when they answer null) such a commit moves every table.
   */
  constructor(
    private readonly dataVersion: () => number,
    private readonly maxAgeMs = 1,
    private readonly schemaVersion: () => number = () => 0,
    private readonly counts: () => ChangeCounts | null = () => null,
  ) {
    this.version = dataVersion();
    this.checkedAt = performance.now();
  }

  async learnReach(read: () => Promise<Reach>): Promise<void> {
    this.readReach = read;
    this.relearning = true;
    try {
      // Read again if the schema changed while it was being read (its catalog takes several statements).
      for (;;) {
        const version = this.schemaVersion();
        const reach = await read();
        if (this.schemaVersion() !== version) continue;
        this.reach.learn(reach);
        this.reachVersion = version;
        return;
      }
    } finally {
      this.relearning = false;
    }
  }

  /**
   * Our own connection's statement changed rows (data_version only counts other connections);
   * `organization`: whose rows of its own table it changed, when its tree says (src/db/write-scope.ts).
   */
  changed(statement: string, organization: number | null = null, rows: RowsTouched = 'some'): void {
    // Another process's migration may have added a trigger or a cascade our writes now set off: what
    // they reach is unknown until the schema is read again. Checked at every write that reaches a
    // cached table, since the very next one can fire it (writes only to uncached tables, such as the
    // viewers' reports, are not looked at: a trigger added to those would go unseen).
    this.relearnIfStale();
    const reach = this.reach.of(statement);
    this.ownSinceCounted = true;
    this.generations.moved(reach.tables, ownScope(reach, organization), ownRows(reach, rows));
  }

  private relearnIfStale(): void {
    if (this.readReach && !this.relearning && (this.reachVersion === null ? performance.now() >= this.retryAt : this.schemaMoved())) this.relearn();
  }

  /** Whether the schema's version moved since the reach was read (a version that cannot be read counts as moved). */
  private schemaMoved(): boolean {
    try {
      return this.schemaVersion() !== this.reachVersion;
    } catch {
      return true;
    }
  }

  private relearn(): void {
    this.reach.forget();
    this.reachVersion = null;
    this.learnReach(this.readReach!).catch((err: unknown) => {
      // Left unknown meanwhile (every write of ours then moves every table, which is never stale); tried again in a second.
      this.retryAt = performance.now() + 1_000;
      process.stderr.write(`reelbase: reading what writes reach failed (${err instanceof Error ? err.message : String(err)}); trying again\n`);
    });
  }

  now(): number | null {
    if (this.closed) return null;
    const at = performance.now();
    if (at - this.checkedAt >= this.maxAgeMs) {
      this.checkedAt = at;
      let version: number;
      try {
        version = this.dataVersion();
      } catch (error) {
        // Reading it needs a look at the log, which fails while another connection rebuilds the log's
        // index after a crash (busy timeout 0, src/db/sqlite-busy.ts): anything may have changed.
        if (!isDatabaseBusy(error)) throw error;
        this.checkedAt = -Infinity;
        this.counted = null;
        this.generations.moved(null);
        return this.generations.total;
      }
      if (version !== this.version) {
        this.version = version;
        this.otherCommitted();
      } else if (this.counted === null || this.ownSinceCounted) this.recount();
    }
    return this.generations.total;
  }

  /**
   * Reads the counts again while no other connection committed since `version`: they then differ
   * from those kept by our own writes alone, already followed, which a later commit of another
   * connection must not drop again. A commit that lands between the two reads leaves the old counts
   * kept, and moves `data_version` for the next look, which compares with those.
   */
  private recount(): void {
    const now = this.counts();
    if (!now) return;
    try {
      if (this.dataVersion() !== this.version) return;
    } catch {
      return; // Busy (see `now`): the old counts stay, and the next look reads data_version again.
    }
    this.counted = now;
    this.ownSinceCounted = false;
  }

  /**
   * Another connection committed since `data_version` was last read: the tables whose counts moved
   * since then changed, and the uncounted tables a change of theirs reaches (the FTS5 tables their
   * triggers keep). The counts are read after `data_version`, so a commit between the two reads is in
   * them, or moves `data_version` again for the next look. Our own writes move counts too: those not
   * read again yet (`recount`) are seen here, and drop what they reached once more, which is never stale.
   */
  private otherCommitted(): void {
    const before = this.counted;
    const now = (this.counted = this.counts());
    this.ownSinceCounted = false;
    // What the tables reach was read under another schema (another process's migration): not trusted either.
    if (!before || !now || before.schema !== now.schema || now.schema !== this.reachVersion) {
      if (now && now.schema !== this.reachVersion) this.relearnIfStale();
      this.generations.moved(null);
      return;
    }
    const changed = tablesChanged(before.counts, now.counts);
    if (changed.length === 0) return;
    // A counted table whose count stands did not change, whatever a change of these could reach (a
    // cascade fires its triggers too); those that do not count (FTS5's) follow the tables that keep them.
    const reached = this.reach.ofTables(changed);
    if (reached === null) return this.generations.moved(null);
    const whole: string[] = [];
    for (const table of reached) {
      if (!changed.includes(table)) {
        if (!now.counts.has(table)) whole.push(table);
        continue;
      }
      // A table of organizations: those whose rows it changed since, each alone.
      const since = before.counts.get(table);
      const organizations = since === undefined ? null : (now.organizationsSince?.(table, since) ?? null);
      if (organizations === null) whole.push(table);
      else for (const organization of organizations) this.generations.movedTable(table, organization);
    }
    if (whole.length > 0) this.generations.moved(whole);
  }

  close(): void {
    this.closed = true;
  }
}

export class PgChangeClock implements ChangeClock {
  readonly generations = new Generations();
  readonly reach = new WriteReach();
  /**
   * Tables whose commits are notified per organization too (src/db/pg-change-triggers.ts): their
   * notifications per table are left to those. Learnt after the migrations; until then, none.
   */
  organizationTables: ReadonlySet<string> = new Set();
  private heard = false;
  private bellDown = false;

  /** `bell`: the processes of this machine that take turns serving one client (see above). */
  constructor(private readonly bell?: ChangeBell) {}

  /**
   * Our own pool ran a statement that may have changed `tables` (null: unknown), or the COMMIT of one;
   * `committed`: other connections can see it already, so the bell rings (a write inside a transaction
   * waits for its COMMIT); `scoped`: the tables whose changed rows are all of one organization's.
   */
  changed(
    tables: readonly string[] | null,
    committed: boolean,
    scoped?: ReadonlyMap<string, number> | null,
    rows?: ReadonlyMap<string, RowsTouched> | null,
  ): void {
    this.generations.moved(tables, scoped, rows);
    if (!this.bell || !committed) return;
    // The write itself succeeded: a bell that cannot ring (busy past its timeout, a full disk) must
    // not fail it. The siblings could then miss it, so nothing is cached until a ring gets through.
    try {
      this.bell.ring({ tables, scoped, rows });
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

  /**
   * A commit's notifications say it changed `table` (of `organization`'s rows, when they say; and
   * which of them, when they say: src/db/pg-change-notices.ts).
   */
  notifiedTable(table: string, organization: number | null = null, rows: RowsTouched = 'some'): void {
    this.generations.movedTable(table, organization, rows);
  }

  async learnReach(read: () => Promise<Reach>): Promise<void> {
    // A trigger or cascade another process's migration adds later is caught by its tables' notifications (see `listenForChanges`).
    this.reach.learn(await read());
  }

  /** Another connection committed a change to our schema, and its notifications did not say where. */
  notified(): void {
    this.generations.moved(null);
  }

  /**
   * Whether notifications are being heard. Without them another process's commit would go unseen, so
   * nothing is cached; the clock moves on both edges, since what was read before may be stale now.
   */
  listening(on: boolean): void {
    this.heard = on;
    this.generations.moved(null);
  }

  now(): number | null {
    if (!this.heard || this.bellDown) return null;
    if (this.bell) {
      let rings: Ring[];
      try {
        rings = this.bell.heard();
      } catch {
        return null;
      }
      // What the other process's commit changed, as it told its own clock: its notifications follow.
      for (const ring of rings) this.generations.moved(ring.tables, ring.scoped, ring.rows);
    }
    return this.generations.total;
  }

  close(): void {
    this.bell?.close();
  }
}
