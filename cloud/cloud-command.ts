// `folio cloud`: runs the control plane until SIGTERM or SIGINT, then stops every core it started and
// exits 0. Prints `listening on http://HOST:PORT`, and the cloud API key the one time it is generated.

import { loadCloudConfig } from './cloud-config.js';
import { startCloud } from './cloud-service.js';

export async function cloudCommand(): Promise<void> {
  const cloud = await startCloud({ config: loadCloudConfig() });
  if (cloud.generatedApiKey) {
    process.stdout.write(`cloud API key (shown once; send it as X-svc-key): ${cloud.generatedApiKey}\n`);
  }
  process.stdout.write(`listening on ${cloud.url}\n`);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    cloud.stop().then(
      () => process.exit(0),
      (error: Error) => {
        process.stderr.write(`folio cloud: stopping failed: ${error.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
