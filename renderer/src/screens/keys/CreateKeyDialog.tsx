import { useState, type FormEvent } from 'react';
import type { CallArgs, CallResult } from '../../../../main/core/contract.js';
import { Dialog } from '../../components/Dialog.js';
import { ErrorNote, Loading } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { FormActions } from '../../components/FormActions.js';
import { useAction } from '../../components/useAction.js';
import { parseCreditLimit } from '../../lib/credit-limit.js';
import { formErrors, type FieldRule, type FormErrors } from '../../lib/field-errors.js';
import { ENVIRONMENTS, type Environment } from '../../lib/key-table.js';
import { parseLocalInput, toIsoWithOffset, zoneOffset } from '../../lib/local-time-input.js';
import type { Catalogue } from '../../lib/model-catalogue.js';
import { api } from '../../state/api.js';
import type { Project } from '../../state/directory.js';
import { ModelChooser } from './ModelChooser.js';

type CreatedKey = CallResult<'api.createKey'>;
type CreateBody = CallArgs<'api.createKey'>['body'];
type FieldName = 'project' | 'name' | 'environment' | 'expiry' | 'credit' | 'models';
type Errors = FormErrors<FieldName>;

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
  catalogue: Catalogue;
  onRetryCatalogue: () => void;
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
  const { run, busy, error, setError } = useAction((e) => formErrors(e, RULES));
  const errors: Errors = error ?? {};
  const { catalogue } = props;

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
      setError(checked.errors);
      return;
    }
    await run(async () => props.onCreated(await api('api.createKey', { body: checked.body })));
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
        {catalogue.kind === 'ready' && (
          <ModelChooser models={catalogue.models} chosen={chosen} onChange={setChosen} error={errors.models} />
        )}
        {catalogue.kind === 'loading' && <Loading>Reading the model catalogue…</Loading>}
        <ErrorNote
          error={
            catalogue.kind === 'failed'
              ? `The model catalogue could not be read, so models cannot be chosen: ${catalogue.error}. Without a choice the key allows any model.`
              : null
          }
          onRetry={props.onRetryCatalogue}
          testId="catalogue-error"
        />
        <label className="check">
          <input type="checkbox" checked={platformMax} onChange={(e) => setPlatformMax(e.target.checked)} />
          Use the platform maximum rate limit (otherwise 60 requests per minute)
        </label>
        <FormActions
          error={errors.form}
          busy={busy}
          submitLabel={'Create key'}
          busyLabel={'Creating…'}
          submitTestId="submit-create"
          onCancel={props.onClose}
        />
      </form>
    </Dialog>
  );
}
