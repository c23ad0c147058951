import type { RowsTouched } from './write-scope.ts';

/** The channel the change triggers notify on (src/db/pg-change-triggers.ts); the payload is the schema. */
export const CHANGE_CHANNEL = 'reelbase_changes';
/**
 * The same commits, one notification per table changed (payload: `<schema> <table>`). A second channel
 * rather than a new payload on the first, so that a process of an earlier release, listening beside
 * this one during a rolling upgrade, still hears its own.
 */
export const TABLE_CHANNEL = 'reelbase_changes_tables';

/**
 * A table with an organization_id column: its commits, one notification per organization whose rows
 * changed (payload: `<schema> <table> <organization>`, the organization empty when not one), followed
 * by ` insert` for a row added, or ` row <id>` for one of the first rows a transaction updated or
 * deleted (src/db/pg-change-triggers.ts).
 */
export const ORGANIZATION_CHANNEL = 'reelbase_changes_organizations';

/**
 * An ORGANIZATION_CHANNEL payload after its schema: the table, the organization (null: not told) and
 * which of its rows (anything not understood, e.g. an earlier release's payload, is 'some').
 */
export function parseOrganizationPayload(rest: string): { table: string; organization: number | null; rows: RowsTouched } {
  const [table, whose, kind, id, ...more] = rest.split(' ');
  const organization = whose ? Number(whose) : NaN;
  if (!Number.isSafeInteger(organization)) return { table, organization: null, rows: 'some' };
  const row = kind === 'row' && id && /^[0-9]{1,15}$/.test(id) ? Number(id) : null;
  const rows: RowsTouched = more.length > 0 ? 'some' : kind === 'insert' && id === undefined ? 'none' : row !== null ? row : 'some';
  return { table, organization, rows };
}

/** A notification as the driver gives it. */
export interface ChangeNotice {
  channel: string;
  payload?: string;
  processId: number;
}

/** What the notices move (src/db/change-clock.ts, PgChangeClock). */
export interface NoticedClock {
  /** Tables whose commits are notified per organization too: their notifications per table are left to those. */
  readonly organizationTables: ReadonlySet<string>;
  /** Everything: a commit of unknown reach. */
  notified(): void;
  /** `table`, of `organization`'s rows when told (and which of them). */
  notifiedTable(table: string, organization?: number | null, rows?: RowsTouched): void;
}

/** Another backend's commit, while its notifications arrive: the tables it named, and those it named by organization. */
interface OpenCommit {
  processId: number;
  tables: Set<string>;
  byOrganization: Set<string>;
}

/**
 * The change triggers' notifications about our schema (src/db/pg-change-triggers.ts), told to the
 * clock. Every trigger sends CHANGE_CHANNEL first, then the table's own notifications, and PostgreSQL
 * delivers a transaction's notifications together, in the order they were first sent: a CHANGE
 * notification of another backend opens its commit, and what follows from that backend says what
 * it changed. A commit that named no table (a trigger function of an earlier release, or one whose
 * notifications were split between two reads of the socket) moves everything, as every commit of
 * another process did before; a table named without its organization moves whole.
 *
 * Our own pool's commits moved the clock already, by the tables they wrote (wrapPgPool). Their
 * notifications per table move those tables again: what the reach missed (a foreign key or trigger
 * another process's migration added, a COMMIT whose answer never came) is then caught within a moment.
 */
export class ChangeNotices {
  private open: OpenCommit | null = null;
  private settling = false;

  constructor(
    private readonly schema: string,
    private readonly clock: NoticedClock,
    private readonly own: ReadonlySet<number>,
    /** When what arrived together has been taken: the driver emits a read's notifications one after another, synchronously. */
    private readonly afterwards: (settle: () => void) => void = queueMicrotask,
  ) {}

  take(notice: ChangeNotice): void {
    const { channel, payload, processId } = notice;
    if (channel === CHANGE_CHANNEL) {
      if (payload !== this.schema || this.own.has(processId)) return;
      this.settle();
      this.open = { processId, tables: new Set(), byOrganization: new Set() };
      if (!this.settling) {
        this.settling = true;
        this.afterwards(() => {
          this.settling = false;
          this.settle();
        });
      }
      return;
    }
    if (!payload?.startsWith(`${this.schema} `)) return;
    const rest = payload.slice(this.schema.length + 1);
    // Our own pool's commits open none (their schema notification is left above).
    const open = this.open?.processId === processId ? this.open : null;
    if (channel === ORGANIZATION_CHANNEL) {
      const { table, organization, rows } = parseOrganizationPayload(rest);
      this.clock.notifiedTable(table, organization, rows);
      if (open && organization !== null) open.byOrganization.add(table);
    } else if (channel === TABLE_CHANNEL) {
      // Ours: a table notified per organization is left to those. Another's outside an open commit
      // (the rest of one whose start was settled already): the whole table, now.
      if (this.own.has(processId)) {
        if (!this.clock.organizationTables.has(rest)) this.clock.notifiedTable(rest);
      } else if (open) open.tables.add(rest);
      else this.clock.notifiedTable(rest);
    }
  }

  /** The open commit, told as far as its notifications went. */
  settle(): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    if (open.tables.size === 0) return this.clock.notified();
    for (const table of open.tables) if (!open.byOrganization.has(table)) this.clock.notifiedTable(table);
  }
}
