import { Type, type Static } from 'typebox';
import { Nullable } from '../../lib/schemas.ts';

export const RECIPIENTS_MAX = 50;
export const SUBJECT_MAX = 200;
export const BODY_MAX = 20_000;

const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });

export const SendStakeholderEmailBody = Type.Object(
  {
    recipients: Type.Array(Email, { minItems: 1, maxItems: RECIPIENTS_MAX, description: '1..50 addresses (duplicates, ignoring case, are sent once)' }),
    // One header line: no control characters.
    subject: Type.String({ minLength: 1, maxLength: SUBJECT_MAX, pattern: '^[^\\u0000-\\u001F\\u007F]*$' }),
    // Plain text: no control characters except tab and line breaks.
    body: Type.String({ minLength: 1, maxLength: BODY_MAX, pattern: '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$' }),
    player_id: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 2147483647, description: 'A player of the organization: its watch link is added to the mail' }),
    ),
    player_uuid: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The same, by UUID' })),
  },
  {
    examples: [
      {
        recipients: ['jane.doe@example.com'],
        subject: 'New video: Product tour',
        body: 'Hi Jane,\n\nThe product tour is ready for your review.\n\nThanks!',
        player_id: 1,
      },
    ],
  },
);
export type SendStakeholderEmailBody = Static<typeof SendStakeholderEmailBody>;

export const StakeholderEmail = Type.Object({
  id: Type.Integer(),
  recipients: Type.Array(Type.String()),
  subject: Type.String(),
  player_id: Nullable(Type.Integer()),
  sent_at: Type.Integer({
    description:
      'Unix seconds at which the message was taken: by the mail server (or the outbox), or, when the mail server could not take it at once, by Reelbase to send it again',
  }),
});
export type StakeholderEmail = Static<typeof StakeholderEmail>;

export const ThrottleStatus = Type.Object({
  limit: Type.Integer({ description: 'Stakeholder emails per window (STAKEHOLDER_EMAILS_PER_HOUR)' }),
  remaining: Type.Integer({ description: 'How many more may be sent now' }),
  window_seconds: Type.Integer({ description: 'Length of the sliding window: 3600' }),
  resets_at: Type.Integer({
    description: 'Unix seconds at which remaining next grows (the oldest counted email leaves the window); now when nothing is counted',
  }),
});
export type ThrottleStatus = Static<typeof ThrottleStatus>;
