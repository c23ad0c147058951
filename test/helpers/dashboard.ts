import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { readOutbox } from '../../src/mail/outbox.ts';
import { createUser, type OrgContext } from './factories.ts';

/** The invitation link mailed to `email` (the outbox of `dataDir`), once the job has sent it. */
export async function invitationOf(dataDir: string, email: string): Promise<string> {
  for (const end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const mail = (await readOutbox(dataDir)).find((m) => m.to.includes(email));
    if (mail) return /https?:\/\/\S+/.exec(mail.text)![0];
  }
  throw new Error(`no invitation was mailed to ${email}`);
}

/**
 * A person invited through the API who chose `password` by the mailed link, signed in through the
 * sign-in page of a new browser context: the library is showing.
 */
export async function signedInPage(
  on: { browser: Browser; base: string; dataDir: string; org: OrgContext },
  email: string,
  roleId: number,
  password: string,
  viewport = { width: 1280, height: 900 },
) {
  await createUser(on.org.api, { email, role_id: roleId, first_name: email.split('.')[0], last_name: '' });
  const token = new URL(await invitationOf(on.dataDir, email)).hash.replace('#token=', '');
  expect((await on.org.api.post('/dashboard/v1/account_links/use', { token, password })).status).toBe(201);
  const context = await on.browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${on.base}/app/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Library' }).waitFor();
  return { context, page };
}
