import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, readConfig } from './app-config.js';

/** The configuration, read from the environment once, available to every module. */
@Global()
@Module({
  providers: [{ provide: APP_CONFIG, useFactory: () => readConfig(process.env) }],
  exports: [APP_CONFIG],
})
export class ConfigModule {}
