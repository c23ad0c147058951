import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresAdapter,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type DialectAdapter,
  type Kysely,
  type TableMetadata,
} from 'kysely';

/**
 * Kysely's PostgreSQL migrator locks one advisory key for the whole server, so every schema's
 * migrations wait for every other's: deployments (or test files) sharing a server queue behind each
 * other. The lock here is keyed by the current schema, which is all the migrations touch.
 */
class SchemaLockedAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_lock(hashtextextended('reelbase migrations ' || current_schema(), 0))`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_unlock(hashtextextended('reelbase migrations ' || current_schema(), 0))`.execute(db);
  }
}

/**
 * The tables of the current schema only. Kysely's introspector (which its migrator asks whether its
 * own table exists) reads the tables of every schema of the database, and fails ("schema … does not
 * exist") when another deployment or test run drops one of its schemas meanwhile; on a database of many
 * schemas it also reads them all at every start.
 */
class SchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas() {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.db);
    return rows;
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const internal = [DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE];
    const { rows } = await sql<{
      table: string;
      schema: string;
      kind: string;
      column: string;
      type: string;
      type_schema: string;
      not_null: boolean;
      has_default: boolean;
      serial: string | null;
      comment: string | null;
    }>`
      select c.relname as "table", ns.nspname as "schema", c.relkind as "kind", a.attname as "column",
        typ.typname as "type", tns.nspname as "type_schema", a.attnotnull as "not_null", a.atthasdef as "has_default",
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as "serial",
        col_description(a.attrelid, a.attnum) as "comment"
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum >= 0 and not a.attisdropped
      join pg_catalog.pg_type typ on typ.oid = a.atttypid
      join pg_catalog.pg_namespace tns on tns.oid = typ.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
      order by c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const r of rows) {
      if (!options.withInternalKyselyTables && internal.includes(r.table)) continue;
      let table = tables.get(r.table);
      if (!table) tables.set(r.table, (table = { name: r.table, schema: r.schema, isView: r.kind === 'v', columns: [] }));
      table.columns.push({
        name: r.column,
        dataType: r.type,
        dataTypeSchema: r.type_schema,
        isNullable: !r.not_null,
        hasDefaultValue: r.has_default,
        isAutoIncrementing: r.serial !== null,
        comment: r.comment ?? undefined,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

export class SchemaPostgresDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new SchemaLockedAdapter();
  }

  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SchemaIntrospector(db);
  }
}
