import { Type, type Static } from 'typebox';
import { IdExample, Nullable, PagingQuery, Summary, Timestamps } from '../../lib/schemas.ts';

export const HUB_NAME_MAX = 255;
export const SLUG_MAX = 100;
export const DESCRIPTION_MAX = 5000;
/** Most players one category may hold. */
export const MAX_CATEGORY_PLAYERS = 1000;

/** A database id: 1..2^31-1 (larger would overflow PostgreSQL's integer). */
const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });

const Name = Type.String({
  minLength: 1,
  maxLength: HUB_NAME_MAX,
  pattern: '^[^\\u0000-\\u001F\\u007F]*$',
  description: '1..255 characters after trimming',
});

/** Lower-case letters, digits and single dashes (none leading or trailing). */
export const SLUG_PATTERN = '^[a-z0-9]+(-[a-z0-9]+)*$';
const Slug = Type.String({
  minLength: 1,
  maxLength: SLUG_MAX,
  pattern: SLUG_PATTERN,
  description: 'Lower-case letters, digits and single dashes, 1..100; made from the name when left out',
});

const Position = Type.Integer({ minimum: 0, maximum: 2147483647, description: '0-based; inserts (or moves) the category there, clamped' });

export const Hub = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  public: Type.Boolean(),
  url: Type.String({ description: 'The public page' }),
  category_count: Type.Integer(),
  ...Timestamps,
});
export type Hub = Static<typeof Hub>;

export const HubList = Type.Union([Type.Array(Hub), Type.Object({ hubs: Type.Array(Hub), summary: Summary })], {
  description: 'A bare array without per_page, {hubs, summary} with it',
});

export const HubListQuery = Type.Object({ ...PagingQuery });

export const CreateHubBody = Type.Object(
  {
    name: Name,
    slug: Type.Optional(Slug),
    description: Type.Optional(Nullable(Type.String({ maxLength: DESCRIPTION_MAX }))),
    public: Type.Optional(Type.Boolean({ description: 'Default true' })),
  },
  // Hub 1 on a fresh server.
  { examples: [{ name: 'Customer stories', description: 'How teams around the world work with Acme', public: true }] },
);
export type CreateHubBody = Static<typeof CreateHubBody>;

export const UpdateHubBody = Type.Partial(CreateHubBody, {
  examples: [{ name: 'Customer success stories', description: 'How teams around the world save time with Acme' }],
});
export type UpdateHubBody = Static<typeof UpdateHubBody>;

/** Hub 1 and its category 1 on a fresh server: what the create examples make. */
export const HubParams = Type.Object({ id: IdExample(1) });
export const CategoryParams = Type.Object({ id: IdExample(1), category_id: IdExample(1) });

export const Category = Type.Object({
  id: Type.Integer(),
  hub_id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  position: Type.Integer(),
  player_ids: Type.Array(Type.Integer(), { description: 'In display order' }),
  ...Timestamps,
});
export type Category = Static<typeof Category>;

export const CategoryList = Type.Union([Type.Array(Category), Type.Object({ categories: Type.Array(Category), summary: Summary })], {
  description: 'In position order: a bare array without per_page, {categories, summary} with it',
});

export const CategoryListQuery = Type.Object({ ...PagingQuery });

export const CreateCategoryBody = Type.Object(
  {
    name: Name,
    slug: Type.Optional(Slug),
    position: Type.Optional(Position),
    player_ids: Type.Optional(
      Type.Array(Id, { maxItems: MAX_CATEGORY_PLAYERS, description: "Players of the hub's organization, in display order (duplicates dropped)" }),
    ),
  },
  // Category 1 of hub 1 on a fresh server, showing player 1.
  { examples: [{ name: 'Getting started', player_ids: [1] }] },
);
export type CreateCategoryBody = Static<typeof CreateCategoryBody>;

export const UpdateCategoryBody = Type.Partial(CreateCategoryBody, { examples: [{ name: 'First steps', position: 0, player_ids: [1] }] });
export type UpdateCategoryBody = Static<typeof UpdateCategoryBody>;

export const Sitemap = Type.Object({ url: Type.String({ description: "The hub's public sitemap" }) });
