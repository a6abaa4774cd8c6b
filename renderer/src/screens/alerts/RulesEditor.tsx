import { useState } from 'react';
import { ErrorNote } from '../../components/Feedback.js';
import { Field } from '../../components/Field.js';
import { errorMessage } from '../../bridge.js';
import { describeRule, figureError, newRuleId, RULE_KINDS, ruleOf, type RuleKind } from './alert-rules.js';
import { useAlerts, type AlertRule } from './alerts-store.js';

/** The profile's rules: each in a sentence with a way to remove it, and a form that adds one. */
export function RulesEditor({ rules }: { rules: readonly AlertRule[] }) {
  const save = useAlerts((s) => s.save);
  const busy = useAlerts((s) => s.busy);
  const [kind, setKind] = useState<RuleKind>('limit_share');
  const [figure, setFigure] = useState(String(RULE_KINDS.limit_share.start));
  const [error, setError] = useState<string | null>(null);
  const invalid = figureError(kind, figure);

  const saveRules = async (next: AlertRule[]) => {
    setError(null);
    try {
      await save(next);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };

  return (
    <section aria-labelledby="rules-heading" className="stack" data-testid="alert-rules">
      <h2 id="rules-heading">Rules</h2>
      {rules.length === 0 ? (
        <p className="muted">No rules yet: add one below. The console checks them every minute while it runs.</p>
      ) : (
        <ul className="alert-rule-list">
          {rules.map((rule) => (
            <li key={rule.id} data-testid="alert-rule">
              <span>{describeRule(rule)}</span>
              <button
                type="button"
                disabled={busy}
                onClick={() => void saveRules(rules.filter((r) => r.id !== rule.id))}
                aria-label={`Remove the rule: ${describeRule(rule)}`}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        className="toolbar alert-rule-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (invalid) return;
          void saveRules([...rules, ruleOf(newRuleId(), kind, Number(figure))]);
        }}
      >
        <Field label="When">
          <select
            value={kind}
            onChange={(event) => {
              const next = event.target.value as RuleKind;
              setKind(next);
              setFigure(String(RULE_KINDS[next].start));
            }}
            data-testid="rule-kind"
          >
            {(Object.keys(RULE_KINDS) as RuleKind[]).map((value) => (
              <option key={value} value={value}>
                {RULE_KINDS[value].label}
              </option>
            ))}
          </select>
        </Field>
        <Field label={`At (${RULE_KINDS[kind].unit})`} error={figure === '' ? null : invalid}>
          <input
            inputMode="decimal"
            value={figure}
            onChange={(event) => setFigure(event.target.value)}
            data-testid="rule-figure"
          />
        </Field>
        <button type="submit" className="primary" disabled={busy || invalid !== null} data-testid="add-rule">
          Add rule
        </button>
      </form>
      <ErrorNote error={error && `Could not save the rules: ${error}`} testId="rules-error" />
    </section>
  );
}
