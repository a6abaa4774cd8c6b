import { useState, type FormEvent } from 'react';
import { Field } from '../../components/Field.js';
import type { Me } from '../../state/session.js';
import { canRename, useOrganisation } from './organisation-store.js';

/** The name: a form for owners and admins, plain text and the reason for a member. */
export function OrganisationName({ me }: { me: Me }) {
  const current = me.organization.name;
  return (
    <section className="panel" aria-labelledby="org-name-heading" data-testid="organisation-name">
      <h2 id="org-name-heading">Name</h2>
      {canRename(me.role) ? (
        <RenameForm current={current} />
      ) : (
        <>
          <p className="organisation-name" data-testid="organisation-name-text">
            {current}
          </p>
          <p className="muted" data-testid="rename-refused">
            Only the organisation&apos;s owner and admins can rename it; you are a {me.role}.
          </p>
        </>
      )}
    </section>
  );
}

function RenameForm({ current }: { current: string }) {
  const [draft, setDraft] = useState(current);
  const renaming = useOrganisation((s) => s.renaming);
  const renameError = useOrganisation((s) => s.renameError);
  const renamedTo = useOrganisation((s) => s.renamedTo);
  const rename = useOrganisation((s) => s.rename);
  const clearRename = useOrganisation((s) => s.clearRename);
  // The server trims; an unchanged name has nothing to send.
  const unchanged = draft.trim() === current;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (unchanged || renaming) return;
    void rename(draft).then((ok) => {
      if (ok) setDraft((d) => d.trim());
    });
  };

  return (
    <form className="rename" onSubmit={submit} aria-label="Rename the organisation" data-testid="rename-form">
      <Field
        label="Organisation name"
        hint="Teammates join by registering with this name, so tell them when it changes. At most 255 characters, without < or >."
        error={renameError}
        testId="rename-field"
      >
        <input
          value={draft}
          onChange={(e) => {
            setDraft(e.target.value);
            if (renameError || renamedTo) clearRename();
          }}
          autoComplete="organization"
          data-testid="rename-input"
        />
      </Field>
      <div className="actions">
        <button
          type="button"
          disabled={renaming || draft === current}
          onClick={() => {
            setDraft(current);
            clearRename();
          }}
        >
          Undo changes
        </button>
        <button type="submit" className="primary" disabled={renaming || unchanged} data-testid="rename-submit">
          {renaming ? 'Renaming…' : 'Rename'}
        </button>
      </div>
      {renamedTo && (
        <p role="status" className="organisation-saved" data-testid="rename-done">
          Renamed to <strong>{renamedTo}</strong>.
        </p>
      )}
    </form>
  );
}
