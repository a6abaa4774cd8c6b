import { useId, useState, type FormEvent, type ReactNode } from 'react';
import type { ProfileView } from '#contract';
import { BridgeError, call, errorMessage } from '../../bridge.js';
import { Field } from '../../components/Field.js';
import { useAction } from '../../components/useAction.js';
import { useRetryCountdown } from '../../components/useRetryCountdown.js';
import { formErrors, type FieldRule } from '../../lib/field-errors.js';
import { useSession } from '../../state/session.js';
import { ModeTabs, tabId } from './ModeTabs.js';

type Mode = 'signIn' | 'register' | 'identity';

const MODES: { mode: Mode; label: string }[] = [
  { mode: 'signIn', label: 'Sign in' },
  { mode: 'register', label: 'Register' },
  { mode: 'identity', label: 'External identity' },
];

/** Sign in, register (create or join an organisation by name), or sign in with an OpenID Connect ID token. */
export function SignInPanel({ profile }: { profile: ProfileView }) {
  const [mode, setMode] = useState<Mode>('signIn');
  const [identityRefused, setIdentityRefused] = useState<string | null>(null);
  const panelId = useId();
  return (
    <div className="signin">
      <ModeTabs label="How to sign in" modes={MODES} selected={mode} onSelect={setMode} panelId={panelId} />
      <div role="tabpanel" id={panelId} aria-labelledby={tabId(panelId, mode)}>
        {mode === 'signIn' && <PasswordForm profile={profile} />}
        {mode === 'register' && <RegisterForm profile={profile} />}
        {mode === 'identity' &&
          (identityRefused ? (
            <p className="muted" data-testid="identity-unavailable">
              {identityRefused}
            </p>
          ) : (
            <IdentityForm profile={profile} onNotOffered={setIdentityRefused} />
          ))}
      </div>
    </div>
  );
}

/** A form that signs in: `submit(call)` sends it, and on success the console opens on this profile. */
function useSignIn<E>(profileId: string, describe: (error: unknown) => E | null) {
  const signedIn = useSession((s) => s.signedIn);
  const { run, busy, error } = useAction(describe);
  const { secondsLeft, waitFor } = useRetryCountdown();
  const submit = (signIn: () => Promise<unknown>) => (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      try {
        await signIn();
      } catch (failure) {
        // Throttled (429): the server takes no other try before then, so neither does the button.
        if (failure instanceof BridgeError && failure.retryAfterSeconds) waitFor(failure.retryAfterSeconds);
        throw failure;
      }
      await signedIn(profileId);
    });
  };
  return { busy, error, submit, secondsLeft };
}

function SubmitRow({ busy, secondsLeft, children }: { busy: boolean; secondsLeft: number; children: ReactNode }) {
  return (
    <div className="actions">
      <button type="submit" className="primary" disabled={busy || secondsLeft > 0} data-testid="submit">
        {busy ? 'Please wait…' : secondsLeft > 0 ? `Try again in ${secondsLeft} s` : children}
      </button>
    </div>
  );
}

function PasswordForm({ profile }: { profile: ProfileView }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { error, busy, submit, secondsLeft } = useSignIn(profile.id, errorMessage);
  return (
    <form
      className="stack"
      onSubmit={submit(() => call('session.signIn', { profileId: profile.id, email: email.trim(), password }))}
      aria-label="Sign in"
      data-testid="sign-in-form"
    >
      <Field label="Email">
        <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      <Field label="Password" error={error}>
        <input
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </Field>
      <SubmitRow busy={busy} secondsLeft={secondsLeft}>
        Sign in
      </SubmitRow>
    </form>
  );
}

type RegisterField = 'email' | 'password' | 'organization';

const REGISTER_RULES: FieldRule<RegisterField>[] = [
  { field: 'email', names: ['email'] },
  { field: 'password', names: ['password'] },
  { field: 'organization', names: ['organization_name'] },
];

/**
 * The server's minimum may be above the contract's 8 (SVC_PASSWORD_MIN_LENGTH) and the console
 * cannot know it, so the hint says so and the server's refusal, shown at the field, decides.
 */
const PASSWORD_HINT = 'At least 8 characters (the server may ask for more), and not a commonly used password.';

function RegisterForm({ profile }: { profile: ProfileView }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [organization, setOrganization] = useState('');
  const { error, busy, submit, secondsLeft } = useSignIn(profile.id, (e) => formErrors(e, REGISTER_RULES));
  const register = () =>
    call('session.register', {
      profileId: profile.id,
      email: email.trim(),
      password,
      organization_name: organization.trim(),
    });
  return (
    <form className="stack" onSubmit={submit(register)} aria-label="Register" data-testid="register-form">
      <Field label="Email" error={error?.email}>
        <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
      </Field>
      <Field label="Password" hint={PASSWORD_HINT} error={error?.password}>
        <input
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
      </Field>
      <Field
        label="Organisation"
        hint="A new name creates the organisation with you as its owner; an existing one adds you as a member."
        error={error?.organization ?? error?.form}
      >
        <input required value={organization} onChange={(e) => setOrganization(e.target.value)} />
      </Field>
      <SubmitRow busy={busy} secondsLeft={secondsLeft}>
        Register
      </SubmitRow>
    </form>
  );
}

function IdentityForm({ profile, onNotOffered }: { profile: ProfileView; onNotOffered: (why: string) => void }) {
  const [idToken, setIdToken] = useState('');
  const [organization, setOrganization] = useState('');
  const { error, busy, submit, secondsLeft } = useSignIn(profile.id, (e) => {
    if (e instanceof BridgeError && e.status === 501) {
      onNotOffered(`This server does not offer external identity sign-in (${e.message}).`);
      return null;
    }
    return errorMessage(e);
  });
  const signIn = () =>
    call('session.google', {
      profileId: profile.id,
      id_token: idToken.trim(),
      ...(organization.trim() ? { organization_name: organization.trim() } : {}),
    });
  return (
    <form
      className="stack"
      onSubmit={submit(signIn)}
      aria-label="Sign in with an external identity"
      data-testid="identity-form"
    >
      <Field label="OpenID Connect ID token" hint="From your organisation's identity provider.">
        <textarea required rows={4} value={idToken} onChange={(e) => setIdToken(e.target.value)} spellCheck={false} />
      </Field>
      <Field label="Organisation (first sign-in only)" error={error}>
        <input value={organization} onChange={(e) => setOrganization(e.target.value)} />
      </Field>
      <SubmitRow busy={busy} secondsLeft={secondsLeft}>
        Sign in
      </SubmitRow>
    </form>
  );
}
