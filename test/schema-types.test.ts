/**
 * The Kysely table types (src/db/schema.ts, read with the TypeScript type checker) match a freshly
 * migrated database on every dialect: the same tables, the same columns, the same nullability, a
 * select type that admits what the driver reads back for the column's SQL type (and claims nothing
 * else), and a default in the database for every non-null column an insert may leave out.
 * The comparison itself lives in test/helpers/schema-types.ts; the unit cases below feed it wrong
 * descriptions to prove that it fails, naming the table and column.
 */
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../src/db/database.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import {
  compareSchema,
  describeDatabase,
  mismatchKey,
  parseSchemaTypes,
  SCHEMA_FILE,
  SQL_TYPES,
  type Check,
  type DbDescription,
  type Mismatch,
  type SchemaDescription,
} from './helpers/schema-types.ts';

/**
 * Disagreements between schema.ts and the migrations that are known and tolerated until fixed (in
 * src/, not here). Empty it entry by entry as they are fixed: an entry that no longer occurs fails the
 * last test below, so the list cannot go stale.
 */
const KNOWN_MISMATCHES: ReadonlyArray<{ dialect: DialectName; check: Check; table: string; column?: string; note: string }> = [];

const known = new Set(KNOWN_MISMATCHES.map(mismatchKey));

let parsed: SchemaDescription | undefined;
/** schema.ts, read once per file (a TypeScript program takes a second or two). */
const schemaTypes = () => (parsed ??= parseSchemaTypes());

// ---- the comparison can fail ------------------------------------------------------------------

describe('reading schema types', () => {
  it('resolves aliases, Generated<T> and ColumnType<S, I, U> (by the select type) with the type checker', () => {
    const fixture = `
      import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
      type Flag = boolean | number;
      type Maybe<T> = T | null;
      type Seconds = number;
      type Stamp = ColumnType<Seconds, Seconds | undefined, never>;
      interface ThingsTable {
        id: Generated<number>;
        flag: Generated<Flag>;
        note: Maybe<string>;
        stamp: Stamp;
        created: ColumnType<Date, string, never>;
        count: ColumnType<Maybe<number>, number, number>;
        always: GeneratedAlways<number>;
        optional?: string;
        big: bigint | Seconds;
        kind: 'a' | 'b';
      }
      interface PairsTable { left: number; right: Seconds }
      type Pairs = PairsTable;
      export interface DB { things: ThingsTable; pairs: Pairs }
    `;
    // Named next to schema.ts (it is never written), so that 'kysely' resolves as it does for schema.ts.
    const types = parseSchemaTypes(path.join(path.dirname(SCHEMA_FILE), '__schema_fixture__.ts'), fixture);
    expect(types).toEqual({
      things: {
        id: { nullable: false, kinds: ['number'], insertOptional: true },
        flag: { nullable: false, kinds: ['boolean', 'number'], insertOptional: true },
        note: { nullable: true, kinds: ['string'], insertOptional: false },
        stamp: { nullable: false, kinds: ['number'], insertOptional: true },
        created: { nullable: false, kinds: ['Date'], insertOptional: false },
        count: { nullable: true, kinds: ['number'], insertOptional: false },
        always: { nullable: false, kinds: ['number'], insertOptional: true },
        optional: { nullable: false, kinds: ['string'], insertOptional: true },
        big: { nullable: false, kinds: ['bigint', 'number'], insertOptional: false },
        kind: { nullable: false, kinds: ['string'], insertOptional: false },
      },
      pairs: {
        left: { nullable: false, kinds: ['number'], insertOptional: false },
        right: { nullable: false, kinds: ['number'], insertOptional: false },
      },
    });
  });

  it('reads every table of DB in schema.ts', () => {
    const types = schemaTypes();
    expect(Object.keys(types).length).toBeGreaterThan(20);
    expect(types.players.autoplay).toEqual({ nullable: false, kinds: ['boolean', 'number'], insertOptional: true });
    expect(types.players.expiry_date).toEqual({ nullable: true, kinds: ['number'], insertOptional: false });
  });
});

describe('comparing schema types with a database', () => {
  const col = (nullable: boolean, kinds: string[], insertOptional = false) => ({ nullable, kinds, insertOptional });
  const types = (): SchemaDescription => ({
    things: {
      id: col(false, ['number'], true),
      name: col(false, ['string']),
      flag: col(false, ['boolean', 'number'], true),
      note: col(true, ['string']),
      at: col(false, ['number']),
    },
    pairs: { left: col(false, ['number']), right: col(false, ['number']) },
  });
  const sqlite = (): DbDescription => ({
    things: {
      id: { dataType: 'integer', nullable: false, generated: true },
      name: { dataType: 'text', nullable: false, generated: false },
      flag: { dataType: 'boolean', nullable: false, generated: true },
      note: { dataType: 'text', nullable: true, generated: false },
      at: { dataType: 'bigint', nullable: false, generated: false },
    },
    pairs: { left: { dataType: 'integer', nullable: false, generated: false }, right: { dataType: 'integer', nullable: false, generated: false } },
  });
  const postgres = (): DbDescription => {
    const d = sqlite();
    const pgTypes: Record<string, string> = { integer: 'int4', text: 'text', boolean: 'bool', bigint: 'int8' };
    for (const table of Object.values(d)) for (const c of Object.values(table)) c.dataType = pgTypes[c.dataType];
    return d;
  };
  const messages = (ms: Mismatch[]) => ms.map((m) => [m.check, m.message]);

  it('finds nothing when they agree, on both dialects', () => {
    expect(compareSchema(types(), sqlite(), 'sqlite')).toEqual([]);
    expect(compareSchema(types(), postgres(), 'postgres')).toEqual([]);
  });

  it('names a table on one side only', () => {
    const t = types();
    delete t.pairs;
    t.ghosts = { id: col(false, ['number'], true) };
    expect(messages(compareSchema(t, sqlite(), 'sqlite'))).toEqual([
      ['table', 'sqlite: ghosts: in schema.ts (DB) but not in the migrated database'],
      ['table', 'sqlite: pairs: in the migrated database but not in schema.ts (DB)'],
    ]);
  });

  it('names a column on one side only', () => {
    const t = types();
    delete t.things.note;
    t.pairs.middle = col(false, ['number']);
    expect(messages(compareSchema(t, sqlite(), 'sqlite'))).toEqual([
      ['column', 'sqlite: pairs.middle: in schema.ts but not in the database'],
      ['column', 'sqlite: things.note: in the database (text) but not in schema.ts'],
    ]);
  });

  it('names a column whose nullability disagrees, either way', () => {
    const t = types();
    t.things.note.nullable = false;
    t.pairs.left.nullable = true;
    expect(messages(compareSchema(t, postgres(), 'postgres'))).toEqual([
      ['nullability', 'postgres: pairs.left: schema.ts says nullable (admits null), the database says NOT NULL'],
      ['nullability', 'postgres: things.note: schema.ts says not null, the database says nullable'],
    ]);
  });

  it('names a column whose type does not admit what the driver returns, or claims too much', () => {
    const t = types();
    t.things.flag.kinds = ['boolean']; // SQLite reads 0/1
    t.things.name.kinds = ['number', 'string'];
    t.things.at.kinds = ['string']; // int8 is parsed to a number (src/db/database.ts)
    const onSqlite = compareSchema(t, sqlite(), 'sqlite').map((m) => `${m.check} ${m.table}.${m.column}`);
    expect(onSqlite).toEqual(['kind things.at', 'kind things.flag', 'kind things.name']);
    const onPostgres = compareSchema(t, postgres(), 'postgres');
    expect(onPostgres.map((m) => `${m.check} ${m.table}.${m.column}`)).toEqual(['kind things.at', 'kind things.name']);
    expect(onPostgres[0].message).toBe(
      'postgres: things.at: schema.ts says string, the database says int8, which reads back as number (schema.ts may say number, must include number)',
    );
    // A boolean column typed plain number passes on SQLite but not on PostgreSQL.
    const numberFlag = types();
    numberFlag.things.flag.kinds = ['number'];
    expect(compareSchema(numberFlag, sqlite(), 'sqlite')).toEqual([]);
    expect(messages(compareSchema(numberFlag, postgres(), 'postgres'))).toEqual([
      [
        'kind',
        'postgres: things.flag: schema.ts says number, the database says bool, which reads back as boolean (schema.ts may say boolean | number, must include boolean)',
      ],
    ]);
  });

  it('names a column of an SQL type the mapping does not know', () => {
    const d = postgres();
    d.things.at.dataType = 'timestamptz';
    expect(messages(compareSchema(types(), d, 'postgres'))).toEqual([
      ['kind', 'postgres: things.at: SQL type timestamptz has no entry in SQL_TYPES.postgres (test/helpers/schema-types.ts); schema.ts says number'],
    ]);
  });

  it('names an insert-optional NOT NULL column without a default', () => {
    const d = sqlite();
    d.things.flag.generated = false;
    expect(messages(compareSchema(types(), d, 'sqlite'))).toEqual([
      [
        'insert-default',
        'sqlite: things.flag: schema.ts lets an insert leave it out (Generated or optional), but the database has no default for this NOT NULL boolean column',
      ],
    ]);
  });
});

// ---- schema.ts against the migrations ----------------------------------------------------------

describe.each(dialects)('schema.ts against a migrated %s database', (dialect) => {
  let t: TestApp;
  let database: DbDescription;
  let mismatches: Mismatch[];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    database = await describeDatabase(t.database);
    mismatches = compareSchema(schemaTypes(), database, dialect);
  });
  afterAll(() => t?.close());

  /** The mismatches of one check that are not in KNOWN_MISMATCHES, one line each. */
  const unexpected = (check: Check) => mismatches.filter((m) => m.check === check && !known.has(mismatchKey(m))).map((m) => m.message);

  it('reads each SQL type back as SQL_TYPES says', async () => {
    const wrong: string[] = [];
    for (const [type, { returns }] of Object.entries(SQL_TYPES[dialect])) {
      if (returns === 'any') continue;
      const { rows } = await sql<{ v: unknown }>`select cast('1' as ${sql.raw(type)}) as v`.execute(t.database.db);
      const got = rows[0].v instanceof Date ? 'Date' : typeof rows[0].v;
      if (got !== returns) wrong.push(`${type}: SQL_TYPES says ${returns}, the driver returns ${got}`);
    }
    expect(wrong).toEqual([]);
  });

  it('has exactly the tables of DB (Kysely’s migration tables aside)', () => {
    expect(unexpected('table')).toEqual([]);
  });

  it('has exactly the columns of each table', () => {
    expect(unexpected('column')).toEqual([]);
  });

  it('agrees on which columns admit null', () => {
    expect(unexpected('nullability')).toEqual([]);
  });

  it('gives every column a select type that admits what its SQL type reads back as, and nothing it cannot', () => {
    expect(unexpected('kind')).toEqual([]);
  });

  it('has a default for every NOT NULL column schema.ts lets an insert leave out', () => {
    expect(unexpected('insert-default')).toEqual([]);
  });

  it('fails on a schema description made wrong on purpose', () => {
    const wrong = structuredClone(schemaTypes());
    wrong.players.expiry_date.nullable = false;
    wrong.videos.name.kinds = ['number'];
    delete wrong.tags;
    const found = compareSchema(wrong, database, dialect).filter((m) => !known.has(mismatchKey(m)));
    expect(found.map(mismatchKey)).toEqual([`${dialect} nullability players.expiry_date`, `${dialect} table tags`, `${dialect} kind videos.name`]);
  });

  it('KNOWN_MISMATCHES lists only mismatches that still occur', () => {
    const found = new Set(mismatches.map(mismatchKey));
    expect(KNOWN_MISMATCHES.filter((k) => k.dialect === dialect && !found.has(mismatchKey(k))).map(mismatchKey)).toEqual([]);
  });
});
