import { useState, type FormEvent } from 'react';
import { Dialog } from '../../components/Dialog.js';
import { Field } from '../../components/Field.js';
import { FormActions } from '../../components/FormActions.js';
import { useAction } from '../../components/useAction.js';
import { formErrors, type FieldRule, type FormErrors } from '../../lib/field-errors.js';
import { providerNameError, providerSuggestions } from '../../lib/provider-name.js';
import { useDirectory } from '../../state/directory.js';
import { useVaultStore, type VaultKey } from './vault-store.js';

type FieldName = 'provider' | 'apiKey';
type Errors = FormErrors<FieldName>;

const API_KEY_MAX = 4096;

const RULES: FieldRule<FieldName>[] = [
  { field: 'provider', names: ['provider'] },
  { field: 'apiKey', names: ['api_key'] },
];

/**
 * Adds a provider key, or rotates one (the same POST replaces it). The value goes into a
 * password field, is sent once, and is cleared as soon as the server has it.
 */
export function StoreVaultKeyDialog(props: {
  /** The key being rotated; null to add (which also rotates when the provider already has one). */
  rotating: VaultKey | null;
  existing: VaultKey[];
  onClose: () => void;
  onStored: (stored: VaultKey, replaced: boolean) => void;
}) {
  const store = useVaultStore((s) => s.store);
  // Providers the catalogue knows, offered as suggestions when the directory has them.
  const catalogue = useDirectory((s) => s.models);
  const [provider, setProvider] = useState(props.rotating?.provider ?? '');
  const [apiKey, setApiKey] = useState('');
  const { run, busy, error, setError } = useAction((e) => formErrors(e, RULES));
  const errors: Errors = error ?? {};

  const name = provider.trim();
  const current = props.existing.find((k) => k.provider === name) ?? null;
  const suggestions = providerSuggestions(catalogue, props.existing);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const found: Errors = {};
    const nameError = providerNameError(name);
    if (nameError) found.provider = nameError;
    if (apiKey === '') found.apiKey = 'paste the provider’s API key';
    else if (apiKey.length > API_KEY_MAX) found.apiKey = `a key has at most ${API_KEY_MAX} characters`;
    else if (apiKey !== apiKey.trim()) found.apiKey = 'the key starts or ends with a space: check what was pasted';
    if (Object.keys(found).length > 0) {
      setError(found);
      return;
    }
    await run(async () => {
      const stored = await store(name, apiKey);
      // The server has it: the console keeps no copy, not even in this field.
      setApiKey('');
      props.onStored(stored, current !== null);
    });
  };

  const rotating = props.rotating !== null;
  return (
    <Dialog
      title={rotating ? `Rotate the ${props.rotating?.provider} key` : 'Add a provider key'}
      onClose={props.onClose}
      testId="vault-key-dialog"
    >
      <form className="stack" onSubmit={submit} noValidate>
        {rotating ? (
          <p>
            Provider: <strong>{props.rotating?.provider}</strong>
          </p>
        ) : (
          <Field
            label="Provider"
            error={errors.provider}
            hint="Lower-case letters, digits, “-” and “_”, as the gateway names the provider (openai, anthropic…)."
          >
            <input
              value={provider}
              onChange={(e) => setProvider(e.target.value)}
              list="vault-provider-suggestions"
              autoComplete="off"
              spellCheck={false}
              maxLength={64}
            />
          </Field>
        )}
        {!rotating && (
          <datalist id="vault-provider-suggestions">
            {suggestions.map((p) => (
              <option key={p} value={p} />
            ))}
          </datalist>
        )}
        {current && (
          <p className="warning" role="note" data-testid="replace-warning">
            This replaces the current {current.provider} key (<code>{current.key_hint}</code>). The old key is not kept;
            requests use the new one from now on.
          </p>
        )}
        <Field
          label="API key"
          error={errors.apiKey}
          hint="Stored encrypted. It is never shown again, here or anywhere."
        >
          <input
            type="password"
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        </Field>
        <FormActions
          error={errors.form}
          busy={busy}
          submitLabel={current ? 'Replace key' : 'Store key'}
          busyLabel={'Saving…'}
          submitTestId="submit-vault-key"
          onCancel={props.onClose}
        />
      </form>
    </Dialog>
  );
}
