#!/usr/bin/env node
import { main } from './main.js';

const code = await main(process.argv.slice(2));
process.exitCode = code;
// Everything lockkit opened is closed by now; should a client library still hold the event
// loop open, do not hang the shell that ran us.
setTimeout(() => process.exit(code), 2_000).unref();
