// Paying an order from a Solana wallet through the Wallet Standard: the page builds one SPL
// `transferChecked` of exactly the order's amount of its mint, from the wallet's associated token
// account to the treasury's, on a recent blockhash the service fetched, and the wallet signs and
// sends it (`solana:signAndSendTransaction`). The signature is what the service then verifies.
import type { SolanaSignAndSendTransactionFeature } from '@solana/wallet-standard-features';
import {
  address,
  appendTransactionMessageInstruction,
  compileTransaction,
  createTransactionMessage,
  getBase58Decoder,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Blockhash,
} from '@solana/kit';
import { findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { Wallet } from '@wallet-standard/base';
import type { StandardConnectFeature } from '@wallet-standard/features';
import { api, type OrderInfo } from '../api.ts';

export function canPaySolana(wallet: Wallet): boolean {
  return wallet.chains.some((c) => c.startsWith('solana:')) && 'standard:connect' in wallet.features && 'solana:signAndSendTransaction' in wallet.features;
}

export async function payWithSolana(wallet: Wallet, order: OrderInfo): Promise<string> {
  const { accounts } = await (wallet.features as StandardConnectFeature)['standard:connect'].connect();
  const account = accounts[0];
  if (!account) throw new Error('The wallet shared no account.');
  const recent = await api<{ blockhash: string; last_valid_block_height: number }>('GET', '/payments/solana/blockhash');
  const owner = address(account.address);
  const mint = address(order.token);
  const [source] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ owner: address(order.treasury), mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const transfer = getTransferCheckedInstruction({ source, mint, destination, authority: owner, amount: BigInt(order.amount), decimals: order.decimals });
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(owner, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: recent.blockhash as Blockhash, lastValidBlockHeight: BigInt(recent.last_valid_block_height) }, m),
    (m) => appendTransactionMessageInstruction(transfer, m),
  );
  const bytes = new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)));
  const feature = (wallet.features as SolanaSignAndSendTransactionFeature)['solana:signAndSendTransaction'];
  const [sent] = await feature.signAndSendTransaction({ account, chain: 'solana:mainnet', transaction: bytes });
  if (!sent) throw new Error('The wallet sent no transaction.');
  return getBase58Decoder().decode(sent.signature);
}
