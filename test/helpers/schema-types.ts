/**
 * Compares the Kysely table types of src/db/schema.ts with a migrated database (test/schema-types.test.ts).
 *
 * Both sides are first turned into plain descriptions (table → column → facts), so that the comparison
 * is a pure function the test can also feed deliberately wrong descriptions, proving it can fail.
 */
import path from 'node:path';
import { sql } from 'kysely';
import ts from 'typescript';
import type { Database, DialectName } from '../../src/db/database.ts';
import { CHANGES_TABLE, ORGANIZATION_CHANGES_TABLE } from '../../src/db/sqlite-change-counts.ts';

// ---- what schema.ts says ----------------------------------------------------------------------

/** A TypeScript type reduced to what a driver can hand back: 'number', 'string', 'boolean', 'bigint', 'Date', … */
export type Kind = string;

export interface TypeColumn {
  /** The select type admits null. */
  nullable: boolean;
  /** The select type's kinds, null and undefined aside, sorted (`Bool` is ['boolean', 'number']). */
  kinds: Kind[];
  /** An insert may leave the column out (`Generated<T>`, an insert type admitting undefined, `?`, or never). */
  insertOptional: boolean;
}

/** table → column → facts. */
export type SchemaDescription = Record<string, Record<string, TypeColumn>>;

export const SCHEMA_FILE = path.resolve(import.meta.dirname, '../../src/db/schema.ts');

function kindOf(checker: ts.TypeChecker, type: ts.Type): Kind {
  const f = type.flags;
  if (f & ts.TypeFlags.Null) return 'null';
  if (f & ts.TypeFlags.Undefined || f & ts.TypeFlags.Void) return 'undefined';
  if (f & ts.TypeFlags.NumberLike) return 'number';
  if (f & ts.TypeFlags.StringLike) return 'string';
  if (f & ts.TypeFlags.BooleanLike) return 'boolean';
  if (f & ts.TypeFlags.BigIntLike) return 'bigint';
  if (f & ts.TypeFlags.Never) return 'never';
  if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return 'unknown';
  if (checker.isArrayType(type) || checker.isTupleType(type)) return 'array';
  return type.getSymbol()?.getName() === 'Date' ? 'Date' : `object`;
}

const members = (type: ts.Type): ts.Type[] => (type.isUnion() ? type.types : [type]);

/** The previous program, whose unchanged files (the lib, kysely's declarations) the next one reuses. */
let previous: ts.Program | undefined;

/**
 * Reads the `DB` interface of a schema file with the type checker (aliases, `Generated<T>` and
 * `ColumnType<S, I, U>` resolved; S is what a select returns). `sourceText` replaces the file's
 * contents (the unit cases give a fixture under a made-up name next to the real file, so that
 * `kysely` resolves the same way).
 */
export function parseSchemaTypes(fileName = SCHEMA_FILE, sourceText?: string, interfaceName = 'DB'): SchemaDescription {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true, // strictNullChecks: without it `T | null` is just T
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options, true);
  if (sourceText !== undefined) {
    const { getSourceFile, fileExists, readFile } = host;
    const same = (f: string) => path.resolve(f) === path.resolve(fileName);
    host.getSourceFile = (f, lang, ...rest) => (same(f) ? ts.createSourceFile(f, sourceText, lang, true) : getSourceFile.call(host, f, lang, ...rest));
    host.fileExists = (f) => same(f) || fileExists.call(host, f);
    host.readFile = (f) => (same(f) ? sourceText : readFile.call(host, f));
  }
  const program = ts.createProgram([fileName], options, host, previous);
  previous = program;
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(fileName);
  if (!source) throw new Error(`${fileName}: not found`);
  const errors = ts.getPreEmitDiagnostics(program, source).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length > 0) throw new Error(`${fileName} does not compile: ${errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('; ')}`);
  const moduleSymbol = checker.getSymbolAtLocation(source);
  const dbSymbol = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.getName() === interfaceName);
  if (!dbSymbol) throw new Error(`${fileName} exports no ${interfaceName}`);
  const dbType = checker.getDeclaredTypeOfSymbol(dbSymbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(dbSymbol) : dbSymbol);

  const description: SchemaDescription = {};
  for (const table of checker.getPropertiesOfType(dbType)) {
    const columns: Record<string, TypeColumn> = {};
    for (const column of checker.getPropertiesOfType(checker.getTypeOfSymbol(table))) {
      const selected: ts.Type[] = [];
      let insertOptional = (column.flags & ts.SymbolFlags.Optional) !== 0;
      for (const m of members(checker.getTypeOfSymbol(column))) {
        const select = checker.getPropertyOfType(m, '__select__');
        if (!select) {
          selected.push(m);
          continue;
        }
        selected.push(...members(checker.getTypeOfSymbol(select)));
        const insert = checker.getPropertyOfType(m, '__insert__');
        const insertKinds = insert ? members(checker.getTypeOfSymbol(insert)).map((t) => kindOf(checker, t)) : [];
        if (insertKinds.includes('undefined') || insertKinds.includes('never')) insertOptional = true;
      }
      const kinds = selected.map((t) => kindOf(checker, t));
      columns[column.getName()] = {
        nullable: kinds.includes('null'),
        kinds: [...new Set(kinds.filter((k) => k !== 'null' && k !== 'undefined'))].sort(),
        insertOptional: insertOptional || kinds.includes('undefined'),
      };
    }
    description[table.getName()] = columns;
  }
  return description;
}

// ---- what the database says -------------------------------------------------------------------

export interface DbColumn {
  /** The SQL type as the catalog names it, lower case (SQLite: the declared type). */
  dataType: string;
  nullable: boolean;
  /** A default or an auto-increment: an insert may leave the column out. */
  generated: boolean;
}

export type DbDescription = Record<string, Record<string, DbColumn>>;

/** Kysely's own migration tables, and SQLite's change counts, which only raw SQL reads (src/db/sqlite-change-counts.ts): never in DB. */
export const INTERNAL_TABLES = ['kysely_migration', 'kysely_migration_lock', CHANGES_TABLE, ORGANIZATION_CHANGES_TABLE];

/** The tables of the database's own schema (PostgreSQL: current_schema(), not the other test files'). */
export async function describeDatabase(database: Database): Promise<DbDescription> {
  const schema = database.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(database.db)).rows[0].s : undefined;
  const tables = await database.db.introspection.getTables({ withInternalKyselyTables: true });
  // SQLite's full-text indexes (FTS5 virtual tables and their shadow tables) are indexes, not tables of DB.
  const virtual =
    database.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and sql like 'CREATE VIRTUAL TABLE%'`.execute(database.db)).rows.map(
          (r) => r.name,
        )
      : [];
  const description: DbDescription = {};
  for (const table of tables) {
    if (schema !== undefined && table.schema !== schema) continue;
    if (INTERNAL_TABLES.includes(table.name)) continue;
    if (virtual.some((v) => table.name === v || table.name.startsWith(`${v}_`))) continue;
    const columns: Record<string, DbColumn> = {};
    for (const c of table.columns) {
      columns[c.name] = {
        dataType: c.dataType.toLowerCase(),
        // SQLite's table_info calls an INTEGER PRIMARY KEY nullable (notnull = 0), but it is the rowid
        // alias and can never hold NULL (Kysely marks exactly that column auto-incrementing).
        nullable: c.isNullable && !(database.dialect === 'sqlite' && c.isAutoIncrementing),
        generated: c.hasDefaultValue || c.isAutoIncrementing,
      };
    }
    description[table.name] = columns;
  }
  return description;
}

// ---- the SQL types, per dialect -----------------------------------------------------------------

export interface SqlType {
  /** What the driver hands back for a value of this type (typeof): the select type must admit it. */
  returns: Kind | 'any';
  /** Every kind the select type may claim (a boolean column is `Bool`: boolean on PostgreSQL, 0/1 on SQLite). */
  admits: Kind[];
}

const NUMBER: SqlType = { returns: 'number', admits: ['number'] };
const STRING: SqlType = { returns: 'string', admits: ['string'] };

/**
 * The SQL types the migrations use (and a few neighbours), and what the select type may say for each.
 * test/schema-types.test.ts checks every `returns` against the driver, so the table cannot drift.
 */
export const SQL_TYPES: Record<DialectName, Record<string, SqlType>> = {
  sqlite: {
    integer: NUMBER,
    bigint: NUMBER,
    real: NUMBER,
    text: STRING,
    // Declared boolean: NUMERIC affinity, stored and read back as 0/1.
    boolean: { returns: 'number', admits: ['boolean', 'number'] },
    // Bytes: a Buffer (schema.ts says Uint8Array, which a Buffer is).
    blob: { returns: 'object', admits: ['object'] },
  },
  postgres: {
    int4: NUMBER,
    // int8 comes back as a string by default; src/db/database.ts installs a pg type parser (oid 20) that
    // makes it a number (second-precision times and counts fit).
    int8: NUMBER,
    float8: NUMBER,
    // No parser for numeric: the driver keeps its text, to lose no precision.
    numeric: STRING,
    text: STRING,
    varchar: STRING,
    bool: { returns: 'boolean', admits: ['boolean', 'number'] },
    bytea: { returns: 'object', admits: ['object'] },
    // Parsed JSON: whatever schema.ts says it holds.
    json: { returns: 'any', admits: [] },
    jsonb: { returns: 'any', admits: [] },
  },
};

// ---- the comparison -----------------------------------------------------------------------------

export type Check = 'table' | 'column' | 'nullability' | 'kind' | 'insert-default';

export interface Mismatch {
  dialect: DialectName;
  check: Check;
  table: string;
  /** Absent for a whole missing table. */
  column?: string;
  message: string;
}

const list = (kinds: Kind[]) => kinds.join(' | ') || '(nothing)';

/**
 * Every disagreement between schema.ts and the database, each naming its table and column: tables and
 * columns present on one side only; nullability; a select type that does not admit what the driver
 * returns, or claims a kind the SQL type cannot hold; and an insert-optional, non-null column (e.g.
 * `Generated<T>`) without a default in the database (an insert leaving it out would fail).
 */
export function compareSchema(types: SchemaDescription, database: DbDescription, dialect: DialectName, sqlTypes = SQL_TYPES[dialect]): Mismatch[] {
  const out: Mismatch[] = [];
  const add = (check: Check, table: string, column: string | undefined, message: string) =>
    out.push({
      dialect,
      check,
      table,
      ...(column === undefined ? {} : { column }),
      message: `${dialect}: ${column === undefined ? table : `${table}.${column}`}: ${message}`,
    });

  for (const table of Object.keys(types).sort()) {
    if (!database[table]) add('table', table, undefined, 'in schema.ts (DB) but not in the migrated database');
  }
  for (const table of Object.keys(database).sort()) {
    if (!types[table]) {
      add('table', table, undefined, 'in the migrated database but not in schema.ts (DB)');
      continue;
    }
    const typeColumns = types[table];
    const dbColumns = database[table];
    for (const column of Object.keys(typeColumns).sort()) {
      if (!dbColumns[column]) add('column', table, column, 'in schema.ts but not in the database');
    }
    for (const column of Object.keys(dbColumns).sort()) {
      const t = typeColumns[column];
      const d = dbColumns[column];
      if (!t) {
        add('column', table, column, `in the database (${d.dataType}) but not in schema.ts`);
        continue;
      }
      if (t.nullable !== d.nullable) {
        add(
          'nullability',
          table,
          column,
          `schema.ts says ${t.nullable ? 'nullable (admits null)' : 'not null'}, the database says ${d.nullable ? 'nullable' : 'NOT NULL'}`,
        );
      }
      const sqlType = sqlTypes[d.dataType];
      if (!sqlType) {
        add(
          'kind',
          table,
          column,
          `SQL type ${d.dataType} has no entry in SQL_TYPES.${dialect} (test/helpers/schema-types.ts); schema.ts says ${list(t.kinds)}`,
        );
      } else if (sqlType.returns === 'any') {
        if (t.kinds.length === 0) add('kind', table, column, `schema.ts admits no value for ${d.dataType}`);
      } else {
        const extra = t.kinds.filter((k) => !sqlType.admits.includes(k));
        if (!t.kinds.includes(sqlType.returns) || extra.length > 0) {
          add(
            'kind',
            table,
            column,
            `schema.ts says ${list(t.kinds)}, the database says ${d.dataType}, which reads back as ${sqlType.returns} (schema.ts may say ${list(sqlType.admits)}, must include ${sqlType.returns})`,
          );
        }
      }
      if (t.insertOptional && !t.nullable && !d.generated) {
        add(
          'insert-default',
          table,
          column,
          `schema.ts lets an insert leave it out (Generated or optional), but the database has no default for this NOT NULL ${d.dataType} column`,
        );
      }
    }
  }
  return out;
}

/** The identity of a mismatch, for an allow-list. */
export const mismatchKey = (m: { dialect: DialectName; check: Check; table: string; column?: string }) =>
  `${m.dialect} ${m.check} ${m.table}${m.column === undefined ? '' : `.${m.column}`}`;
