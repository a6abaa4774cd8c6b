import { useState } from 'react';
import type { CallArgs, CallResult } from '#contract';
import { Field } from '../../components/Field.js';
import { FormDialog } from '../../components/FormActions.js';
import type { FieldRule, FormErrors } from '../../lib/field-errors.js';
import { ENVIRONMENTS, type Environment } from '../../lib/key-table.js';
import { toIsoWithOffset } from '../../lib/local-time-input.js';
import type { Catalogue } from '../../lib/model-catalogue.js';
import { api } from '../../state/api.js';
import type { Project } from '../../state/directory.js';
import { readKeyLimits, useKeyForm, type Checked } from './key-form.js';
import { CreditLimitField, ExpiryField } from './KeyLimitFields.js';
import { CatalogueModelChooser } from './ModelChooser.js';

type CreatedKey = CallResult<'api.createKey'>;
type CreateBody = CallArgs<'api.createKey'>['body'];
type FieldName = 'project' | 'name' | 'environment' | 'expiry' | 'credit' | 'models';
type Errors = FormErrors<FieldName>;

const NAME_MAX = 200;

const RULES: FieldRule<FieldName>[] = [
  { field: 'project', names: ['project_id'] },
  { field: 'models', names: ['allowed_models'] },
  { field: 'expiry', names: ['expires_at'] },
  { field: 'credit', names: ['credit_limit_cents'] },
  { field: 'environment', names: ['environment'] },
  { field: 'name', names: ['name'] },
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

  const check = (): Checked<FieldName, CreateBody> => {
    const trimmed = name.trim();
    const { limits, errors: limitErrors } = readKeyLimits(credit, expiry);
    const found: Errors = { ...limitErrors };
    if (!project) found.project = 'choose the project the key belongs to';
    if (trimmed === '') found.name = 'enter a name';
    else if ([...trimmed].length > NAME_MAX) found.name = `a name has at most ${NAME_MAX} characters`;
    if (!limits || Object.keys(found).length > 0) return { errors: found };
    return {
      body: {
        project_id: project,
        name: trimmed,
        environment,
        ...(limits.expires === null ? {} : { expires_at: toIsoWithOffset(limits.expires) }),
        ...(limits.creditMicro === null ? {} : { credit_limit_cents: limits.creditMicro }),
        ...(chosen.length > 0 ? { allowed_models: [...chosen] } : {}),
        ...(platformMax ? { use_platform_max_rate_limit: true } : {}),
      },
    };
  };
  const { submit, busy, errors } = useKeyForm(RULES, check, async (body) =>
    props.onCreated(await api('api.createKey', { body })),
  );

  return (
    <FormDialog
      title="New API key"
      testId="create-key-dialog"
      wide
      onClose={props.onClose}
      onSubmit={submit}
      error={errors.form}
      busy={busy}
      submitLabel="Create key"
      busyLabel="Creating…"
      submitTestId="submit-create"
    >
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
        <ExpiryField value={expiry} onChange={setExpiry} error={errors.expiry} />
        <CreditLimitField
          value={credit}
          onChange={setCredit}
          error={errors.credit}
          hint="Lifetime spend cap. Leave empty for no limit."
        />
      </div>
      <CatalogueModelChooser
        catalogue={props.catalogue}
        onRetry={props.onRetryCatalogue}
        chosen={chosen}
        onChange={setChosen}
        error={errors.models}
      />
      <label className="check">
        <input type="checkbox" checked={platformMax} onChange={(e) => setPlatformMax(e.target.checked)} />
        Use the platform maximum rate limit (otherwise 60 requests per minute)
      </label>
    </FormDialog>
  );
}
