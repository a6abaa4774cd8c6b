import { useId } from 'react';
import { ErrorNote, Loading } from '../../components/Feedback.js';
import type { Catalogue } from '../../lib/model-catalogue.js';

/**
 * The models a key may call, from the catalogue's active routes; none chosen is any model.
 * A checkbox list grouped by provider, inside a fieldset so its legend labels the group.
 */
export function ModelChooser(props: {
  models: { id: string; provider: string }[];
  chosen: readonly string[];
  onChange: (chosen: readonly string[]) => void;
  error?: string | undefined;
}) {
  const errorId = useId();
  const providers = [...new Set(props.models.map((m) => m.provider))];
  const toggle = (id: string, on: boolean) =>
    props.onChange(on ? [...props.chosen, id] : props.chosen.filter((chosen) => chosen !== id));
  return (
    <fieldset
      className={props.error ? 'model-chooser invalid' : 'model-chooser'}
      aria-describedby={props.error ? errorId : undefined}
      data-testid="model-chooser"
    >
      <legend>Allowed models</legend>
      <p className="muted" aria-live="polite" data-testid="models-summary">
        {props.chosen.length === 0
          ? 'Any model: choose some to limit the key to them.'
          : `Only ${props.chosen.length === 1 ? 'this model' : `these ${props.chosen.length} models`}: ${props.chosen.join(', ')}`}
      </p>
      <div className="model-groups">
        {providers.map((provider) => (
          <div key={provider} className="model-group" role="group" aria-label={provider}>
            <strong>{provider}</strong>
            {props.models
              .filter((m) => m.provider === provider)
              .map((m) => (
                <label key={m.id} className="check">
                  <input
                    type="checkbox"
                    checked={props.chosen.includes(m.id)}
                    onChange={(e) => toggle(m.id, e.target.checked)}
                  />
                  <code>{m.id}</code>
                </label>
              ))}
          </div>
        ))}
      </div>
      {props.chosen.length > 0 && (
        <button type="button" className="link" onClick={() => props.onChange([])}>
          Allow any model
        </button>
      )}
      {props.error && (
        <small id={errorId} role="alert" className="error" data-testid="field-error">
          {props.error}
        </small>
      )}
    </fieldset>
  );
}

/**
 * The chooser as the catalogue allows it: the models once read, a note while they are read,
 * and why they cannot be chosen when the read failed (nothing when there is no catalogue).
 */
export function CatalogueModelChooser(props: {
  catalogue: Catalogue;
  onRetry: () => void;
  chosen: readonly string[];
  onChange: (chosen: readonly string[]) => void;
  error?: string | undefined;
}) {
  const { catalogue } = props;
  return (
    <>
      {catalogue.kind === 'ready' && (
        <ModelChooser models={catalogue.models} chosen={props.chosen} onChange={props.onChange} error={props.error} />
      )}
      {catalogue.kind === 'loading' && <Loading>Reading the model catalogue…</Loading>}
      <ErrorNote
        error={
          catalogue.kind === 'failed'
            ? `The model catalogue could not be read, so models cannot be chosen: ${catalogue.error}. Without a choice the key allows any model.`
            : null
        }
        onRetry={props.onRetry}
        testId="catalogue-error"
      />
    </>
  );
}
