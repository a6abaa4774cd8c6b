import { ChoiceSelect } from '../../components/filters/ChoiceSelect.js';
import { useDirectory } from '../../state/directory.js';

/**
 * The models of one provider, as the catalogue names them (a health strip opens the log on
 * one). Without a catalogue there is nothing to choose, so the filter shows only when an
 * address set it.
 */
export function ProviderFilter({
  value,
  onChange,
}: {
  value: string | null;
  onChange: (value: string | null) => void;
}) {
  const models = useDirectory((s) => s.models);
  const failed = useDirectory((s) => Boolean(s.errors.models));
  const providers = models && [...new Set(models.map((m) => m.provider))].sort();
  if (value === null && (failed || providers?.length === 0)) return null;
  return (
    <ChoiceSelect
      label="Provider"
      value={value}
      all="All providers"
      choices={providers && providers.map((provider) => ({ value: provider, label: provider }))}
      loading={models === null && !failed}
      unknown={(provider) => `${provider} (not in the catalogue)`}
      onChange={onChange}
      testId="filter-provider"
    />
  );
}
