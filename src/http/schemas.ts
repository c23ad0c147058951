import { Type } from 'typebox';

/** The body of every error answer (src/http/error-handler.ts). */
export const ErrorBody = Type.Object({
  error: Type.String(),
  code: Type.String(),
  details: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
});
