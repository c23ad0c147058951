import { Type, type Static } from 'typebox';

export const CreateUploadBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'Name of the video the upload becomes' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()])),
    player: Type.Optional(
      Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) }, { description: "The video's facade player (default: named as the video)" }),
    ),
  },
  { examples: [{ name: 'Product tour', description: 'Recorded on a laptop, uploaded directly' }] },
);
export type CreateUploadBody = Static<typeof CreateUploadBody>;

export const Upload = Type.Object({
  id: Type.String(),
  url: Type.String({ description: 'tus 1.0 endpoint: POST to create the upload there, then PATCH its bytes. No API token needed; single-use; expires.' }),
  video_id: Type.Integer(),
  player_uuid: Type.String(),
  expires_at: Type.Integer({ description: 'Unix seconds after which an unfinished upload is refused and its bytes removed' }),
});
export type Upload = Static<typeof Upload>;
