/** What a sign-in (or link) message says; a merge passes the statement the server asks both wallets to sign. */
export const SIGN_IN_STATEMENT = 'Sign in to the cryptomcp dashboard. This signature costs nothing and sends no transaction.';
