import { useState, type FormEvent } from 'react';
import type { ProfileView } from '#contract';
import { call } from '../../bridge.js';
import { ConfirmDialog } from '../../components/Dialog.js';
import { Field } from '../../components/Field.js';
import { useAction } from '../../components/useAction.js';
import { useSession } from '../../state/session.js';

/** The saved connections: choose one, add a remote one, remove one. */
export function ProfileList({ adding, onAdding }: { adding: boolean; onAdding: (adding: boolean) => void }) {
  const profiles = useSession((s) => s.profiles);
  const profileId = useSession((s) => s.profileId);
  const choose = useSession((s) => s.choose);
  const [removing, setRemoving] = useState<ProfileView | null>(null);
  const { run, busy, error, setError } = useAction();

  const remove = (profile: ProfileView) =>
    run(async () => {
      await call('profiles.remove', { profileId: profile.id });
      await useSession.getState().refreshProfiles();
      setRemoving(null);
    });

  return (
    <section className="panel" aria-labelledby="profiles-heading">
      <h2 id="profiles-heading">Connections</h2>
      <ul className="profile-list" data-testid="profiles">
        {profiles.map((profile) => (
          <li key={profile.id}>
            <button
              type="button"
              className={profile.id === profileId ? 'profile selected' : 'profile'}
              aria-pressed={profile.id === profileId}
              onClick={() => void choose(profile.id)}
              data-testid={`profile-${profile.name}`}
            >
              <strong>{profile.name}</strong>
              <span className="muted">
                {profile.kind === 'embedded' ? 'embedded demo' : profile.baseUrl}
                {profile.signedIn ? ' · signed in' : ''}
              </span>
            </button>
            <button
              type="button"
              className="link"
              aria-label={`Remove the connection ${profile.name}`}
              onClick={() => setRemoving(profile)}
            >
              Remove
            </button>
          </li>
        ))}
      </ul>
      {adding ? (
        <AddProfileForm onDone={() => onAdding(false)} />
      ) : (
        <button type="button" onClick={() => onAdding(true)} data-testid="add-profile">
          Add a connection…
        </button>
      )}
      {removing && (
        <ConfirmDialog
          title="Remove connection"
          message={
            <>
              Remove the connection <strong>{removing.name}</strong>? Its session on this computer ends; nothing on the
              server is deleted.
            </>
          }
          confirmLabel="Remove connection"
          busy={busy}
          error={error}
          onConfirm={() => void remove(removing)}
          onClose={() => {
            setRemoving(null);
            // A refusal belongs to the connection it was about, not to the next one removed.
            setError(null);
          }}
        />
      )}
    </section>
  );
}

function AddProfileForm({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState('');
  const [baseUrl, setBaseUrl] = useState('https://');
  const { run, busy, error } = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const profile = await call('profiles.add', { name: name.trim(), kind: 'remote', baseUrl: baseUrl.trim() });
      await useSession.getState().refreshProfiles();
      await useSession.getState().choose(profile.id);
      onDone();
    });
  };

  return (
    <form className="stack" onSubmit={submit} data-testid="add-profile-form" aria-label="Add a connection">
      <Field label="Name">
        <input
          value={name}
          required
          maxLength={100}
          onChange={(e) => setName(e.target.value)}
          placeholder="Production"
        />
      </Field>
      <Field
        label="Control plane address"
        hint="The server's base address, such as https://gateway.example.com"
        error={error}
      >
        <input value={baseUrl} required onChange={(e) => setBaseUrl(e.target.value)} inputMode="url" />
      </Field>
      <div className="actions">
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Adding…' : 'Add connection'}
        </button>
      </div>
    </form>
  );
}
