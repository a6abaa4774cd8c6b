import { useId } from 'react';
import { THEMES, useTheme } from './theme-store.js';

/** System, Light or Dark: a group of radio buttons (arrow keys move the choice), one per theme. */
export function ThemeSwitch() {
  const theme = useTheme((s) => s.theme);
  const choose = useTheme((s) => s.choose);
  const error = useTheme((s) => s.error);
  const name = useId();
  return (
    <fieldset className="theme-switch" data-testid="theme-switch">
      <legend>Theme</legend>
      <div className="theme-options">
        {THEMES.map((option) => (
          <label key={option.value} className={option.value === theme ? 'selected' : undefined}>
            <input
              type="radio"
              name={name}
              value={option.value}
              checked={option.value === theme}
              onChange={() => void choose(option.value)}
              data-testid={`theme-${option.value}`}
            />
            {option.label}
          </label>
        ))}
      </div>
      {error && (
        <p className="error" role="alert" data-testid="theme-error">
          {error}
        </p>
      )}
    </fieldset>
  );
}
