import type { JSX } from 'preact';
import { useId } from 'preact/hooks';

/** A labelled input with its error next to it (the API's validation, by field). */
export function Field(props: { label: string; error?: string; hint?: string } & JSX.InputHTMLAttributes<HTMLInputElement>) {
  const { label, error, hint, ...input } = props;
  const id = useId();
  const described = error ? `${id}-error` : hint ? `${id}-hint` : undefined;
  return (
    <div class={`field${error ? ' field--error' : ''}`}>
      <label for={id}>{label}</label>
      <input id={id} aria-invalid={error ? true : undefined} aria-describedby={described} {...input} />
      {error ? (
        <p class="field__error" id={`${id}-error`} role="alert">
          {error}
        </p>
      ) : hint ? (
        <p class="field__hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/** A message about the whole form. */
export function FormError({ message }: { message: string | null }) {
  return message ? (
    <p class="form-error" role="alert">
      {message}
    </p>
  ) : null;
}
