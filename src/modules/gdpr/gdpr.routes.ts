import type { App, Deps } from '../../http/context.ts';
import { CreateGdprRequestBody, GdprReceipt, GdprReceiptParams, GdprRequestStatus } from './gdpr.schemas.ts';

const tags = ['gdpr'];

export default async function gdprRoutes(app: App, { services }: Deps) {
  const service = services.gdpr;

  app.post(
    '/v1/gdpr_requests',
    {
      config: { permission: 'users:manage', wrap: 'gdpr_request' },
      schema: {
        tags,
        summary: 'File a GDPR request (access, forget or rectify an email); 202 with a receipt, carried out by a job',
        body: CreateGdprRequestBody,
        response: { 202: GdprReceipt },
      },
    },
    async (req, reply) => reply.code(202).send(await service.create(req.auth.organizationId, req.auth.role, req.body)),
  );

  app.get(
    '/v1/gdpr_requests/:receipt_id',
    {
      config: { permission: 'users:manage' },
      schema: {
        tags,
        summary: 'Status of a GDPR request; result (the access export) once completed',
        params: GdprReceiptParams,
        response: { 200: GdprRequestStatus },
      },
    },
    async (req) => service.get(req.auth.organizationId, req.params.receipt_id),
  );
}
