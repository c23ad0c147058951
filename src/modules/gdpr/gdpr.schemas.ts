import { Type, type Static } from 'typebox';
import { HttpUrl, Nullable } from '../../lib/schemas.ts';

export const GDPR_ACTIONS = ['access', 'forget', 'rectify'] as const;
export type GdprAction = (typeof GDPR_ACTIONS)[number];
export const GDPR_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;

const PersonName = Type.String({ maxLength: 255, pattern: '^[^\\u0000-\\u001F\\u007F]*$' });

export const GdprNewValues = Type.Object(
  {
    email: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 254,
        format: 'email',
        description: "New address (stored lower-case; must stay unique among the organization's users)",
      }),
    ),
    first_name: Type.Optional(PersonName),
    last_name: Type.Optional(PersonName),
    company: Type.Optional(
      Type.String({ maxLength: 255, pattern: '^[^\\u0000-\\u001F\\u007F]*$', description: 'Accepted; no Reelbase record stores a company (docs/gdpr.md)' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type GdprNewValues = Static<typeof GdprNewValues>;

export const CreateGdprRequestBody = Type.Object(
  {
    request_action: Type.Union(
      GDPR_ACTIONS.map((a) => Type.Literal(a)),
      { description: 'access, forget or rectify' },
    ),
    email: Type.String({ minLength: 3, maxLength: 254, format: 'email', description: "The data subject's address (case-insensitive)" }),
    webhook: Type.Optional(Nullable(HttpUrl)),
    new_values: Type.Optional(GdprNewValues),
  },
  { examples: [{ request_action: 'access', email: 'jane.doe@example.com' }] },
);
export type CreateGdprRequestBody = Static<typeof CreateGdprRequestBody>;

export const GdprReceipt = Type.Object({ receipt_id: Type.String({ description: 'UUID naming the request' }) });

/** Receipts are random UUIDs: the example shows the form (test/openapi-examples.test.ts lists the operation). */
export const GdprReceiptParams = Type.Object({ receipt_id: Type.String({ minLength: 1, maxLength: 64, examples: ['0b7e6f2a-9c41-4d8e-a5f3-2c6d8e9f1a7b'] }) });

export const GdprRequestStatus = Type.Object({
  receipt_id: Type.String(),
  request_action: Type.String(),
  email: Type.String(),
  status: Type.String({ description: 'pending, processing, completed or failed' }),
  created_at: Type.Integer({ description: 'Unix seconds' }),
  updated_at: Type.Integer({ description: 'Unix seconds' }),
  completed_at: Type.Optional(Type.Integer({ description: 'Unix seconds; once completed or failed' })),
  error: Type.Optional(Type.String({ description: 'Why the request failed' })),
  result: Type.Optional(Type.Any({ description: 'What the request did; for access, the export of every record found' })),
});
export type GdprRequestStatus = Static<typeof GdprRequestStatus>;
