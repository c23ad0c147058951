import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ErrorCodes, type ErrorCode, type ErrorDetail } from './errors.ts';

interface AjvError {
  instancePath?: string;
  keyword: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(e: AjvError): string {
  const extra = (e.params?.missingProperty ?? e.params?.additionalProperty) as string | undefined;
  const path = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  return [path, extra].filter(Boolean).join('.') || '(body)';
}

function detailsOf(errors: AjvError[]): ErrorDetail[] {
  const seen = new Set<string>();
  const out: ErrorDetail[] = [];
  for (const e of errors) {
    // anyOf/union noise: keep the first, most specific message per field.
    const field = fieldOf(e);
    if (seen.has(field)) continue;
    seen.add(field);
    const message = e.keyword === 'required' ? 'is required' : (e.message ?? 'is invalid');
    out.push({ field, message });
  }
  return out;
}

export function sendError(reply: FastifyReply, code: ErrorCode, message?: string, details: ErrorDetail[] = []) {
  return reply
    .code(ErrorCodes[code].status)
    .type('application/json; charset=utf-8')
    .serializer(JSON.stringify)
    .send({ error: message ?? ErrorCodes[code].message, code, details });
}

const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
};

export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) return sendError(reply, error.code, error.message, error.details);
    const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
    if (fe.validation) {
      // A malformed path parameter (e.g. a non-numeric id) names no record that could exist.
      if (fe.validationContext === 'params') return sendError(reply, 'not_found');
      const details = detailsOf(fe.validation);
      const message = details.map((d) => `${d.field} ${d.message}`).join('; ');
      return sendError(reply, 'validation_failed', message, details);
    }
    const mapped = fe.code ? fastifyCodes[fe.code] : undefined;
    if (mapped) return sendError(reply, mapped, mapped === 'invalid_json' ? ErrorCodes.invalid_json.message : fe.message);
    if (error instanceof SyntaxError) return sendError(reply, 'invalid_json');
    const status = fe.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const code = (Object.entries(ErrorCodes).find(([, v]) => v.status === status)?.[0] ?? 'bad_request') as ErrorCode;
      return sendError(reply, code, fe.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'internal_error');
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 'route_not_found', `No route matches ${request.method} ${request.url.split('?')[0]}`),
  );
}
