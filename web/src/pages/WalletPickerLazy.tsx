// The wallet picker, loaded on first use: wagmi, viem and the Wallet Standard are most of the
// dashboard's code, so the sign-in text renders before they arrive and pages without a wallet
// step never load them.
import { lazy, Suspense } from 'react';
import type { WalletPickerProps } from './WalletPicker.tsx';

const Picker = lazy(() => import('./WalletPicker.tsx').then((m) => ({ default: m.WalletPicker })));

export function WalletPicker(props: WalletPickerProps) {
  return (
    <Suspense fallback={<p className="muted" aria-live="polite" data-testid="wallets-loading">Looking for wallets in this browser…</p>}>
      <Picker {...props} />
    </Suspense>
  );
}
