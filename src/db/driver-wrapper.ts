import type { DatabaseConnection, Dialect, Driver, TransactionSettings } from 'kysely';

type Compile = Parameters<NonNullable<Driver['savepoint']>>[2];

/** A connection that adds something to `inner`'s statements. */
export interface ConnectionWrapper extends DatabaseConnection {
  readonly inner: DatabaseConnection;
}

/**
 * A driver whose connections are `inner`'s, each wrapped once by `wrap`; everything else is
 * `inner`'s, handed its own connection back: PostgreSQL's releases a connection through a method of
 * that object, and SQLite's runs BEGIN, COMMIT and savepoints through the connection it is handed,
 * which must not pass through the wrappers again (a BEGIN would wait twice). A subclass overrides a
 * method to add to it (`WaitingDriver` in src/db/sqlite-busy.ts: `beginTransaction`).
 */
export class WrappingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, ConnectionWrapper>();
  private readonly ours = new WeakSet<DatabaseConnection>();

  constructor(
    protected readonly inner: Driver,
    private readonly wrap: (connection: DatabaseConnection) => ConnectionWrapper,
  ) {}

  protected innerOf(connection: DatabaseConnection): DatabaseConnection {
    return this.ours.has(connection) ? (connection as ConnectionWrapper).inner : connection;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrapped.get(connection);
    if (!wrapper) {
      wrapper = this.wrap(connection);
      this.wrapped.set(connection, wrapper);
      this.ours.add(wrapper);
    }
    return wrapper;
  }

  beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(this.innerOf(c), settings);
  }

  commitTransaction(c: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(this.innerOf(c));
  }

  rollbackTransaction(c: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(this.innerOf(c));
  }

  releaseConnection(c: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(this.innerOf(c));
  }

  async savepoint(c: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    if (!this.inner.savepoint) throw new Error('The `savepoint` method is not supported by this driver');
    await this.inner.savepoint(this.innerOf(c), name, compile);
  }

  async rollbackToSavepoint(c: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    if (!this.inner.rollbackToSavepoint) throw new Error('The `rollbackToSavepoint` method is not supported by this driver');
    await this.inner.rollbackToSavepoint(this.innerOf(c), name, compile);
  }

  async releaseSavepoint(c: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    if (!this.inner.releaseSavepoint) throw new Error('The `releaseSavepoint` method is not supported by this driver');
    await this.inner.releaseSavepoint(this.innerOf(c), name, compile);
  }
}

/** `dialect` with its driver replaced by `driver(dialect's own)`. */
export function withDriver(dialect: Dialect, driver: (inner: Driver) => Driver): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => driver(dialect.createDriver()),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}
