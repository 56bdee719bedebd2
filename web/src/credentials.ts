// The names of what can make a request on the account: its API keys and the apps connected by
// OAuth (whose calls the gateway logs under the connection's id), for usage and the request log.
import { useEffect, useState } from 'react';
import { api, type ConnectionInfo, type KeyInfo } from './api.ts';

export interface Credentials {
  keys: KeyInfo[];
  /** A request's key_id as a person reads it: the key's name, or "app: <client>" for a connection. */
  nameOf: (id: string | null) => string;
}

export function useCredentials(): Credentials {
  const [keys, setKeys] = useState<KeyInfo[]>([]);
  // Until the keys have loaded a row's key is unknown, not gone: it reads "…" meanwhile.
  const [loaded, setLoaded] = useState(false);
  const [connections, setConnections] = useState<ConnectionInfo[]>([]);
  useEffect(() => {
    api<{ keys: KeyInfo[] }>('GET', '/keys').then(
      (r) => {
        setKeys(r.keys);
        setLoaded(true);
      },
      () => setLoaded(true),
    );
    // Absent when the service runs without its authorization server: then there are no connections.
    api<{ connections: ConnectionInfo[] }>('GET', '/connections').then((r) => setConnections(r.connections), () => {});
  }, []);
  const nameOf = (id: string | null) => {
    if (!id) return 'no key';
    if (!loaded) return '…';
    const key = keys.find((k) => k.id === id);
    if (key) return key.name;
    const app = connections.find((c) => c.id === id);
    if (app) return `app: ${app.client_name ?? app.client_id}`;
    return 'a key no longer listed';
  };
  return { keys, nameOf };
}
