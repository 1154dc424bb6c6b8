import module from 'node:module';

/**
 * Process entry (`npm start`). V8's compile cache is turned on before the service's modules load
 * (Node 22.1+, `module.enableCompileCache`; the cache lives under the OS temp directory and is
 * checked against each file): a start after the first compiles none of the ~300 modules again,
 * about a third of a start's CPU (issue 37 item 5, decisions PF7). Where the cache cannot be
 * written the start simply compiles, as before.
 */
(module as unknown as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./serve.js');
