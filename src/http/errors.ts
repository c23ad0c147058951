/**
 * The one registry of error codes. Services throw AppError with a code from here; the error handler
 * renders every failure as {"error", "code", "details"} with the registered status.
 */
export const ErrorCodes = {
  bad_request: { status: 400, message: 'The request cannot be handled' },
  invalid_json: { status: 400, message: 'The body is not valid JSON' },
  unauthorized: { status: 401, message: 'auth_token omitted or authentication failed' },
  forbidden: { status: 403, message: 'The action cannot be performed with this token' },
  allotment_exceeded: { status: 403, message: 'The allotment for this resource is used up' },
  route_not_found: { status: 404, message: 'No such route' },
  not_found: { status: 404, message: 'The requested resource could not be found' },
  not_acceptable: {
    status: 406,
    message:
      'Invalid content-type. API currently only supports application/json, text/csv and application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  },
  conflict: { status: 409, message: 'The request conflicts with the current state' },
  idempotency_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still being processed' },
  payload_too_large: { status: 413, message: 'The request body is too large' },
  range_not_satisfiable: { status: 416, message: 'The requested range is past the end of the file' },
  unsupported_media_type: { status: 415, message: 'The body must be application/json' },
  validation_failed: { status: 422, message: 'The body has wrong attributes' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used with a different request' },
  rate_limited: { status: 429, message: 'Too many requests' },
  not_implemented: { status: 501, message: 'This format is not supported' },
  internal_error: { status: 500, message: 'Internal server error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ErrorCodes;

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[];

  constructor(code: ErrorCode, message?: string, details: ErrorDetail[] = []) {
    super(message ?? ErrorCodes[code].message);
    this.code = code;
    this.status = ErrorCodes[code].status;
    this.details = details;
  }
}

export const notFound = (what: string, id?: string | number) =>
  new AppError('not_found', id === undefined ? `404: No ${what} exists` : `404: No ${what} exists with that id`);

/** A 422 naming one field, the way schema validation names them. */
export const invalidField = (field: string, message: string) =>
  new AppError('validation_failed', `${field} ${message}`, [{ field, message }]);
