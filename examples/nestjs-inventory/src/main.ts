import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { readConfig } from './app-config.js';

const config = readConfig(process.env);
const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
app.enableShutdownHooks(); // SIGTERM → onApplicationShutdown → the lock provider is closed
await app.listen(config.port, '127.0.0.1');
const { port } = app.getHttpServer().address() as AddressInfo;
process.stdout.write(`${JSON.stringify({ listening: port })}\n`);
