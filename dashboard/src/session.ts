import { signal } from '@preact/signals';
import { api, setCsrfToken, type Session } from './api.ts';

/** Who is signed in: undefined while unknown, null when no one. */
export const session = signal<Session | null | undefined>(undefined);

export function signedIn(value: Session) {
  setCsrfToken(value.csrf_token);
  session.value = value;
}

export async function loadSession() {
  const { data } = await api.GET('/dashboard/v1/session');
  if (data) signedIn(data);
  else session.value = null;
}

export async function signOut() {
  await api.DELETE('/dashboard/v1/session');
  setCsrfToken('');
  session.value = null;
}

/** What the role may do, as the API's permissions say (GET /v1/roles). */
export function mayWrite(s: Session | null | undefined) {
  return !!s && s.user.role !== 'viewer';
}

/** Whether the role manages users, teams, webhooks and IP ranges (owners and admins). */
export function mayManage(s: Session | null | undefined) {
  return !!s && (s.user.role === 'owner' || s.user.role === 'admin');
}
