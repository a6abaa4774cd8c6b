import { useState } from 'react';

/** Copies text to the clipboard and says so; a refusal is shown, not swallowed. */
export function CopyButton({ text, label = 'Copy', testId }: { text: string; label?: string; testId?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <button type="button" onClick={copy} data-testid={testId ?? 'copy'} aria-live="polite">
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy refused: select and copy by hand' : label}
    </button>
  );
}
