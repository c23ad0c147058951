import type { App, Deps } from '../../http/context.ts';
import { SendStakeholderEmailBody, StakeholderEmail, ThrottleStatus } from './stakeholder-emails.schemas.ts';
import { RateLimitedError } from './stakeholder-emails.service.ts';

const tags = ['stakeholder emails'];

export default async function stakeholderEmailsRoutes(app: App, { services }: Deps) {
  const service = services.stakeholderEmails;

  // Editors and up (content:write, the default for a POST).
  app.post(
    '/v1/email_stakeholders',
    {
      config: { wrap: 'email_stakeholder' },
      schema: {
        tags,
        summary:
          "Email stakeholders (1..50 recipients), optionally with a player's watch link; 202 once the email is recorded with the job that sends it (sent at once when the mail server takes it), 429 past the hourly limit",
        body: SendStakeholderEmailBody,
        response: { 202: StakeholderEmail },
      },
    },
    async (req, reply) => {
      try {
        return reply.code(202).send(await service.send(req.auth.organizationId, req.auth.userId, req.body));
      } catch (e) {
        if (e instanceof RateLimitedError) reply.header('retry-after', String(e.retryAfterSeconds));
        throw e;
      }
    },
  );

  app.get(
    '/v1/email_stakeholders/throttle_status',
    {
      schema: { tags, summary: "The organization's stakeholder email allowance (sliding hour)", response: { 200: ThrottleStatus } },
    },
    async (req) => service.throttleStatus(req.auth.organizationId),
  );
}
