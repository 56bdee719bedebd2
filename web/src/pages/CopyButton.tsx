import { useState } from 'react';

/** Copies text to the clipboard and says so to screen readers too. */
export function CopyButton({ text, label }: { text: string; label: string }) {
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
    <>
      <button type="button" onClick={() => void copy()}>{label}</button>
      <span aria-live="polite" className="hint">{state === 'copied' ? ' Copied.' : state === 'failed' ? ' Copy failed: select the text and copy it.' : ''}</span>
    </>
  );
}
