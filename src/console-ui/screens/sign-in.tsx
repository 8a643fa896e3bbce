/** Sign-in: the ops token is exchanged for the HttpOnly session cookie (POST /ops/v1/session). */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, signIn } from '../api.js';
import { useI18n } from '../i18n.js';
import { errorText } from '../ui.js';

export function SignIn({ onSignedIn, header }: { onSignedIn: () => void; header: ComponentChildren }) {
  const { t } = useI18n();
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(token.trim());
      setToken('');
      onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setError(t('wrongToken'));
      else if (err instanceof ApiError && err.status === 429) setError(t('tooMany', { s: err.retryAfter ?? 60 }));
      else setError(errorText(err, t));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <div class="signin-lang">{header}</div>
      <form class="card signin-card" onSubmit={(e) => void submit(e)} aria-describedby="signin-intro">
        <h1>
          <span class="logo" aria-hidden="true">
            ▦
          </span>{' '}
          {t('appName')}
        </h1>
        <h2>{t('signInTitle')}</h2>
        <p id="signin-intro" class="muted">
          {t('signInIntro')}
        </p>
        <label for="ops-token">{t('opsToken')}</label>
        <input
          id="ops-token"
          name="token"
          type="password"
          autoComplete="off"
          required
          spellcheck={false}
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'signin-error' : undefined}
        />
        {error && (
          <p id="signin-error" class="notice bad" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="btn primary wide" disabled={busy || token.trim() === ''}>
          {busy ? t('signingIn') : t('signInButton')}
        </button>
      </form>
    </main>
  );
}
