import type { DashboardConfig, SessionInfo } from '../api.ts';
import { WalletPicker } from './WalletPicker.tsx';

export function SignIn({ config, onSignedIn }: { config: DashboardConfig; onSignedIn: (s: SessionInfo) => void }) {
  return (
    <main className="signin" id="main">
      <h1>Sign in to cryptomcp</h1>
      <p>
        Connect a wallet and sign a message to prove it is yours. A new wallet gets an account on the free plan with 150 credits;
        signing costs nothing and sends no transaction.
      </p>
      <WalletPicker config={config} mode="sign-in" onDone={(r) => onSignedIn(r as SessionInfo)} />
    </main>
  );
}
