import { useState, type FormEvent } from 'react';
import { Field } from './Field.js';
import { FormDialog } from './FormActions.js';
import { useAction } from './useAction.js';
import { formErrors, type FieldRule, type FormErrors } from '../lib/field-errors.js';

const NAME_RULES: readonly FieldRule<'name'>[] = [{ field: 'name', names: ['name'] }];

/**
 * Asks for a saved view's name: a new view of the filters on screen, or a new name for one.
 * The host's refusal (a name another view has) shows at the field.
 */
export function ViewNameDialog(props: {
  title: string;
  submitLabel: string;
  initialName?: string;
  hint?: string;
  onSubmit: (name: string) => Promise<unknown>;
  onClose: () => void;
  testId: string;
}) {
  const [name, setName] = useState(props.initialName ?? '');
  const action = useAction<FormErrors<'name'>>((error) => formErrors(error, NAME_RULES));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() === '') {
      action.setError({ name: 'Give the view a name.' });
      return;
    }
    if (await action.run(() => props.onSubmit(name.trim()))) props.onClose();
  };

  return (
    <FormDialog
      title={props.title}
      testId={props.testId}
      onClose={props.onClose}
      onSubmit={(event) => void submit(event)}
      error={action.error?.form}
      busy={action.busy}
      submitLabel={props.submitLabel}
      busyLabel="Saving…"
      submitTestId="view-name-submit"
    >
      <Field label="Name" hint={props.hint} error={action.error?.name}>
        <input
          type="text"
          value={name}
          maxLength={100}
          onChange={(event) => setName(event.target.value)}
          data-testid="view-name"
        />
      </Field>
    </FormDialog>
  );
}
