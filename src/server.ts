import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { bootstrapOwner, openAndMigrate } from './runtime.ts';

async function main() {
  const config = loadConfig();
  const database = await openAndMigrate(config);
  const token = await bootstrapOwner(config, database);
  if (token) {
    // Printed once, on the terminal that started the service; the request log never sees it.
    process.stdout.write(
      `\nReelbase created organization "Default".\nOwner token (also in ${config.dataDir}/owner-token): ${token}\n\n`,
    );
  }
  const app = await buildApp({ config, database });
  await app.listen({ host: config.host, port: config.port });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await database.destroy();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
