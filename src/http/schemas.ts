import { Type, type TSchema } from 'typebox';

/** Shared schema pieces used by several areas. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) });
export const UuidParams = Type.Object({ uuid: Type.String({ minLength: 1, maxLength: 64 }) });

export const HttpUrl = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://[^\\s]+$' });

export const Timestamps = {
  created_at: Type.Integer({ description: 'Unix seconds' }),
  updated_at: Type.Integer({ description: 'Unix seconds' }),
};

export const ErrorBody = Type.Object({
  error: Type.String(),
  code: Type.String(),
  details: Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
});
