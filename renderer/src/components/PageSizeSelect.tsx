import { PAGE_SIZES } from '../lib/page-size.js';
import { Field } from './Field.js';

/** How many rows a page of a paged list holds: one of the sizes the server allows. */
export function PageSizeSelect(props: {
  label: string;
  value: number;
  onChange: (size: number) => void;
  testId?: string;
}) {
  return (
    <Field label={props.label}>
      <select
        value={props.value}
        onChange={(event) => props.onChange(Number(event.target.value))}
        data-testid={props.testId}
      >
        {PAGE_SIZES.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </Field>
  );
}
