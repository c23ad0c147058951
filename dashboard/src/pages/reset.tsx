import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, problemOf } from '../api.ts';
import { Field, FormError } from '../components/field.tsx';
import { UseLink } from './link.tsx';

/** /reset: ask for a link; /reset#token=…: the mailed link, where the new password is chosen. */
export function Reset() {
  const [hasToken] = useState(() => location.hash.includes('token='));
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  if (hasToken) return <UseLink purpose="reset" />;

  async function submit(event: Event) {
    event.preventDefault();
    setProblem(null);
    const { error } = await api.POST('/dashboard/v1/password_resets', { body: { email } });
    if (error) setProblem(problemOf(error).message);
    else setSent(true);
  }

  return (
    <main class="auth">
      <form class="card auth__card" onSubmit={submit}>
        <h1>Reset your password</h1>
        {sent ? (
          <p role="status">If {email} has an account, a link to choose a new password is on its way. It works for an hour.</p>
        ) : (
          <>
            <FormError message={problem} />
            <Field label="Email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
            <button class="button button--primary" type="submit">
              Send the link
            </button>
          </>
        )}
        <p class="auth__aside">
          <Link href="/sign-in">Back to sign in</Link>
        </p>
      </form>
    </main>
  );
}
