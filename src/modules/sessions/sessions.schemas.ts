import { Type, type Static } from 'typebox';
import { Email, PersonName } from '../../lib/schemas.ts';
import { PASSWORD_MAX_LENGTH } from './passwords.ts';

// Checked for length and content by the service (passwordProblem), so that its answer names the rule.
const Password = Type.String({ maxLength: PASSWORD_MAX_LENGTH * 4, description: 'At least 10 characters' });
const LinkToken = Type.String({
  minLength: 20,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_-]{20,100}$',
  description: 'The token of the mailed link (after #token=)',
});

export const SignInBody = Type.Object(
  {
    email: Email,
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH * 4 }),
    organization_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Which account, when the address has one in several organizations' })),
  },
  { examples: [{ email: 'jane.doe@example.com', password: 'correct horse battery' }] },
);
export type SignInBody = Static<typeof SignInBody>;

export const Session = Type.Object({
  user: Type.Object({
    id: Type.Integer(),
    email: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    role_id: Type.Integer(),
    role: Type.String(),
  }),
  organization: Type.Object({ id: Type.Integer(), name: Type.String() }),
  csrf_token: Type.String({ description: 'Sent back as X-CSRF-Token on every state-changing request of the session' }),
  expires_at: Type.Integer({ description: 'Unix seconds' }),
});

export const LinkBody = Type.Object({ token: LinkToken }, { examples: [{ token: 'the-token-after-hash-token-in-the-mailed-link' }] });

export const Link = Type.Object({
  purpose: Type.Union([Type.Literal('invite'), Type.Literal('reset')]),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  organization: Type.Object({ id: Type.Integer(), name: Type.String() }),
  expires_at: Type.Integer(),
});

export const UseLinkBody = Type.Object(
  {
    token: LinkToken,
    password: Password,
    first_name: Type.Optional(PersonName),
    last_name: Type.Optional(PersonName),
  },
  { examples: [{ token: 'the-token-after-hash-token-in-the-mailed-link', password: 'correct horse battery', first_name: 'Jane' }] },
);

export const ResetBody = Type.Object({ email: Email }, { examples: [{ email: 'jane.doe@example.com' }] });
export const ResetAccepted = Type.Object({ status: Type.Literal('accepted') });
