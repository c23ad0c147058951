import { withDriver, WrappingDriver } from './driver-wrapper.ts';
import {
  AndNode,
  BinaryOperationNode,
  ColumnNode,
  OperatorNode,
  ParensNode,
  PrimitiveValueListNode,
  ReferenceNode,
  ValueListNode,
  ValueNode,
  ValuesNode,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type OperationNode,
  type QueryResult,
  type RootOperationNode,
} from 'kysely';

/**
 * The organization whose rows a write statement can change, read off the statement's own tree, or
 * null when that cannot be told. Only forms that cannot touch another organization's row of their
 * table count: an insert whose every row names the same `organization_id` (no upsert, no replace, no
 * insert from a select); an update or delete of one table whose WHERE requires `organization_id = v`
 * (an AND of conditions, one of them that), an update that does not set `organization_id` itself.
 * What the statement reaches besides its table (cascades, triggers) is not covered: the change clock
 * counts those as changes of every organization (src/db/change-clock.ts).
 */
export function organizationOf(node: RootOperationNode): number | null {
  switch (node.kind) {
    case 'InsertQueryNode':
      return node.into && !node.replace && !node.orAction && !node.onConflict && !node.onDuplicateKey && !node.with && !node.endModifiers?.length
        ? insertedOrganization(node.columns, node.values)
        : null;
    case 'UpdateQueryNode':
      if (node.with || node.from || node.joins?.length || node.endModifiers?.length || node.table?.kind !== 'TableNode') return null;
      // Every column set must be told for one that is not organization_id (not one written as raw SQL).
      if (node.updates?.some((u) => !isColumn(u.column) || isOrganizationColumn(u.column))) return null;
      return requiredOrganization(node.where?.where);
    case 'DeleteQueryNode':
      if (node.with || node.using || node.joins?.length || node.endModifiers?.length || node.from.froms.length !== 1 || node.from.froms[0].kind !== 'TableNode')
        return null;
      return requiredOrganization(node.where?.where);
    default:
      return null;
  }
}

const COLUMN = 'organization_id';

/**
 * Which existing rows of its own table a statement that `organizationOf` scopes to one organization
 * can have changed: 'none' for an insert (it adds rows and changes none that exist; a row read by
 * id is never cached missing, src/db/read-cache.ts), the row's id for an update or delete whose WHERE
 * also requires `id = v` (an update that does not set `id` itself), 'some' otherwise.
 */
export type RowsTouched = 'none' | number | 'some';

/**
 * Whose rows a write statement can change (`organizationOf`) and which of them: the rows are told
 * only of a statement scoped to one organization, whose forms `organizationOf` has already narrowed.
 */
export function writeScopeOf(node: RootOperationNode): { organization: number | null; rows: RowsTouched } {
  const organization = organizationOf(node);
  return { organization, rows: organization === null ? 'some' : rowsTouchedBy(node) };
}

function rowsTouchedBy(node: RootOperationNode): RowsTouched {
  switch (node.kind) {
    case 'InsertQueryNode':
      return 'none';
    case 'UpdateQueryNode':
      if (node.updates?.some((u) => !isColumn(u.column) || isNamed(u.column, ID))) return 'some';
      return requiredInteger(node.where?.where, ID) ?? 'some';
    case 'DeleteQueryNode':
      return requiredInteger(node.where?.where, ID) ?? 'some';
    default:
      return 'some';
  }
}

const ID = 'id';

const isColumn = (node: OperationNode): boolean => ColumnNode.is(node) || (ReferenceNode.is(node) && ColumnNode.is(node.column));

const isOrganizationColumn = (node: OperationNode | undefined): boolean => isNamed(node, COLUMN);

function isNamed(node: OperationNode | undefined, name: string): boolean {
  if (!node) return false;
  // SQLite's names are case-insensitive.
  if (ColumnNode.is(node)) return node.column.name.toLowerCase() === name;
  // `table.organization_id`: Kysely's ReferenceNode around the column.
  if (ReferenceNode.is(node)) return isNamed(node.column, name);
  return false;
}

const integerValue = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) ? value : null);

function insertedOrganization(columns: readonly OperationNode[] | undefined, values: OperationNode | undefined): number | null {
  const at = columns?.findIndex(isOrganizationColumn) ?? -1;
  if (at < 0 || !values || !ValuesNode.is(values)) return null;
  let found: number | null = null;
  for (const row of values.values) {
    let value: number | null;
    if (PrimitiveValueListNode.is(row)) value = integerValue(row.values[at]);
    else if (ValueListNode.is(row)) {
      const item = row.values[at];
      value = item && ValueNode.is(item) ? integerValue(item.value) : null;
    } else return null;
    if (value === null || (found !== null && value !== found)) return null;
    found = value;
  }
  return found;
}

/** The organization an AND of conditions requires by `organization_id = v` (either side), if any. */
const requiredOrganization = (where: OperationNode | undefined): number | null => requiredInteger(where, COLUMN);

/** The integer an AND of conditions requires of column `name` by `name = v` (either side), if any. */
function requiredInteger(where: OperationNode | undefined, name: string): number | null {
  if (!where) return null;
  if (AndNode.is(where)) return requiredInteger(where.left, name) ?? requiredInteger(where.right, name);
  if (ParensNode.is(where)) return requiredInteger(where.node, name);
  if (!BinaryOperationNode.is(where)) return null;
  const { leftOperand, operator, rightOperand } = where;
  if (!OperatorNode.is(operator) || operator.operator !== '=') return null;
  const [column, value] = isNamed(leftOperand, name) ? [leftOperand, rightOperand] : [rightOperand, leftOperand];
  if (!isNamed(column, name) || !ValueNode.is(value)) return null;
  return integerValue(value.value);
}

// The statement being sent, set while Kysely's connection runs it: both drivers hand the statement to
// their client synchronously inside `executeQuery` (better-sqlite3 runs it there; `pg` is called
// before the first await), where the connection wrappers (src/db/sqlite-connection.ts,
// src/db/pg-connection.ts) read it. test/unit/write-scope.test.ts checks the hand-over to SQLite's;
// test/read-cache.test.ts fails on both dialects when nothing is handed over. A hand-over that failed
// would tell null (anyone's rows), never another statement's organization.
let sending: number | null = null;
let sendingRows: RowsTouched = 'some';

/** The organization of the statement being handed to the database client now (null: unknown or none). */
export function organizationBeingWritten(): number | null {
  return sending;
}

/** Which of that organization's existing rows the statement can touch (`rowsTouchedBy`); meaningful only with an organization. */
export function rowsBeingWritten(): RowsTouched {
  return sendingRows;
}

class ScopedConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const before = sending;
    const beforeRows = sendingRows;
    ({ organization: sending, rows: sendingRows } = writeScopeOf(compiledQuery.query));
    try {
      return this.inner.executeQuery<R>(compiledQuery);
    } finally {
      sending = before;
      sendingRows = beforeRows;
    }
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}

/** `dialect` with every statement's organization (`organizationOf`) told to the client's wrapper as it is sent. */
export function scopingWrites(dialect: Dialect): Dialect {
  return withDriver(dialect, (inner) => new WrappingDriver(inner, (connection) => new ScopedConnection(connection)));
}
