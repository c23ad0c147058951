import type { ErrorCode } from '../lib/errors.ts';

/** How each domain error code is answered on the wire (DESIGN §2's status table). */
export const ErrorStatus = {
  bad_request: 400,
  invalid_json: 400,
  invalid_form: 400,
  unauthorized: 401,
  forbidden: 403,
  allotment_exceeded: 403,
  route_not_found: 404,
  not_found: 404,
  not_acceptable: 406,
  conflict: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  unsupported_media_type: 415,
  validation_failed: 422,
  idempotency_key_reused: 422,
  rate_limited: 429,
  not_implemented: 501,
  not_yet_available: 503,
  database_busy: 503,
  internal_error: 500,
} as const satisfies Record<ErrorCode, number>;
