import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { Field, FormError } from '../components/field.tsx';
import { signedIn } from '../session.ts';

export function SignIn() {
  const [, navigate] = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    const { data, error } = await api.POST('/dashboard/v1/session', { body: { email, password } });
    setBusy(false);
    if (data) {
      signedIn(data);
      navigate('/', { replace: true });
    } else setProblem(problemOf(error).message);
  }

  return (
    <main class="auth">
      <form class="card auth__card" onSubmit={submit}>
        <h1>Sign in to Reelbase</h1>
        <FormError message={problem} />
        <Field label="Email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <Field label="Password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button class="button button--primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="auth__aside">
          <Link href="/reset">Forgot your password?</Link>
        </p>
      </form>
    </main>
  );
}
