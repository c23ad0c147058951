/**
 * The one registry of error codes the domain speaks. Services throw AppError with a code from here;
 * the HTTP layer (src/http/error-status.ts) decides how each code is answered on the wire.
 */
export const ErrorCodes = {
  bad_request: 'The request cannot be handled',
  invalid_json: 'The body is not valid JSON',
  invalid_form: 'The form body cannot be parsed',
  unauthorized: 'auth_token omitted or authentication failed',
  forbidden: 'The action cannot be performed with this token',
  allotment_exceeded: 'The allotment for this resource is used up',
  route_not_found: 'No such route',
  not_found: 'The requested resource could not be found',
  not_acceptable:
    'Invalid content-type. API currently only supports application/json, text/csv and application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  conflict: 'The request conflicts with the current state',
  idempotency_in_progress: 'A request with this Idempotency-Key is still being processed',
  payload_too_large: 'The request body is too large',
  range_not_satisfiable: 'The requested range is past the end of the file',
  unsupported_media_type: 'The body must be application/json or application/x-www-form-urlencoded',
  validation_failed: 'The body has wrong attributes',
  idempotency_key_reused: 'This Idempotency-Key was used with a different request',
  rate_limited: 'Too many requests',
  not_implemented: 'This format is not supported',
  not_yet_available: 'What was asked for is not available yet; ask again',
  database_busy: 'The database is busy; try again shortly',
  internal_error: 'Internal server error',
} as const satisfies Record<string, string>;

export type ErrorCode = keyof typeof ErrorCodes;

/**
 * SQLite's write lock held by another writer (SQLITE_BUSY and its variants): waited out by
 * src/db/sqlite-busy.ts, and answered 503 when it outlasts that wait, a moment's condition, not a
 * fault. Matched by shape, free of driver imports.
 */
export function isDatabaseBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // SQLITE_LOCKED is a conflict inside one connection, which waiting does not end: not this.
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];

  constructor(code: ErrorCode, message?: string, details: ErrorDetail[] = [], options?: { cause?: unknown }) {
    super(message ?? ErrorCodes[code], options);
    this.code = code;
    this.details = details;
  }
}

export const notFound = (what: string, id?: string | number) =>
  new AppError('not_found', id === undefined ? `404: No ${what} exists` : `404: No ${what} exists with that id`);

/** A 422 naming one field, the way schema validation names them. */
export const invalidField = (field: string, message: string) => new AppError('validation_failed', `${field} ${message}`, [{ field, message }]);
