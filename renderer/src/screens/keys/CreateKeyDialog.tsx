import { useState, type FormEvent } from 'react';
import type { CallArgs, CallResult } from '../../../../main/core/contract.js';
import { Dialog } from '../../components/Dialog.js';
import { ErrorNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { parseCreditLimit } from '../../lib/credit-limit.js';
import { placeError, type FieldRule } from '../../lib/field-errors.js';
import { ENVIRONMENTS, type Environment } from '../../lib/key-table.js';
import { parseLocalInput, toIsoWithOffset, zoneOffset } from '../../lib/local-time-input.js';
import { api } from '../../state/api.js';
import type { Model, Project } from '../../state/directory.js';
import { ModelChooser } from './ModelChooser.js';

type CreatedKey = CallResult<'api.createKey'>;
type CreateBody = CallArgs<'api.createKey'>['body'];
type FieldName = 'project' | 'name' | 'environment' | 'expiry' | 'credit' | 'models';
type Errors = Partial<Record<FieldName | 'form', string>>;

const NAME_MAX = 200;

// Order matters: "unknown or inactive model in allowed_models" must not be read as about the name.
const RULES: FieldRule<FieldName>[] = [
  { field: 'project', names: ['project_id'], words: /project/i },
  { field: 'models', names: ['allowed_models'], words: /allowed_models|model/i },
  { field: 'expiry', names: ['expires_at'], words: /expires_at|expir/i },
  { field: 'credit', names: ['credit_limit_cents'], words: /credit/i },
  { field: 'environment', names: ['environment'], words: /environment/i },
  { field: 'name', names: ['name'], words: /\bname\b/i },
];

export function CreateKeyDialog(props: {
  projects: Project[];
  /** The catalogue, or null when the server does not offer one. */
  models: Model[] | null;
  defaultProject: string | null;
  onClose: () => void;
  onCreated: (key: CreatedKey) => void;
}) {
  const [project, setProject] = useState(
    props.projects.some((p) => p.id === props.defaultProject)
      ? (props.defaultProject ?? '')
      : (props.projects[0]?.id ?? ''),
  );
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<Environment>('production');
  const [expiry, setExpiry] = useState('');
  const [credit, setCredit] = useState('');
  const [chosen, setChosen] = useState<readonly string[]>([]);
  const [platformMax, setPlatformMax] = useState(false);
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);

  const activeModels = props.models?.filter((m) => m.active) ?? [];

  const validate = (): { body: CreateBody } | { errors: Errors } => {
    const found: Errors = {};
    const trimmed = name.trim();
    if (!project) found.project = 'choose the project the key belongs to';
    if (trimmed === '') found.name = 'enter a name';
    else if ([...trimmed].length > NAME_MAX) found.name = `a name has at most ${NAME_MAX} characters`;
    let expiresAt: string | undefined;
    if (expiry !== '') {
      const parsed = parseLocalInput(expiry);
      if (parsed.ok) expiresAt = toIsoWithOffset(parsed.date);
      else found.expiry = parsed.error;
    }
    const limit = parseCreditLimit(credit);
    if (!limit.ok) found.credit = limit.error;
    if (Object.keys(found).length > 0) return { errors: found };
    return {
      body: {
        project_id: project,
        name: trimmed,
        environment,
        ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
        ...(limit.ok && limit.micro !== null ? { credit_limit_cents: limit.micro } : {}),
        ...(chosen.length > 0 ? { allowed_models: [...chosen] } : {}),
        ...(platformMax ? { use_platform_max_rate_limit: true } : {}),
      },
    };
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const checked = validate();
    if ('errors' in checked) {
      setErrors(checked.errors);
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      const created = await api('api.createKey', { body: checked.body });
      props.onCreated(created);
    } catch (error) {
      const placed = placeError(error, RULES);
      setErrors({ [placed.field ?? 'form']: placed.message });
      setBusy(false);
    }
  };

  return (
    <Dialog title="New API key" onClose={props.onClose} testId="create-key-dialog" wide>
      <form className="stack" onSubmit={submit} noValidate>
        <div className="form-grid">
          <Field label="Project" error={errors.project}>
            <select value={project} onChange={(e) => setProject(e.target.value)}>
              {props.projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Name" error={errors.name} hint="Fixed once the key is created.">
            <input value={name} onChange={(e) => setName(e.target.value)} maxLength={NAME_MAX} autoComplete="off" />
          </Field>
          <Field label="Environment" error={errors.environment} hint="A label only.">
            <select value={environment} onChange={(e) => setEnvironment(e.target.value as Environment)}>
              {ENVIRONMENTS.map((env) => (
                <option key={env} value={env}>
                  {env}
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Expires"
            error={errors.expiry}
            hint={`Your local time (UTC${zoneOffset(new Date())}). Leave empty for no expiry.`}
          >
            <input type="datetime-local" value={expiry} onChange={(e) => setExpiry(e.target.value)} />
          </Field>
          <Field label="Credit limit (PKR)" error={errors.credit} hint="Lifetime spend cap. Leave empty for no limit.">
            <input
              value={credit}
              onChange={(e) => setCredit(e.target.value)}
              inputMode="decimal"
              placeholder="unlimited"
            />
          </Field>
        </div>
        {activeModels.length > 0 && (
          <ModelChooser models={activeModels} chosen={chosen} onChange={setChosen} error={errors.models} />
        )}
        <label className="check">
          <input type="checkbox" checked={platformMax} onChange={(e) => setPlatformMax(e.target.checked)} />
          Use the platform maximum rate limit (otherwise 60 requests per minute)
        </label>
        <ErrorNote error={errors.form} testId="form-error" />
        <div className="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy} data-testid="submit-create">
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
