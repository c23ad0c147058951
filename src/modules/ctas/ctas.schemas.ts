import { Type, type Static } from 'typebox';
import { IdExample, Nullable } from '../../lib/schemas.ts';
import { PagingQuery, Summary } from '../../lib/schemas.ts';
import { ChapterIdSchema, DurationSchema, SecondSchema, WidthSchema } from '../events/events.schemas.ts';

export { UuidParams } from '../events/events.schemas.ts';

/** CTA 1 on a fresh server: the one the create example makes (CTAs and events share their ids). */
export const CtaParams = Type.Object({ id: IdExample(1) });
/** Chapter 1 and player 1 on a fresh server, where the CTA examples are placed. */
export const ChapterParams = Type.Object({ id: IdExample(1) });
export const PlayerParams = Type.Object({ id: IdExample(1) });

/** POST /v1/ctas (flat or wrapped in `cta`). */
export const CtaCreateBody = Type.Object(
  {
    chapter_id: Type.Optional(Nullable(ChapterIdSchema)),
    second: SecondSchema,
    duration: Type.Optional(Nullable(Type.Unsafe<number>({ ...DurationSchema, description: 'Required when auto_close is true' }))),
    auto_close: Type.Optional(Type.Boolean({ default: true, description: 'Default true' })),
    width: WidthSchema,
    html: Type.String({ description: 'May include JavaScript and forms' }),
  },
  {
    // CTA 1 on a fresh server.
    examples: [{ chapter_id: 1, second: 10, duration: 5, auto_close: true, width: 300, html: '<a href="https://www.example.com/pricing">See our plans</a>' }],
  },
);
export type CtaCreateBody = Static<typeof CtaCreateBody>;

/** PATCH /v1/ctas/:id: the same attributes and rules as creation, all optional, checked on the merged record. */
export const CtaUpdateBody = Type.Object(
  {
    second: Type.Optional(SecondSchema),
    duration: Type.Optional(Nullable(DurationSchema)),
    auto_close: Type.Optional(Type.Boolean()),
    width: Type.Optional(WidthSchema),
    html: Type.Optional(Type.String()),
  },
  { examples: [{ second: 20, duration: 8, width: 320 }] },
);
export type CtaUpdateBody = Static<typeof CtaUpdateBody>;

/** POST /v1/ctas/default_email_gate. */
export const EmailGateCreateBody = Type.Object(
  {
    chapter_id: ChapterIdSchema,
    is_closeable: Type.Boolean({ description: 'The viewer may skip the gate' }),
    is_new_contact: Type.Boolean({ description: 'Show the gate only to viewers not yet known as contacts' }),
  },
  { examples: [{ chapter_id: 1, is_closeable: true, is_new_contact: true }] },
);
export type EmailGateCreateBody = Static<typeof EmailGateCreateBody>;

export const CtaListQuery = Type.Object({ ...PagingQuery });
export const PlayerCtaListQuery = Type.Object({
  include_defaults: Type.Optional(Type.Boolean({ description: 'Also return the organization default CTAs' })),
  ...PagingQuery,
});
export type PlayerCtaListQuery = Static<typeof PlayerCtaListQuery>;

const NullableInt = Nullable(Type.Integer());

export const Cta = Type.Object({
  id: Type.Integer(),
  chapter_id: Nullable(Type.Integer({ description: 'null for an organization default CTA' })),
  second: Type.Integer({ description: '-1 means postroll' }),
  duration: Nullable(Type.Integer({ description: 'null when never set (auto_close false)' })),
  auto_close: Type.Boolean(),
  width: NullableInt,
  html: Type.String(),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});
export type Cta = Static<typeof Cta>;

/** The default email gate answer: a CTA without `width`. */
export const EmailGate = Type.Object({
  id: Type.Integer(),
  chapter_id: Type.Integer(),
  second: Type.Integer(),
  duration: NullableInt,
  auto_close: Type.Boolean(),
  html: Type.String(),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});
export type EmailGate = Static<typeof EmailGate>;

export const CtaList = Type.Object({ ctas: Type.Array(Cta), summary: Summary });

export const CtaMeta = Type.Object({
  max_cta_width: Type.Integer(),
  num_public_ctas: Type.Integer(),
  num_draft_ctas: Type.Integer(),
});
