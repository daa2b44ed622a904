import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { createLockProvider } from 'lockkit';
import { APP_CONFIG, type AppConfig } from './app-config.js';
import { ILockProvider } from './lock-provider.token.js';

/** Closes the provider (releasing what it holds) when the application shuts down. */
@Injectable()
class LockProviderShutdown implements OnApplicationShutdown {
  constructor(@Inject(ILockProvider) private readonly locks: ILockProvider) {}

  async onApplicationShutdown(): Promise<void> {
    await this.locks.close();
  }
}

/**
 * Provides {@link ILockProvider} to the whole application, created from `LOCK_URL`: the only
 * place that knows a backend exists. Swap Redis for PostgreSQL by changing the URL.
 */
@Global()
@Module({
  providers: [
    {
      provide: ILockProvider,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Promise<ILockProvider> => createLockProvider(config.lockUrl),
    },
    LockProviderShutdown,
  ],
  exports: [ILockProvider],
})
export class LockModule {}
