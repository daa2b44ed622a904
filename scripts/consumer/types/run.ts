// Run after compiling under node16 (CommonJS output): the compiled app works on a file URL.
import { pathToFileURL } from 'node:url';
import { main } from './app.js';

main(pathToFileURL(process.argv[2] ?? '/tmp').href).then((token) => {
  if (token <= 0n) throw new Error(`bad fencing token ${token}`);
  console.log(`compiled app ok: token ${token}`);
});
