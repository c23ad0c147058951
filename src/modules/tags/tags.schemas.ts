import { Type, type Static } from 'typebox';
import { IdExample, PagingQuery, Summary } from '../../lib/schemas.ts';

export const TAG_NAME_MAX = 255;
/** Most ids one request may name (video_ids, player_ids, ids, names). */
export const MAX_IDS = 1000;
/** Most tags one player or video may be given in one PATCH. */
export const MAX_TAGS_PER_RECORD = 200;

/** A database id: 1..2^31-1 (larger would overflow PostgreSQL's integer). */
const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });

/** A tag name as sent: 1..255 characters without control characters; trimmed before use. */
export const TagName = Type.String({
  minLength: 1,
  maxLength: TAG_NAME_MAX,
  pattern: '^[^\\u0000-\\u001F\\u007F]*$',
  description: 'Tag name, 1..255 characters after trimming, case-sensitive',
});

export const Tag = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  video_ids: Type.Array(Type.Integer(), { description: 'Videos carrying the tag, ascending' }),
  player_ids: Type.Array(Type.Integer(), { description: 'Players carrying the tag, ascending' }),
  created_at: Type.Integer({ description: 'Unix seconds' }),
});
export type Tag = Static<typeof Tag>;

/** Tag 1, player 1 and video 1 on a fresh server: what the create examples make. */
export const TagParams = Type.Object({ id: IdExample(1) });
export const PlayerParams = Type.Object({ player_id: IdExample(1) });
export const VideoParams = Type.Object({ video_id: IdExample(1) });

export const CreateTagBody = Type.Object(
  {
    name: TagName,
    video_ids: Type.Optional(Type.Array(Id, { maxItems: MAX_IDS, description: 'Videos to tag' })),
    player_ids: Type.Optional(Type.Array(Id, { maxItems: MAX_IDS, description: 'Players to tag' })),
  },
  // Tag 1 on a fresh server.
  { examples: [{ name: 'onboarding', video_ids: [1], player_ids: [1] }] },
);
export type CreateTagBody = Static<typeof CreateTagBody>;

export const TagListQuery = Type.Object({
  ...PagingQuery,
  query: Type.Optional(Type.String({ maxLength: TAG_NAME_MAX, pattern: '^[^\\u0000]*$', description: 'Names containing this text (case-insensitive)' })),
});
export type TagListQuery = Static<typeof TagListQuery>;

export const TagList = Type.Union([Type.Array(Tag), Type.Object({ tags: Type.Array(Tag), summary: Summary })], {
  description: 'A bare array without per_page, {tags, summary} with it',
});

export const TagNamesQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: TAG_NAME_MAX, pattern: '^[^\\u0000]*$', description: 'Names starting with this text (case-insensitive)' })),
});

export const TagNames = Type.Array(Type.String(), { description: 'Distinct tag names, sorted case-insensitively' });

/** DELETE /v1/tags: in the query string or the body (both are merged). */
const DeleteSelectors = {
  name: Type.Optional(TagName),
  names: Type.Optional(Type.Array(TagName, { maxItems: MAX_IDS })),
  id: Type.Optional(Id),
  ids: Type.Optional(Type.Array(Id, { maxItems: MAX_IDS })),
};
export const DeleteTagsQuery = Type.Object(DeleteSelectors);
export const DeleteTagsBody = Type.Object(DeleteSelectors, { examples: [{ name: 'onboarding' }] });
export type DeleteTagsInput = Static<typeof DeleteTagsBody>;

export const SetTagsBody = Type.Object(
  {
    tags: Type.Union(
      [
        Type.Array(TagName, { maxItems: MAX_TAGS_PER_RECORD }),
        Type.String({ maxLength: 10_000, pattern: '^[^\\u0000-\\u001F\\u007F]*$', description: 'Comma-separated names' }),
      ],
      { description: 'The complete set of tag names (replaces the current ones; missing tags are created)' },
    ),
  },
  { examples: [{ tags: ['onboarding', 'product'] }] },
);
export type SetTagsBody = Static<typeof SetTagsBody>;

export const TagArray = Type.Array(Tag);
