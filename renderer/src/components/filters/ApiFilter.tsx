import { API_CHOICES } from '../../lib/request-api.js';
import { unknownLabel } from '../../lib/id-label.js';
import { ChoiceSelect } from './ChoiceSelect.js';

/**
 * "API": all of them, or the requests that came in on one API of the gateway's (chat
 * completions, Anthropic Messages and its token counting, Responses, embeddings). Requests whose
 * API is unknown are in "All APIs" only. An API this console does not know (an address or a
 * saved view from a newer one) stays selected as what it is. `offered` false (a control plane
 * whose rows do not say their API, so cannot filter by it): hidden, unless the address set one.
 */
export function ApiFilter({
  value,
  onChange,
  offered = true,
}: {
  value: string | null;
  onChange: (api: string | null) => void;
  offered?: boolean;
}) {
  if (!offered && value === null) return null;
  return (
    <ChoiceSelect
      label="API"
      value={value}
      all="All APIs"
      choices={API_CHOICES}
      unknown={(api) => unknownLabel('API', api, false)}
      onChange={onChange}
      testId="filter-api"
    />
  );
}
